// `stagegate init DIR`: a starting point for the user's own application (a scenario mapped to it,
// a corpus skeleton of example tasks, a rubric), shaped by one probe of its endpoint.

#include <cstdlib>
#include <filesystem>

#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "init/endpoint_probe.h"
#include "init/init_files.h"
#include "init/init_writer.h"
#include "manifest/bundle.h"

namespace stagegate::cli {
using init::DescribeFindings;
using init::EndpointRoot;
using init::InitAdjustments;
using init::InitFileList;
using init::InitFiles;
using init::InitRequest;
using init::InitStageNames;
using init::ProbeEndpoint;
using init::WriteAllOrNothing;
namespace {

namespace fs = std::filesystem;

class InitCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("dir", dir_, "The folder to write into (made when missing)")->required();
    app.add_option("--target-url", target_url_,
                   "The OpenAI-compatible endpoint's base URL (http://host:port, with or "
                   "without /v1)")
        ->required()
        ->check(BaseUrlToKeep());
    app.add_option("--model", model_, "The model name to send in requests")->required();
    app.add_option("--stages", stages_,
                   "The stages to write, in order: bare, retrieval, identity, tools")
        ->delimiter(',')
        ->check(CLI::IsMember(InitStageNames()))
        ->default_str("bare");
    app.add_option("--api-key-env", api_key_env_,
                   "The environment variable holding the endpoint's bearer key (never stored)");
    app.add_flag("--no-probe", no_probe_, "Write the files without probing the endpoint");
    app.add_option("--probe-timeout-ms", probe_timeout_ms_,
                   "How long each of the probe's requests may take")
        ->capture_default_str()
        ->check(Between(100, 600'000));
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    if (Trim(model_).empty())
      return Fail(console, "init", Status::InvalidInput("--model must name a model"));
    // The scenario says what is sent: a name a terminal or an editor would show otherwise than
    // it is (a control, a bidi override, bytes that are not UTF-8) is not written into it.
    if (!IsShownAsIs(model_))
      return Fail(console, "init",
                  Status::InvalidInput("--model " + ShownText(model_) +
                                       " holds a character that does not show as itself (escaped "
                                       "here); init writes only a name that does"));
    if (!api_key_env_.empty() &&
        (api_key_env_.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_") != std::string::npos ||
         std::isdigit(static_cast<unsigned char>(api_key_env_[0]))))
      return Fail(console, "init",
                  Status::InvalidInput("--api-key-env must be a variable name, not the key"));
    InitRequest request{.target_url = target_url_, .model = model_, .api_key_env = api_key_env_};
    for (const std::string& name : InitStageNames())  // bare always, then in their order
      if (name == "bare" || std::find(stages_.begin(), stages_.end(), name) != stages_.end())
        request.stages.push_back(name);

    // Never overwrite: every file is checked before any is written.
    const std::vector<std::pair<std::string, std::string>> planned = InitFiles(request);
    std::vector<std::string> existing;
    for (const auto& [relative, text] : planned) {
      std::error_code error;
      if (fs::exists(fs::path(dir_) / relative, error)) existing.push_back(dir_ + "/" + relative);
    }
    if (!existing.empty()) {
      for (const std::string& path : existing)
        console.Error("init: " + path + " exists; init never overwrites a file");
      return ExitCode::kInvalidInput;
    }

    if (!no_probe_) {
      std::string key;
      if (!api_key_env_.empty()) {
        const char* value = std::getenv(api_key_env_.c_str());
        if (value)
          key = value;
        else
          console.Line("note: $" + api_key_env_ + " is not set; probing without a key");
      }
      console.Line("probing " + EndpointRoot(target_url_) + " ...");
      request.findings = ProbeEndpoint(target_url_, model_, key, probe_timeout_ms_);
      for (const std::string& line : DescribeFindings(*request.findings, model_))
        console.Line("  " + line);
    }

    // All or nothing: a failed write leaves no file that a second init would refuse to replace.
    // The files must load as written; anything else is a fault of init's.
    const InitFileList files = InitFiles(request);
    const auto loads = [&](const std::string& staged) {
      manifest::Diagnostics diagnostics;
      if (manifest::LoadBundle(staged + "/scenario.yaml", diagnostics)) return Status::Ok();
      console.Error(ReplaceAll(diagnostics.ToString(), staged, dir_));
      return Status::Internal("the written scenario does not validate (a bug in init)");
    };
    if (Status written = WriteAllOrNothing(dir_, files, loads); !written.ok())
      return Fail(console, "init", written);
    for (const std::string& line : InitAdjustments(request))
      console.Line("adjusted: " + line);
    const std::string scenario = (fs::path(dir_) / "scenario.yaml").string();
    console.Line("wrote " + std::to_string(files.size()) + " files into " + dir_ + ":");
    for (const auto& [relative, text] : files)
      console.Line("  " + relative);
    console.Line("next: stagegate validate " + scenario);
    console.Line("      stagegate run " + scenario + " --only-stage bare");
    console.Line("then replace the example tasks (" + dir_ + "/corpus/README.md)");
    return ExitCode::kOk;
  }

 private:
  std::string dir_, target_url_, model_, api_key_env_;
  std::vector<std::string> stages_ = {"bare"};
  bool no_probe_ = false;
  int64_t probe_timeout_ms_ = 10'000;
};

}  // namespace

std::unique_ptr<Command> MakeInitCommand() {
  return std::make_unique<InitCommand>();
}

}  // namespace stagegate::cli

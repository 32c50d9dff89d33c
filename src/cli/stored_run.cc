#include "cli/stored_run.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "report/report_files.h"
#include "scenario/run_bundle.h"

namespace stagegate::cli {

Result<OpenedRun> OpenRun(const GlobalOptions& global, const std::string& run_id) {
  Result<std::unique_ptr<store::Store>> store = store::Store::OpenExisting(global.db_path);
  if (!store.ok()) return store.status();
  Result<std::optional<store::RunInfo>> found = (*store)->FindRun(run_id);
  if (!found.ok()) return found.status();
  if (!*found) return Status::InvalidInput("no run " + run_id + " in " + global.db_path);
  return OpenedRun{std::move(*store), **found};
}

std::optional<manifest::Bundle> LoadBundleAsRunWill(const std::string& path,
                                                    console::Console& console,
                                                    scenario::InputFiles& input) {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = scenario::LoadBundleAsRunWill(path, diagnostics, input);
  if (bundle) return bundle;
  for (const manifest::Diagnostic& diagnostic : diagnostics.Sorted())
    console.Error(diagnostic.ToString());
  const size_t count = diagnostics.Count();
  console.Error(std::to_string(count) + (count == 1 ? " problem" : " problems") + " in " + path +
                " and the files it names");
  return std::nullopt;
}

Status WriteReportFiles(store::Store& store, const store::RunInfo& run,
                        const manifest::Bundle* bundle, const std::string& dir,
                        std::vector<std::string> formats, std::vector<std::string>& written,
                        console::Console& console) {
  Result<report::ReportModel> model =
      report::WriteReportFiles(store, run, *bundle, dir, std::move(formats), written);
  if (!model.ok()) return model.status();
  console.Line("verdict: " + std::string(report::Name(model->verdict)));
  for (const std::string& reason : model->verdict_reasons)
    console.Line("  " + reason);
  return Status::Ok();
}

ExitCode Fail(console::Console& console, const std::string& command, const Status& status) {
  for (const std::string& line : Split(status.message(), '\n'))
    console.Error("stagegate " + command + ": " + line);
  return status.code() == Status::Code::kInvalidInput ? ExitCode::kInvalidInput
                                                      : ExitCode::kRuntimeFailure;
}

nlohmann::json WithRunFolder(nlohmann::json settings, const std::string& out_dir) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(out_dir, error);
  settings["out_dir"] =
      (error ? std::filesystem::path(out_dir) : absolute).lexically_normal().string();
  return settings;
}

std::optional<std::string> RunFolder(const store::RunInfo& run) {
  const nlohmann::json settings = nlohmann::json::parse(run.settings_json, nullptr, false);
  if (!settings.is_object() || !settings.contains("out_dir") || !settings["out_dir"].is_string() ||
      settings["out_dir"].get<std::string>().empty())
    return std::nullopt;
  return settings["out_dir"].get<std::string>();
}

std::string ReportCommandLine(const GlobalOptions& global, const std::string& run_id) {
  return "stagegate " +
         (global.db_path == store::kDefaultStorePath ? std::string()
                                                     : "--db " + ShellWord(global.db_path) + " ") +
         "report " + run_id;
}

}  // namespace stagegate::cli

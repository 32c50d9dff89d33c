// `stagegate validate SCENARIO`: loads a scenario and everything it references, and prints either
// its summary and fingerprint or every problem found.

#include "cli/command.h"
#include "cli/stored_run.h"
#include "manifest/bundle.h"
#include "manifest/describe.h"
#include "manifest/fingerprint.h"
#include "scenario/shard_plan.h"
#include "scenario/stage_requests.h"

namespace stagegate::cli {

namespace {

class ValidateCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("scenario", scenario_, "The scenario file")->required();
    app.add_flag("--json", json_, "Print the canonical scenario and fingerprint as JSON instead");
    app.add_option("--shards", shards_,
                   "Check too that it can run in N shards (run --shard I/N): a fixed plan")
        ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    scenario::InputFiles input;
    std::optional<manifest::Bundle> bundle = LoadBundleAsRunWill(scenario_, console, input);
    if (!bundle) return ExitCode::kInvalidInput;
    if (shards_ > 1) {
      const std::vector<std::string> problems = scenario::ShardProblems(*bundle, shards_);
      for (const std::string& problem : problems)
        console.Error(problem);
      if (!problems.empty()) return ExitCode::kInvalidInput;
    }
    manifest::Fingerprint fingerprint = manifest::ComputeFingerprint(*bundle);
    const std::vector<std::string> notes = manifest::UndecidedConditions(*bundle);
    if (json_) {
      nlohmann::json out = {{"fingerprint", fingerprint.value},
                            {"corpus_sha256", fingerprint.corpus_sha},
                            {"rubric_sha256", fingerprint.rubric_sha},
                            {"scenario", manifest::CanonicalScenario(*bundle)},
                            {"notes", notes}};
      console.Line(out.dump(2));
    } else {
      for (const std::string& line : manifest::DescribeScenario(*bundle, fingerprint))
        console.Line(line);
      if (input.tokenizer) console.Line("tokenizer    " + input.tokenizer->Describe());
      if (input.dataset)
        console.Line("dataset      " + input.dataset->Describe(
                                           scenario::InputDatasetOptions(bundle->scenario.input)));
      for (const std::string& note : notes)
        console.Line("note         " + note);
    }
    return ExitCode::kOk;  // a note is not a problem
  }

 private:
  std::string scenario_;
  bool json_ = false;
  int64_t shards_ = 1;
};

}  // namespace

std::unique_ptr<Command> MakeValidateCommand() {
  return std::make_unique<ValidateCommand>();
}

}  // namespace stagegate::cli

// `stagegate export`, `import` and `quality`: answers out to independent reviewers, their scores
// back in, and the quality summary (condition 2) built from them.

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "manifest/bundle.h"
#include "manifest/fingerprint.h"
#include "quality/summary.h"
#include "report/task_rules_report.h"
#include "review/export.h"
#include "review/import.h"
#include "review/judge.h"
#include "scenario/run_bundle.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

class ExportCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run whose sampled answers go to review")->required();
    app.add_option("--reviewers", options_.reviewers, "How many reviewers")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--per-item", options_.per_item, "How many reviewers score each answer")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--calibration", options_.calibration,
                   "Answers every reviewer scores (to compare reviewers)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber)
        ->check(Between(0, 100000));
    app.add_flag("--with-reference", options_.with_reference,
                 "Show reviewers the corpus's reference answers");
    app.add_option("--out", options_.out_dir, "Folder for the packets (default reviews/<run>)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "export", opened.status());
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
    if (!bundle) return Fail(console, "export", Status::InvalidInput(problem));
    if (options_.out_dir.empty()) options_.out_dir = "reviews/" + run_id_;
    Result<review::ExportResult> exported =
        review::ExportForReview(*opened->store, opened->run, *bundle, options_);
    if (!exported.ok()) return Fail(console, "export", exported.status());
    std::vector<std::string> counts;
    for (size_t r = 0; r < exported->items_per_reviewer.size(); ++r)
      counts.push_back(review::ReviewerName(static_cast<int>(r)) + " " +
                       std::to_string(exported->items_per_reviewer[r]));
    console.Line("export " + exported->export_id + ": " + std::to_string(exported->answers) +
                 " answers, items per reviewer: " + Join(counts, ", "));
    console.Line("wrote " + std::to_string(exported->files.size()) +
                 " files; hand out each "
                 "reviewer's own (see README.txt)");
    console.Line(options_.out_dir);
    return ExitCode::kOk;
  }

 private:
  std::string run_id_;
  review::ExportOptions options_;
};

class ImportCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run the scores are for")->required();
    app.add_option("files", files_,
                   "Scores: the reviewer page's download, or a filled-in .jsonl or .csv packet")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_flag("--replace", options_.replace,
                 "Let a changed score replace the one stored for the same item and reviewer");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "import", opened.status());
    Result<review::ImportResult> imported =
        review::ImportScores(*opened->store, run_id_, files_, options_);
    if (!imported.ok()) return Fail(console, "import", imported.status());
    if (!imported->errors.empty()) {
      for (const std::string& error : imported->errors)
        console.Error(error);
      console.Error(std::to_string(imported->errors.size()) +
                    (imported->errors.size() == 1 ? " problem" : " problems") +
                    "; nothing was imported");
      return ExitCode::kInvalidInput;
    }
    console.Line("imported " + std::to_string(imported->items) +
                 " scored items: " + std::to_string(imported->added) + " scores added, " +
                 std::to_string(imported->replaced) + " replaced, " +
                 std::to_string(imported->unchanged) + " unchanged");
    if (imported->usability_added + imported->usability_replaced + imported->usability_unchanged)
      console.Line("usability judgements: " + std::to_string(imported->usability_added) +
                   " added, " + std::to_string(imported->usability_replaced) + " replaced, " +
                   std::to_string(imported->usability_unchanged) + " unchanged");
    return ExitCode::kOk;
  }

 private:
  std::string run_id_;
  std::vector<std::string> files_;
  review::ImportOptions options_;
};

class JudgeCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run whose sampled answers the judge scores")->required();
    app.add_option("--url", options_.base_url,
                   "The judge's OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1)")
        ->required()
        ->check(HttpUrl());
    app.add_option("--model", options_.model, "The judge's model")->required();
    app.add_option("--api-key-env", options_.api_key_env,
                   "The environment variable holding its API key (never stored)");
    app.add_option("--concurrency", options_.concurrency, "Requests to the judge at a time")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_flag("--with-reference", options_.with_reference,
                 "Give the judge the corpus's reference answers");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "judge", opened.status());
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
    if (!bundle) return Fail(console, "judge", Status::InvalidInput(problem));
    std::atomic<bool> stop{false};
    StopOnSignal stop_on_signal(stop);
    Result<review::JudgeResult> judged =
        review::JudgeAnswers(*opened->store, opened->run, *bundle, options_, stop);
    if (!judged.ok()) return Fail(console, "judge", judged.status());
    for (const std::string& failure : judged->failures)
      console.Error(failure);
    console.Line("judge " + options_.model + " scored " + std::to_string(judged->scored) + " of " +
                 std::to_string(judged->answers) + " answers (" + judged->export_id +
                 "); its scores are shown apart from the reviewers' by `stagegate quality`");
    if (stop.load()) return ExitCode::kInterrupted;
    return judged->failures.empty() ? ExitCode::kOk : ExitCode::kRuntimeFailure;
  }

 private:
  std::string run_id_;
  review::JudgeOptions options_;
};

class QualityCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run")->required();
    app.add_flag("--json", json_, "Print the summary as JSON");
    app.add_flag("--gate", gate_,
                 "Exit 0 when quality passes, 1 when it fails, 4 when pending (for CI pipelines)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "quality", opened.status());
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
    Result<quality::QualitySummary> summary =
        quality::SummarizeQuality(*opened->store, opened->run, bundle ? &*bundle : nullptr);
    if (!summary.ok()) return Fail(console, "quality", summary.status());
    // The per-task rules, as the report applies them.
    report::ReportModel tasks{.run = opened->run, .quality = *summary};
    const Status rules = report::AddTaskRules(*opened->store, bundle ? &*bundle : nullptr, tasks);
    if (!rules.ok()) return Fail(console, "quality", rules);
    if (json_) {
      json out = quality::QualityToJson(*summary);
      // Only with a rule, so that the summary of other runs stays as it was.
      if (tasks.task_rules.required_rule || tasks.task_rules.regression_rule)
        out["task_rules"] = report::TaskRulesJson(tasks);
      console.Line(out.dump(2, ' ', false, json::error_handler_t::replace));
    } else {
      for (const std::string& line : quality::QualityLines(*summary))
        console.Line(line);
      for (const std::string& line : report::TaskRulesLines(tasks))
        console.Line(line);
    }
    if (!gate_) return ExitCode::kOk;
    if (summary->verdict == quality::QualityVerdict::kFail || !tasks.task_rules.findings.empty())
      return ExitCode::kGateFailed;
    return summary->verdict == quality::QualityVerdict::kPass && tasks.task_rules.pending.empty()
               ? ExitCode::kOk
               : ExitCode::kPending;
  }

 private:
  std::string run_id_;
  bool json_ = false;
  bool gate_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeExportCommand() {
  return std::make_unique<ExportCommand>();
}
std::unique_ptr<Command> MakeImportCommand() {
  return std::make_unique<ImportCommand>();
}
std::unique_ptr<Command> MakeJudgeCommand() {
  return std::make_unique<JudgeCommand>();
}
std::unique_ptr<Command> MakeQualityCommand() {
  return std::make_unique<QualityCommand>();
}

}  // namespace stagegate::cli

// `stagegate report RUN` (the three-condition release report, from the store alone) and
// `stagegate runs` (the runs in the store, with their verdicts).

#include <filesystem>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "console/console.h"
#include "report/compare_runs.h"
#include "report/model.h"
#include "report/report_files.h"
#include "scenario/run_bundle.h"

namespace stagegate::cli {
namespace {

std::string UtcTime(int64_t unix_ms) {
  return FormatUtc(unix_ms / 1000, "%Y-%m-%d %H:%M:%SZ");
}

class ReportCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run to report on")->required();
    app.add_option("--out", out_dir_,
                   "Folder for the report files (default: the folder the run wrote its files "
                   "to, or reports/<run> for a run that did not keep it)");
    app.add_option("--format", formats_,
                   "Formats to write, any of md, html, json, junit, csv (default all)")
        ->delimiter(',')
        ->check(CLI::IsMember({"md", "html", "json", "junit", "csv"}));
    app.add_flag("--gate", gate_,
                 "Exit 0 when ready, 1 when not ready, 4 when pending (for CI pipelines)");
    app.add_option("--baseline", baseline_,
                   "A run to compare with (an existing service, or the previous release)");
    app.add_flag("--allow-incomparable", allow_incomparable_,
                 "Compare with a baseline whose workload differs (model, hardware, sampling, "
                 "corpus, rubric, target, input, load, stages or thresholds; the report then "
                 "says so at the top)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "report", opened.status());
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
    Result<report::ReportModel> model =
        report::BuildRunReport(*opened->store, opened->run, bundle ? &*bundle : nullptr, problem);
    if (!model.ok()) return Fail(console, "report", model.status());
    if (!bundle)
      model->notes.push_back("automated checks not run: " +
                             (opened->run.is_profile()
                                  ? std::string("a profile run keeps no scenario or corpus to "
                                                "check its answers against")
                                  : problem));
    if (!baseline_.empty()) {
      Result<std::optional<store::RunInfo>> found = opened->store->FindRun(baseline_);
      if (!found.ok()) return Fail(console, "report", found.status());
      if (!*found)
        return Fail(console, "report",
                    Status::InvalidInput("--baseline: no run " + baseline_ + " in the store"));
      Result<report::ReportModel> base = report::BuildReport(*opened->store, **found, nullptr);
      if (!base.ok()) return Fail(console, "report", base.status());
      const report::RunComparison comparison =
          report::CompareRuns(*model, *base, allow_incomparable_);
      model->baseline = report::ComparisonJson(comparison);
      model->baseline_lines = report::ComparisonLines(comparison);
      model->incomparable_baseline = !comparison.comparable && allow_incomparable_;
    }
    // By default the report goes beside the run's own files, wherever the run wrote them.
    const std::string usual = "reports/" + run_id_;
    const std::optional<std::string> folder = RunFolder(opened->run);
    const bool elsewhere = folder && std::filesystem::path(*folder) !=
                                         std::filesystem::absolute(usual).lexically_normal();
    const std::string dir = !out_dir_.empty() ? out_dir_ : elsewhere ? *folder : usual;
    std::error_code made;
    std::filesystem::create_directories(dir, made);
    if (made) return Fail(console, "report", Status::IoError(dir + ": " + made.message()));
    std::vector<std::string> written;
    if (Status status = report::WriteReportFormats(*model, dir, formats_, written); !status.ok())
      return Fail(console, "report", status);
    // The dashboard beside the reports, when the report went where reports go.
    if (dir == usual)
      if (Status status = report::WriteDashboard(*opened->store, "reports"); !status.ok())
        return Fail(console, "report", status);
    console.Line("verdict: " + std::string(report::Name(model->verdict)));
    for (const std::string& reason : model->verdict_reasons)
      console.Line("  " + reason);
    for (const std::string& line : model->baseline_lines)
      console.Line(line);
    for (const std::string& path : written)
      console.Line(path);
    if (!gate_) return ExitCode::kOk;
    return model->verdict == report::Verdict::kReady     ? ExitCode::kOk
           : model->verdict == report::Verdict::kPending ? ExitCode::kPending
                                                         : ExitCode::kGateFailed;
  }

 private:
  std::string run_id_;
  std::string out_dir_;
  std::vector<std::string> formats_;
  bool gate_ = false;
  std::string baseline_;
  bool allow_incomparable_ = false;
};

class CompareCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run to judge")->required();
    app.add_option("baseline", baseline_id_, "The run to compare it with")->required();
    app.add_flag("--allow-incomparable", allow_incomparable_,
                 "Compare even when the workloads differ (model, hardware, sampling, corpus, "
                 "rubric, target, input, load, stages or thresholds)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    Result<OpenedRun> current = OpenRun(global, run_id_);
    if (!current.ok()) return Fail(console, "compare", current.status());
    Result<std::optional<store::RunInfo>> found = current->store->FindRun(baseline_id_);
    if (!found.ok()) return Fail(console, "compare", found.status());
    if (!*found)
      return Fail(console, "compare",
                  Status::InvalidInput("no run " + baseline_id_ + " in " + global.db_path));
    Result<report::ReportModel> now = report::BuildReport(*current->store, current->run, nullptr);
    if (!now.ok()) return Fail(console, "compare", now.status());
    Result<report::ReportModel> then = report::BuildReport(*current->store, **found, nullptr);
    if (!then.ok()) return Fail(console, "compare", then.status());
    const report::RunComparison comparison = report::CompareRuns(*now, *then, allow_incomparable_);
    for (const std::string& line : report::ComparisonLines(comparison))
      console.Line(line);
    if (!comparison.comparable && !allow_incomparable_) return ExitCode::kInvalidInput;
    switch (comparison.verdict) {
      case report::ComparisonVerdict::kRegression:
        return ExitCode::kGateFailed;
      case report::ComparisonVerdict::kNothingCompared:
        return ExitCode::kPending;
      case report::ComparisonVerdict::kRefused:
        return ExitCode::kInvalidInput;
      case report::ComparisonVerdict::kNoRegression:
        break;
    }
    return ExitCode::kOk;
  }

 private:
  std::string run_id_, baseline_id_;
  bool allow_incomparable_ = false;
};

class RunsCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("--html", html_dir_,
                   "Also write the dashboard of every run to DIR/index.html, linking each run's "
                   "DIR/<run>/report.html")
        ->expected(0, 1)
        ->default_str("reports");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    std::error_code missing;
    if (!std::filesystem::exists(global.db_path, missing)) {
      console.Line("no runs: no store at " + global.db_path +
                   " (a run makes one; --db names another)");
      return ExitCode::kOk;
    }
    Result<std::unique_ptr<store::Store>> store = store::Store::OpenExisting(global.db_path);
    if (!store.ok()) return Fail(console, "runs", store.status());
    Result<std::vector<store::RunInfo>> runs = (*store)->ListRuns();
    if (!runs.ok()) return Fail(console, "runs", runs.status());
    std::vector<std::vector<std::string>> rows;
    for (const store::RunInfo& run : *runs) {
      Result<report::ReportModel> model = report::BuildReport(**store, run, nullptr, false);
      rows.push_back({run.id, run.scenario_name, UtcTime(run.started_unix_ms),
                      std::string(store::RunStatusName(run.status)),
                      model.ok() ? std::string(report::Name(model->verdict))
                                 : "? (" + model.status().message() + ")"});
    }
    if (!html_dir_.empty()) {
      if (Status status = report::WriteDashboard(**store, html_dir_); !status.ok())
        return Fail(console, "runs", status);
    }
    if (runs->empty()) {
      console.Line("no runs in " + global.db_path);
      return ExitCode::kOk;
    }
    for (const std::string& line :
         console::FormatTable({"run", "scenario", "started (UTC)", "status", "verdict"}, rows))
      console.Line(line);
    if (!html_dir_.empty()) console.Line(html_dir_ + "/index.html");
    return ExitCode::kOk;
  }

 private:
  std::string html_dir_;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() {
  return std::make_unique<ReportCommand>();
}
std::unique_ptr<Command> MakeCompareCommand() {
  return std::make_unique<CompareCommand>();
}
std::unique_ptr<Command> MakeRunsCommand() {
  return std::make_unique<RunsCommand>();
}

}  // namespace stagegate::cli

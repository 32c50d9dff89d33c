// `stagegate profile`: one endpoint, no scenario file. Its options become a scenario of one
// stage (scenario::PlanProfile), run by the scenario runner as any run is; this prints its
// levels as a table with each one's self-check, and writes profile.json, profile.csv,
// requests.jsonl and the AIPerf exports (scenario::WriteProfile).

#include <atomic>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/profile_options.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "manifest/fingerprint.h"
#include "report/server_series.h"
#include "scenario/profile_plan.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

void PrintWritten(console::Console& console, const std::string& out_dir, const std::string& db_path,
                  bool telemetry, size_t aiperf_dirs) {
  console.Line("wrote " + out_dir + "/profile.json, " + out_dir + "/profile.csv, " + out_dir +
               "/requests.jsonl" + (telemetry ? ", " + out_dir + "/server_metrics.csv" : "") +
               "; store " + db_path);
  if (aiperf_dirs > 0)
    console.Line("AIPerf-compatible export: " +
                 (aiperf_dirs == 1 ? out_dir + "/profile_export_aiperf.json and .csv"
                                   : out_dir + "/aiperf/*/profile_export_aiperf.json and .csv"));
}

// The server's series over each level's window, as the report reads them; none without
// telemetry.
Result<std::vector<scenario::LevelSeries>> SeriesOf(store::Store& store, const std::string& run_id,
                                                    const scenario::ProfileRun& run,
                                                    bool telemetry) {
  std::vector<scenario::LevelSeries> series;
  for (const scenario::ProfileLevel& level : run.levels) {
    if (!telemetry) break;
    Result<scenario::LevelSeries> read =
        report::ReadServerSeries(store, run_id, level.started_ns, level.ended_ns);
    if (!read.ok()) return read.status();
    series.push_back(std::move(*read));
  }
  return series;
}

class ProfileCommand : public Command {
 public:
  void Configure(CLI::App& app) override { AddProfileOptions(app, request_); }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override;

 private:
  scenario::ProfileRequest request_;
};

ExitCode ProfileCommand::Run(const GlobalOptions& global, console::Console& console) {
  const auto fail = [&console](const Status& status, ExitCode code) {
    for (const std::string& line : Split(status.message(), '\n'))
      console.Error("stagegate profile: " + line);
    return code;
  };
  Result<scenario::ProfilePlan> plan = scenario::PlanProfile(std::move(request_));
  if (!plan.ok()) return fail(plan.status(), ExitCode::kInvalidInput);
  if (plan->input.dataset)
    console.Line("input: " + plan->input.dataset->Describe(plan->dataset_options()));
  const std::string run_id = NewRunId("profile");
  const std::string out_dir =
      plan->request.out_dir.empty() ? "reports/" + run_id : plan->request.out_dir;
  const std::string db_path = global.db_path.empty() ? store::kDefaultStorePath : global.db_path;
  // The outputs are written after every level has run: a folder they cannot go to is found now.
  if (Status writable = CheckWritableDirectory(out_dir); !writable.ok())
    return fail(writable.WithContext("--out"), ExitCode::kRuntimeFailure);
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(db_path);
  if (!store.ok()) return fail(store.status(), ExitCode::kRuntimeFailure);
  if ((*store)->read_only())
    return fail(Status::StoreError(db_path + ": cannot write there (read-only)"),
                ExitCode::kRuntimeFailure);
  load::RaiseOpenFileLimit();

  std::atomic<bool> stop{false};
  StopOnSignal stop_on_signal(stop);
  // A test's seam: its fake clock and scripted application instead of the steady clock and curl.
  scenario::Runner runner(plan->bundle, scenario::ProfileSettings(*plan), **store, console, stop,
                          global.seam ? *global.seam : scenario::RunSeam());
  const bool tokenizer = plan->input.tokenizer != nullptr;
  runner.UseInputFiles(std::move(plan->input));
  const json& config = plan->config;
  const auto create_run = [&] {
    return (*store)->CreateRun(
        {.id = run_id,
         .scenario_name = store::RunInfo::kProfileRunName,
         .fingerprint = manifest::ProfileFingerprint(config),
         .scenario_json = config.dump(-1, ' ', false, json::error_handler_t::replace),
         .settings_json = WithRunFolder(json::object(), out_dir).dump(),
         .started_unix_ms = WallUnixMs()});
  };
  Result<scenario::RunReport> report = runner.Run(run_id, create_run);
  if (!report.ok())
    return fail(report.status(), report.status().code() == Status::Code::kInvalidInput
                                     ? ExitCode::kInvalidInput
                                     : ExitCode::kRuntimeFailure);
  const scenario::ProfileRun run = scenario::ProfileRunOf(*report, runner, tokenizer);
  for (const std::string& note : report->notes)
    console.Line("note: " + note);
  for (const std::string& line : scenario::ProfileLines(*plan, run))
    console.Line(line);
  Result<std::vector<scenario::LevelSeries>> series =
      SeriesOf(**store, run_id, run, !report->telemetry.empty());
  Result<std::vector<std::string>> aiperf =
      series.ok()
          ? scenario::WriteProfile(*plan, run, out_dir, run_id, *report, *series, runner, **store)
          : series.status();
  if (!aiperf.ok()) return fail(aiperf.status(), ExitCode::kRuntimeFailure);
  console.Line("run " + run_id + (run.interrupted ? " (interrupted)" : ""));
  PrintWritten(console, out_dir, db_path, !report->telemetry.empty(), aiperf->size());
  if (run.interrupted) return ExitCode::kInterrupted;
  return scenario::ProfileExit(*plan, run);
}

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() {
  return std::make_unique<ProfileCommand>();
}

}  // namespace stagegate::cli

// `stagegate run SCENARIO`: runs a scenario's stages and load phases against its target (by
// default the built-in reference application), and writes run.json, requests.jsonl, stages.csv
// and the store.

#include <atomic>
#include <cmath>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "load/engine.h"
#include "manifest/bundle.h"
#include "manifest/fingerprint.h"
#include "scenario/run_files.h"
#include "scenario/runner.h"
#include "scenario/shard_plan.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

// Prints `status` line by line as "stagegate run: ..." and returns `code`.
ExitCode Failed(console::Console& console, const Status& status, ExitCode code) {
  for (const std::string& line : Split(status.message(), '\n'))
    console.Error("stagegate run: " + line);
  return code;
}

class RunCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("scenario", scenario_, "The scenario file (not with --resume)")
        ->type_name("FILE");
    app.add_option("--resume", resume_id_,
                   "Continue an interrupted run with the phases it did not complete")
        ->type_name("RUN_ID");
    app.add_option("--target-url", settings_.target_url,
                   "Send to this base URL (http://host:port) instead of the scenario's target")
        ->check(HttpUrl());
    app.add_option("--model", settings_.model, "Model name sent in requests");
    app.add_option("--only-stage", settings_.only_stage, "Run this stage alone");
    app.add_option("--seed", seed_, "Seed of the schedules, instead of the scenario's")
        ->check(Between(0, kMaxSeed));
    app.add_option("--workers", settings_.workers,
                   "Worker threads of the load engine (0: one per hardware thread)")
        ->capture_default_str()
        ->check(Between(0, 1024));
    app.add_option("--max-response-memory", response_memory_mib_,
                   "MiB the responses in flight may keep between them; a response past it is cut "
                   "(outcome memory_limit). 0: no limit")
        ->capture_default_str()
        ->check(Between(0, 1 << 20));
    app.add_option("--out", out_dir_, "Where the files go (default reports/<run id>)");
    app.add_option("--shard", shard_text_,
                   "Send slice I of N of every load step, at its planned offset (I/N, or job/N "
                   "for JOB_COMPLETION_INDEX + 1); `merge` joins the shards")
        ->type_name("I/N");
    app.add_option("--start-at", start_at_text_,
                   "Begin the plan at this instant, the same in every shard (RFC 3339 or Unix ms)")
        ->type_name("TIME");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    if (Status options = CheckOptions(); !options.ok())
      return Failed(console, options, ExitCode::kInvalidInput);
    Result<std::unique_ptr<store::Store>> store = store::Store::Open(global.db_path);
    if (!store.ok()) return Failed(console, store.status(), ExitCode::kRuntimeFailure);
    if ((*store)->read_only())
      return Failed(console,
                    Status::StoreError(global.db_path + ": cannot write there (read-only)"),
                    ExitCode::kRuntimeFailure);

    PlannedRun plan;
    if (!resume_id_.empty()) {
      Result<std::optional<store::RunInfo>> found = (*store)->FindRun(resume_id_);
      if (!found.ok()) return Failed(console, found.status(), ExitCode::kRuntimeFailure);
      if (Status taken = TakeResumedSettings(*found, global.db_path); !taken.ok())
        return Failed(console, taken, ExitCode::kInvalidInput);
      plan.resumed = **found;
    }

    manifest::Diagnostics diagnostics;
    std::optional<manifest::Bundle> bundle = manifest::LoadBundle(scenario_, diagnostics);
    if (!bundle) {
      for (const manifest::Diagnostic& d : diagnostics.Sorted())
        console.Error(d.ToString());
      return ExitCode::kInvalidInput;
    }
    if (settings_.shard.count > 1) {
      const std::vector<std::string> problems =
          scenario::ShardProblems(*bundle, settings_.shard.count);
      for (const std::string& problem : problems)
        console.Error(problem);
      if (!problems.empty()) return ExitCode::kInvalidInput;
    }
    if (seed_) settings_.seed = static_cast<uint64_t>(*seed_);
    settings_.response_memory_bytes = ResponseMemoryBytes();
    plan.fingerprint = manifest::ComputeFingerprint(*bundle).value;
    plan.bundle = std::move(*bundle);
    const std::optional<store::RunInfo>& resumed = plan.resumed;
    if (resumed && resumed->fingerprint != plan.fingerprint)
      return Failed(console,
                    Status::InvalidInput(
                        scenario_ + " (or its corpus or rubric) changed since run " + resume_id_ +
                        " began: a resumed run must measure the same configuration"),
                    ExitCode::kInvalidInput);
    plan.run_id = resumed ? resumed->id : NewRunId("run");
    // A resumed run writes where it first did, unless told otherwise.
    plan.out_dir = out_dir_.empty() ? "reports/" + plan.run_id : out_dir_;
    if (resumed && out_dir_.empty()) plan.out_dir = RunFolder(*resumed).value_or(plan.out_dir);
    // The files are written after every stage has run: a folder they cannot go to is found now.
    if (Status writable = CheckWritableDirectory(plan.out_dir); !writable.ok())
      return Failed(console, writable.WithContext("--out"), ExitCode::kRuntimeFailure);
    return RunPlanned(global, console, **store, plan);
  }

 private:
  // A run about to start: the scenario it measures, the run it continues, where its files go.
  struct PlannedRun {
    manifest::Bundle bundle;
    std::string fingerprint;
    std::optional<store::RunInfo> resumed;  // the run --resume continues
    std::string run_id;
    std::string out_dir;
  };

  // The options that do not go together, or hold no value a run can take; --shard and
  // --start-at read into the settings.
  Status CheckOptions() {
    if (!(response_memory_mib_ >= 0) || !std::isfinite(response_memory_mib_))
      return Status::InvalidInput("--max-response-memory must be 0 (no limit) or more MiB");
    if (scenario_.empty() == resume_id_.empty())
      return Status::InvalidInput("give a scenario file, or --resume RUN_ID");
    if (!shard_text_.empty()) {
      Result<load::Shard> shard = scenario::ShardOption(shard_text_);
      if (!shard.ok()) return shard.status();
      settings_.shard = *shard;
    }
    if (!start_at_text_.empty()) {
      Result<int64_t> start_at = scenario::StartAtOption(start_at_text_);
      if (!start_at.ok()) return start_at.status();
      settings_.start_at_unix_ms = *start_at;
    }
    if (!resume_id_.empty() && (settings_.shard.count > 1 || settings_.start_at_unix_ms))
      return Status::InvalidInput(
          "a shard is not resumed: its slots of the shared plan have passed; run it again with "
          "the same --start-at");
    if (!resume_id_.empty() && (seed_ || !settings_.model.empty() || !settings_.only_stage.empty()))
      return Status::InvalidInput(
          "--resume continues with the run's own settings: give no --seed, --model or "
          "--only-stage");
    return Status::Ok();
  }

  // The scenario file and settings of the run --resume continues (`found` in the store at
  // `db_path`): only --workers may change, and --target-url may give the URL's credentials again.
  Status TakeResumedSettings(const std::optional<store::RunInfo>& found,
                             const std::string& db_path) {
    if (!found) return Status::InvalidInput("no run " + resume_id_ + " in " + db_path);
    if (found->status == store::RunStatus::kComplete)
      return Status::InvalidInput("run " + resume_id_ + " is complete: nothing to resume");
    const nlohmann::json stored_settings =
        nlohmann::json::parse(found->settings_json, nullptr, /*allow_exceptions=*/false);
    if (stored_settings.is_object() && stored_settings.contains("merged_from"))
      return Status::InvalidInput("run " + resume_id_ +
                                  " is a merge of shards, not a run to resume: give the same "
                                  "`stagegate merge` again, which replaces a merge that did not "
                                  "finish");
    scenario_ = found->scenario_file;
    const int workers = settings_.workers;  // the one setting a resume may change
    const std::string given_url = settings_.target_url;
    settings_ = scenario::SettingsFromJson(stored_settings);
    if (workers != 0) settings_.workers = workers;
    // The run's URL is stored without its credentials: --target-url may give them again, for
    // the same URL only.
    if (!given_url.empty()) {
      if (UrlWithoutUserinfo(given_url) != settings_.target_url)
        return Status::InvalidInput(
            "--resume continues with the run's own target: --target-url may only add credentials "
            "to " +
            (settings_.target_url.empty()
                 ? std::string("the scenario's target, which it does not name")
                 : settings_.target_url));
      settings_.target_url = given_url;
    }
    return Status::Ok();
  }

  // Runs the plan's stages into `store`; the run is created (or marked resumed) once the runner's
  // plan holds, so a scenario that cannot run leaves no trace.
  ExitCode RunPlanned(const GlobalOptions& global, console::Console& console, store::Store& store,
                      const PlannedRun& plan) {
    load::RaiseOpenFileLimit();
    std::atomic<bool> stop{false};
    StopOnSignal stop_on_signal(stop);
    scenario::Runner runner(plan.bundle, settings_, store, console, stop,
                            global.seam ? *global.seam : scenario::RunSeam());
    const std::string& run_id = plan.run_id;
    scenario::ResumeFrom stored;
    if (plan.resumed) {
      Result<std::vector<store::PhaseInfo>> phases = store.ListPhases(run_id);
      if (!phases.ok()) return Failed(console, phases.status(), ExitCode::kRuntimeFailure);
      Result<std::vector<load::RequestRecord>> records = store.ListRequests(run_id);
      if (!records.ok()) return Failed(console, records.status(), ExitCode::kRuntimeFailure);
      stored = {.phases = std::move(*phases), .records = std::move(*records)};
    }
    Status created = Status::Ok();
    Result<scenario::RunReport> report = runner.Run(
        run_id,
        [&] {
          if (plan.resumed)
            return created = store.SetRunStatus(run_id, store::RunStatus::kResumed, std::nullopt);
          return created = store.CreateRun(
                     {.id = run_id,
                      .scenario_name = plan.bundle.scenario.name,
                      .scenario_file = std::filesystem::absolute(scenario_).string(),
                      .fingerprint = plan.fingerprint,
                      .corpus_version = plan.bundle.corpus ? plan.bundle.corpus->version : "",
                      .scenario_json =
                          manifest::CanonicalScenario(plan.bundle)
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      .settings_json =
                          WithRunFolder(scenario::SettingsToJson(settings_), plan.out_dir)
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      .started_unix_ms = WallUnixMs()});
        },
        plan.resumed ? &stored : nullptr);
    if (!report.ok()) {
      const bool bad_input = report.status().code() == Status::Code::kInvalidInput;
      if (created.ok() && !bad_input)
        (void)store.SetRunStatus(run_id, store::RunStatus::kFailed, WallUnixMs());
      return Failed(console, report.status(),
                    bad_input ? ExitCode::kInvalidInput : ExitCode::kRuntimeFailure);
    }
    return Finish(global, console, store, plan, *report, runner);
  }

  // The end of a run that ran: its summary, its files, its status in the store, what to do next.
  ExitCode Finish(const GlobalOptions& global, console::Console& console, store::Store& store,
                  const PlannedRun& plan, const scenario::RunReport& report,
                  const scenario::Runner& runner) {
    const std::string& run_id = plan.run_id;
    const std::string& out_dir = plan.out_dir;
    for (const std::string& line : scenario::SummaryLines(report))
      console.Line(line);
    if (Status written =
            scenario::WriteRunFiles(out_dir, plan.bundle, plan.fingerprint, report, runner, store);
        !written.ok())
      return Failed(console, written, ExitCode::kRuntimeFailure);
    if (Status marked = store.SetRunStatus(
            run_id,
            report.interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
            WallUnixMs());
        !marked.ok())
      return Failed(console, marked, ExitCode::kRuntimeFailure);
    console.Line("run " + run_id + (report.interrupted ? " (interrupted)" : ""));
    console.Line("wrote " + out_dir + "/run.json, " + out_dir + "/stages.csv, " + out_dir +
                 "/requests.jsonl, " + out_dir +
                 "/aiperf/*/profile_export_aiperf.json (AIPerf's layout); store " + global.db_path);
    console.Line("next: " + ReportCommandLine(global, run_id) + " (writes " + out_dir +
                 "/report.html)");
    console.Line(out_dir + "/run.json");
    return report.interrupted ? ExitCode::kInterrupted : ExitCode::kOk;
  }

  int64_t ResponseMemoryBytes() const {
    return static_cast<int64_t>(std::ceil(response_memory_mib_ * (1 << 20)));
  }

  std::string scenario_;
  double response_memory_mib_ = load::ResponseBudget::kDefaultLimitBytes >> 20;
  std::string out_dir_;
  std::optional<int64_t> seed_;
  std::string resume_id_;
  std::string shard_text_, start_at_text_;
  scenario::RunSettings settings_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() {
  return std::make_unique<RunCommand>();
}

}  // namespace stagegate::cli

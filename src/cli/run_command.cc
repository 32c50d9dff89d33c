// `stagegate run SCENARIO`: runs a scenario's stages and load phases against its target (by
// default the built-in reference application), and writes run.json, requests.jsonl, stages.csv
// and the store.

#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/run_files.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "load/aiperf_export.h"
#include "load/engine.h"
#include "load/record_json.h"
#include "manifest/bundle.h"
#include "manifest/fingerprint.h"
#include "scenario/runner.h"
#include "scenario/shard_plan.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

// Each load phase's AIPerf-compatible export, in out_dir/aiperf/<stage>-<phase>[-<level>]: the
// records of one step, as AIPerf keeps a directory per benchmark.
Status WriteRunAiperf(const std::string& out_dir, const manifest::Bundle& bundle,
                      const scenario::RunReport& report, const scenario::Runner& runner) {
  const manifest::Target& target = bundle.scenario.target;
  const nlohmann::json endpoint = {
      {"model_names", {target.model}},
      {"type", target.endpoint == manifest::Endpoint::kChat ? "chat" : "completions"},
      {"streaming", target.stream},
      {"url", target.base_url.empty() ? "stagegate sim" : UrlWithoutUserinfo(target.base_url)}};
  const std::span<const load::RequestRecord> records = runner.records();
  const int64_t wall_origin_ns = WallNsAtSteady(runner.origin_ns());
  for (const scenario::StageResult& stage : report.stages) {
    for (const scenario::StepResult& step : stage.steps) {
      if (step.step.kind == manifest::PhaseKind::kWarmup || !step.step.label.empty()) continue;
      const std::string phase = manifest::NameOf(step.step.kind, manifest::kPhaseNames);
      std::string name = stage.name + "-" + phase;
      if (step.step.kind == manifest::PhaseKind::kSweep && step.step.level)
        name += "-" + FormatNumber(*step.step.level, 3);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
      nlohmann::json loadgen = {{"request_count", step.metrics.offered}};
      if (step.step.level)
        loadgen[step.step.closed_loop ? "concurrency" : "request_rate"] = *step.step.level;
      SG_RETURN_IF_ERROR(load::WriteAiperfExport(
          out_dir + "/aiperf/" + name,
          {.records = records.subspan(step.first_record, step.record_count),
           .wall_origin_ns = wall_origin_ns,
           .interrupted = step.interrupted,
           .input_config = {{"endpoint", endpoint},
                            {"input", {{"random_seed", bundle.scenario.seed}}},
                            {"loadgen", loadgen}},
           .stagegate = {{"run_id", report.run_id},
                         {"stage", stage.name},
                         {"phase", phase},
                         {"phase_id", step.phase_id},
                         {"output_tokens_from_usage", step.metrics.usage_tokens},
                         {"output_tokens_counted", step.metrics.counted_tokens}}}));
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteRunFiles(const std::string& out_dir, const manifest::Bundle& bundle,
                     const std::string& fingerprint, const scenario::RunReport& report,
                     const scenario::Runner& runner, store::Store& store) {
  std::error_code made;
  std::filesystem::create_directories(out_dir, made);
  if (made) return Status::IoError(out_dir + ": " + made.message());
  const nlohmann::json run_json = scenario::RunJson(bundle, fingerprint, report);
  SG_RETURN_IF_ERROR(WriteFileAtomically(
      out_dir + "/run.json",
      run_json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  SG_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/stages.csv", scenario::StagesCsv(report)));
  SG_RETURN_IF_ERROR(load::WriteRequestsJsonl(out_dir + "/requests.jsonl", runner.records()));
  SG_RETURN_IF_ERROR(WriteRunAiperf(out_dir, bundle, report, runner));
  return store.SetRunFindings(
      report.run_id, run_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

namespace {

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
    const auto fail = [&console](const Status& status, ExitCode code) {
      for (const std::string& line : Split(status.message(), '\n'))
        console.Error("stagegate run: " + line);
      return code;
    };
    if (!(response_memory_mib_ >= 0) || !std::isfinite(response_memory_mib_))
      return fail(Status::InvalidInput("--max-response-memory must be 0 (no limit) or more MiB"),
                  ExitCode::kInvalidInput);
    if (scenario_.empty() == resume_id_.empty())
      return fail(Status::InvalidInput("give a scenario file, or --resume RUN_ID"),
                  ExitCode::kInvalidInput);
    if (!shard_text_.empty()) {
      Result<load::Shard> shard = ShardOption(shard_text_);
      if (!shard.ok()) return fail(shard.status(), ExitCode::kInvalidInput);
      settings_.shard = *shard;
    }
    if (!start_at_text_.empty()) {
      Result<int64_t> start_at = StartAtOption(start_at_text_);
      if (!start_at.ok()) return fail(start_at.status(), ExitCode::kInvalidInput);
      settings_.start_at_unix_ms = *start_at;
    }
    if (!resume_id_.empty() && (settings_.shard.count > 1 || settings_.start_at_unix_ms))
      return fail(Status::InvalidInput("a shard is not resumed: its slots of the shared plan have "
                                       "passed; run it again with the same --start-at"),
                  ExitCode::kInvalidInput);
    if (!resume_id_.empty() && (seed_ || !settings_.model.empty() || !settings_.only_stage.empty()))
      return fail(Status::InvalidInput("--resume continues with the run's own settings: give "
                                       "no --seed, --model or --only-stage"),
                  ExitCode::kInvalidInput);
    Result<std::unique_ptr<store::Store>> store = store::Store::Open(global.db_path);
    if (!store.ok()) return fail(store.status(), ExitCode::kRuntimeFailure);
    if ((*store)->read_only())
      return fail(Status::StoreError(global.db_path + ": cannot write there (read-only)"),
                  ExitCode::kRuntimeFailure);

    std::optional<store::RunInfo> resumed;
    if (!resume_id_.empty()) {
      Result<std::optional<store::RunInfo>> found = (*store)->FindRun(resume_id_);
      if (!found.ok()) return fail(found.status(), ExitCode::kRuntimeFailure);
      if (!*found)
        return fail(Status::InvalidInput("no run " + resume_id_ + " in " + global.db_path),
                    ExitCode::kInvalidInput);
      if ((*found)->status == store::RunStatus::kComplete)
        return fail(Status::InvalidInput("run " + resume_id_ + " is complete: nothing to resume"),
                    ExitCode::kInvalidInput);
      resumed = **found;
      const nlohmann::json stored_settings =
          nlohmann::json::parse(resumed->settings_json, nullptr, /*allow_exceptions=*/false);
      if (stored_settings.is_object() && stored_settings.contains("merged_from"))
        return fail(Status::InvalidInput("run " + resume_id_ +
                                         " is a merge of shards, not a run to resume: give the "
                                         "same `stagegate merge` again, which replaces a merge "
                                         "that did not finish"),
                    ExitCode::kInvalidInput);
      scenario_ = resumed->scenario_file;
      const int workers = settings_.workers;  // the one setting a resume may change
      const std::string given_url = settings_.target_url;
      settings_ = scenario::SettingsFromJson(stored_settings);
      if (workers != 0) settings_.workers = workers;
      // The run's URL is stored without its credentials: --target-url may give them again, for
      // the same URL only.
      if (!given_url.empty()) {
        if (UrlWithoutUserinfo(given_url) != settings_.target_url)
          return fail(Status::InvalidInput(
                          "--resume continues with the run's own target: --target-url may only "
                          "add credentials to " +
                          (settings_.target_url.empty() ? std::string("the scenario's target, "
                                                                      "which it does not name")
                                                        : settings_.target_url)),
                      ExitCode::kInvalidInput);
        settings_.target_url = given_url;
      }
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
    const manifest::Fingerprint fingerprint = manifest::ComputeFingerprint(*bundle);
    if (resumed && resumed->fingerprint != fingerprint.value)
      return fail(Status::InvalidInput(scenario_ + " (or its corpus or rubric) changed since run " +
                                       resume_id_ +
                                       " began: a resumed run must measure the same configuration"),
                  ExitCode::kInvalidInput);
    const std::string run_id = resumed ? resumed->id : NewRunId("run");
    // A resumed run writes where it first did, unless told otherwise.
    std::string out_dir = out_dir_.empty() ? "reports/" + run_id : out_dir_;
    if (resumed && out_dir_.empty()) out_dir = RunFolder(*resumed).value_or(out_dir);
    // The files are written after every stage has run: a folder they cannot go to is found now.
    if (Status writable = CheckWritableDirectory(out_dir); !writable.ok())
      return fail(writable.WithContext("--out"), ExitCode::kRuntimeFailure);

    load::RaiseOpenFileLimit();
    std::atomic<bool> stop{false};
    StopOnSignal stop_on_signal(stop);
    scenario::Runner runner(*bundle, settings_, **store, console, stop,
                            global.seam ? *global.seam : scenario::RunSeam());
    scenario::ResumeFrom stored;
    if (resumed) {
      Result<std::vector<store::PhaseInfo>> phases = (*store)->ListPhases(run_id);
      if (!phases.ok()) return fail(phases.status(), ExitCode::kRuntimeFailure);
      Result<std::vector<load::RequestRecord>> records = (*store)->ListRequests(run_id);
      if (!records.ok()) return fail(records.status(), ExitCode::kRuntimeFailure);
      stored = {.phases = std::move(*phases), .records = std::move(*records)};
    }
    // The run is created (or marked resumed) once the plan holds, so a scenario that cannot run
    // leaves no trace.
    Status created = Status::Ok();
    Result<scenario::RunReport> report = runner.Run(
        run_id,
        [&] {
          if (resumed)
            return created =
                       (*store)->SetRunStatus(run_id, store::RunStatus::kResumed, std::nullopt);
          return created = (*store)->CreateRun(
                     {.id = run_id,
                      .scenario_name = bundle->scenario.name,
                      .scenario_file = std::filesystem::absolute(scenario_).string(),
                      .fingerprint = fingerprint.value,
                      .corpus_version = bundle->corpus ? bundle->corpus->version : "",
                      .scenario_json = manifest::CanonicalScenario(*bundle).dump(
                          -1, ' ', false, nlohmann::json::error_handler_t::replace),
                      .settings_json =
                          WithRunFolder(scenario::SettingsToJson(settings_), out_dir)
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      .started_unix_ms = WallUnixMs()});
        },
        resumed ? &stored : nullptr);
    if (!report.ok()) {
      const bool bad_input = report.status().code() == Status::Code::kInvalidInput;
      if (created.ok() && !bad_input)
        (void)(*store)->SetRunStatus(run_id, store::RunStatus::kFailed, WallUnixMs());
      return fail(report.status(), bad_input ? ExitCode::kInvalidInput : ExitCode::kRuntimeFailure);
    }

    for (const std::string& line : scenario::SummaryLines(*report))
      console.Line(line);
    if (Status written =
            WriteRunFiles(out_dir, *bundle, fingerprint.value, *report, runner, **store);
        !written.ok())
      return fail(written, ExitCode::kRuntimeFailure);
    if (Status marked = (*store)->SetRunStatus(
            run_id,
            report->interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
            WallUnixMs());
        !marked.ok())
      return fail(marked, ExitCode::kRuntimeFailure);
    console.Line("run " + run_id + (report->interrupted ? " (interrupted)" : ""));
    console.Line("wrote " + out_dir + "/run.json, " + out_dir + "/stages.csv, " + out_dir +
                 "/requests.jsonl, " + out_dir +
                 "/aiperf/*/profile_export_aiperf.json (AIPerf's layout); store " + global.db_path);
    console.Line("next: " + ReportCommandLine(global, run_id) + " (writes " + out_dir +
                 "/report.html)");
    console.Line(out_dir + "/run.json");
    return report->interrupted ? ExitCode::kInterrupted : ExitCode::kOk;
  }

 private:
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

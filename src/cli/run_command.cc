// `stagegate run SCENARIO`: runs a scenario's stages and load phases against its target (by
// default the built-in reference application), and writes run.json, requests.jsonl, stages.csv
// and the store.

#include <atomic>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/run_support.h"
#include "load/engine.h"
#include "manifest/bundle.h"
#include "manifest/fingerprint.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

class RunCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("scenario", scenario_, "The scenario file")->required();
    app.add_option("--target-url", settings_.target_url,
                   "Send to this base URL (http://host:port) instead of the scenario's target");
    app.add_option("--model", settings_.model, "Model name sent in requests");
    app.add_option("--only-stage", settings_.only_stage, "Run this stage alone");
    app.add_option("--seed", seed_, "Seed of the schedules, instead of the scenario's");
    app.add_option("--workers", settings_.workers,
                   "Worker threads of the load engine (0: one per hardware thread)")
        ->capture_default_str();
    app.add_option("--out", out_dir_, "Where the files go (default reports/<run id>)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    manifest::Diagnostics diagnostics;
    std::optional<manifest::Bundle> bundle = manifest::LoadBundle(scenario_, diagnostics);
    if (!bundle) {
      for (const manifest::Diagnostic& d : diagnostics.Sorted())
        console.Error(d.ToString());
      return ExitCode::kInvalidInput;
    }
    if (seed_) settings_.seed = static_cast<uint64_t>(*seed_);
    const manifest::Fingerprint fingerprint = manifest::ComputeFingerprint(*bundle);
    const std::string run_id = NewRunId("run");
    const std::string out_dir = out_dir_.empty() ? "reports/" + run_id : out_dir_;
    const auto fail = [&console](const Status& status, ExitCode code) {
      for (const std::string& line : Split(status.message(), '\n'))
        console.Error("stagegate run: " + line);
      return code;
    };

    Result<std::unique_ptr<store::Store>> store = store::Store::Open(global.db_path);
    if (!store.ok()) return fail(store.status(), ExitCode::kRuntimeFailure);
    load::RaiseOpenFileLimit();
    std::atomic<bool> stop{false};
    StopOnSignal stop_on_signal(stop);
    scenario::Runner runner(*bundle, settings_, **store, console, stop);
    // The run is created once the plan holds, so a scenario that cannot run leaves no trace.
    Status created = Status::Ok();
    Result<scenario::RunReport> report = runner.Run(run_id, [&] {
      created =
          (*store)->CreateRun({.id = run_id,
                               .scenario_name = bundle->scenario.name,
                               .scenario_file = scenario_,
                               .fingerprint = fingerprint.value,
                               .corpus_version = bundle->corpus ? bundle->corpus->version : "",
                               .scenario_json = manifest::CanonicalScenario(*bundle).dump(),
                               .started_unix_ms = WallUnixMs()});
      return created;
    });
    if (!report.ok()) {
      const bool bad_input = report.status().code() == Status::Code::kInvalidInput;
      if (created.ok() && !bad_input)
        (void)(*store)->SetRunStatus(run_id, store::RunStatus::kFailed, WallUnixMs());
      return fail(report.status(), bad_input ? ExitCode::kInvalidInput : ExitCode::kRuntimeFailure);
    }

    for (const std::string& line : scenario::SummaryLines(*report))
      console.Line(line);
    std::error_code made;
    std::filesystem::create_directories(out_dir, made);
    if (made)
      return fail(Status::IoError(out_dir + ": " + made.message()), ExitCode::kRuntimeFailure);
    const nlohmann::json run_json = scenario::RunJson(*bundle, fingerprint.value, *report);
    Status written = WriteFileAtomically(
        out_dir + "/run.json",
        run_json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (written.ok())
      written = WriteFileAtomically(out_dir + "/stages.csv", scenario::StagesCsv(*report));
    if (written.ok()) written = WriteRequestsJsonl(out_dir + "/requests.jsonl", runner.records());
    if (!written.ok()) return fail(written, ExitCode::kRuntimeFailure);
    if (Status marked = (*store)->SetRunStatus(
            run_id,
            report->interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
            WallUnixMs());
        !marked.ok())
      return fail(marked, ExitCode::kRuntimeFailure);
    console.Line("run " + run_id + (report->interrupted ? " (interrupted)" : ""));
    console.Line("wrote " + out_dir + "/run.json, " + out_dir + "/stages.csv, " + out_dir +
                 "/requests.jsonl; store " + global.db_path);
    console.Line(out_dir + "/run.json");
    return report->interrupted ? ExitCode::kInterrupted : ExitCode::kOk;
  }

 private:
  std::string scenario_;
  std::string out_dir_;
  std::optional<int64_t> seed_;
  scenario::RunSettings settings_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() {
  return std::make_unique<RunCommand>();
}

}  // namespace stagegate::cli

// `stagegate merge OUT SHARD...`: joins the stores of a run's shards into one run, whose every
// figure is computed again over the union of the shards' records.

#include <algorithm>
#include <atomic>

#include "base/clock.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/merge.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "scenario/run_bundle.h"
#include "scenario/run_files.h"
#include "scenario/runner.h"
#include "scenario/shard_merge.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using nlohmann::json;
using scenario::ShardRun;

// A note for each shard that started a step late.
void NoteLateShards(scenario::RunReport& report) {
  for (const json& s : report.sharding["shards"])
    if (s["max_start_lag_ms"].get<double>() > 0)
      report.notes.push_back("shard " + s["shard"].get<std::string>() + " started " +
                             std::to_string(s["late_steps"].size()) + " step(s) late, by up to " +
                             FormatNumber(s["max_start_lag_ms"].get<double>(), 1) + " ms");
}

class MergeCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("out", out_dir_, "Folder for the merged run's files")->required();
    app.add_option("shards", shard_paths_,
                   "Each shard's store (a .db file, or the folder holding stagegate.db)")
        ->required();
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    std::sort(shard_paths_.begin(), shard_paths_.end());
    std::vector<ShardRun> shards;
    for (const std::string& path : shard_paths_) {
      Result<ShardRun> shard = scenario::ReadShard(path);
      if (!shard.ok()) return Fail(console, "merge", shard.status());
      shards.push_back(std::move(*shard));
    }
    std::sort(shards.begin(), shards.end(), [](const ShardRun& a, const ShardRun& b) {
      return a.settings.shard.index < b.settings.shard.index;
    });
    if (Status checked = scenario::CheckShards(shards); !checked.ok())
      return Fail(console, "merge", checked);
    if (shards.front().profile) return MergeProfileShards(shards, global, out_dir_, console);
    const ShardRun& first = shards.front();
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(first.run, problem);
    if (!bundle) return Fail(console, "merge", Status::InvalidInput(problem));
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open(global.db_path);
    if (!opened.ok()) return Fail(console, "merge", opened.status());
    store::Store& store = **opened;

    const json merged_from = scenario::MergedFrom(shards);
    if (Status cleared = scenario::ClearEarlierMerge(store, global.db_path, merged_from, console);
        !cleared.ok())
      return Fail(console, "merge", cleared);

    scenario::RunSettings settings = first.settings;
    settings.shard = {};
    settings.merged_shards = static_cast<int64_t>(shards.size());
    store::RunInfo run = first.run;
    run.id = NewRunId("run");
    json stored_settings = WithRunFolder(scenario::SettingsToJson(settings), out_dir_);
    stored_settings["merged_from"] = merged_from;
    run.settings_json = stored_settings.dump();
    run.findings_json = "{}";
    run.status = store::RunStatus::kRunning;
    run.finished_unix_ms.reset();
    if (Status created = store.CreateRun(run); !created.ok())
      return Fail(console, "merge", created);
    Result<scenario::ResumeFrom> merged = scenario::MergeShardStores(store, run.id, shards);
    if (!merged.ok()) return Fail(console, "merge", merged.status());

    settings.replay = true;
    std::atomic<bool> stop{false};
    scenario::Runner runner(*bundle, settings, store, console, stop);
    Result<scenario::RunReport> report = runner.Run(
        run.id, [] { return Status::Ok(); }, &*merged);
    if (!report.ok()) {
      (void)store.SetRunStatus(run.id, store::RunStatus::kFailed, WallUnixMs());
      return Fail(console, "merge", report.status());
    }
    report->sharding = scenario::ShardingOf(shards);
    NoteLateShards(*report);
    for (const std::string& line : scenario::SummaryLines(*report))
      console.Line(line);
    if (Status written =
            scenario::WriteRunFiles(out_dir_, *bundle, run.fingerprint, *report, runner, store);
        !written.ok())
      return Fail(console, "merge", written);
    const bool interrupted = std::any_of(shards.begin(), shards.end(), [](const ShardRun& s) {
      return s.run.status != store::RunStatus::kComplete;
    });
    if (Status marked = store.SetRunStatus(
            run.id, interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
            WallUnixMs());
        !marked.ok())
      return Fail(console, "merge", marked);
    Result<std::optional<store::RunInfo>> stored = store.FindRun(run.id);
    if (!stored.ok() || !*stored) return Fail(console, "merge", stored.status());
    std::vector<std::string> written;
    if (Status reported =
            WriteReportFiles(store, **stored, &*bundle, out_dir_, {}, written, console);
        !reported.ok())
      return Fail(console, "merge", reported);
    console.Line("run " + run.id + ": " + std::to_string(shards.size()) + " shards, " +
                 std::to_string(runner.records().size()) + " requests; store " + global.db_path);
    console.Line(out_dir_ + "/run.json");
    return ExitCode::kOk;
  }

 private:
  std::string out_dir_;
  std::vector<std::string> shard_paths_;
};

}  // namespace

std::unique_ptr<Command> MakeMergeCommand() {
  return std::make_unique<MergeCommand>();
}

}  // namespace stagegate::cli

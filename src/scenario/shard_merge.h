#pragma once

// The shards of one run or profile joined into one run: each shard's store read, the shards
// checked to be the N slices of one plan, and their phases and records written into the merged
// run, which the runner then computes again over the union of the records.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "console/console.h"
#include "load/request_record.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::scenario {

/// One shard's run, as its store keeps it.
struct ShardRun {
  std::string folder;  // as given: a store, or the folder holding it
  std::string path;    // the store
  store::RunInfo run;
  RunSettings settings;
  std::vector<store::PhaseInfo> phases;
  std::vector<load::RequestRecord> records;
  /// A profile's shard: its config (scenario_json), and the fingerprint of that config but for
  /// the shard, which every shard of one profile shares.
  bool profile = false;
  nlohmann::json config;
  std::string fingerprint;
};

/// The newest shard run in the store `given` (a store file, or the folder holding its
/// stagegate.db), with its phases (but superseded ones) and records; InvalidInput when there is
/// no store there or it holds no shard.
Result<ShardRun> ReadShard(const std::string& given);

/// Refuses shards that are not the N slices of one plan (a different kind, fingerprint, count,
/// start, seed or stage, a shard given twice or missing), naming each problem.
Status CheckShards(const std::vector<ShardRun>& shards);

/// What each shard's run said of its timing: its anchors, and each step that started late.
nlohmann::json ShardingOf(const std::vector<ShardRun>& shards);

/// Writes the shards' phases (one per step, over every shard's slice) and records into the run
/// `run_id` of `store`, and returns them in run order (the first shard's, then any others), each
/// record's phase the merged one. A step every shard runs is complete when it is in each.
Result<ResumeFrom> MergeShardStores(store::Store& store, const std::string& run_id,
                                    const std::vector<ShardRun>& shards);

/// What names one merge of `shards`: their run ids, in shard order. Kept in the merged run's
/// settings as "merged_from".
nlohmann::json MergedFrom(const std::vector<ShardRun>& shards);

/// Before a merge of `merged_from` into `store`: an earlier merge of the same shards that did not
/// finish (killed while it wrote: still "running", or "failed") is removed, and `console` says
/// so; one that finished, or whose answers were exported, is refused (InvalidInput naming it and
/// what to do), since exports, scores and sign-offs may rest on it.
Status ClearEarlierMerge(store::Store& store, const std::string& store_path,
                         const nlohmann::json& merged_from, console::Console& console);

}  // namespace stagegate::scenario

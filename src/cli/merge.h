#pragma once

// What `merge` shares between the runs of a scenario and the profiles it joins.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/status.h"
#include "cli/command.h"
#include "console/console.h"
#include "load/request_record.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::cli {

// One shard's run, as its store keeps it.
struct ShardRun {
  std::string folder;  // as given: a store, or the folder holding it (and profile.json)
  std::string path;    // the store
  store::RunInfo run;
  scenario::RunSettings settings;
  std::vector<store::PhaseInfo> phases;
  std::vector<load::RequestRecord> records;
  /// A profile's shard: its config (scenario_json), and the fingerprint of that config but for
  /// the shard, which every shard of one profile shares.
  bool profile = false;
  nlohmann::json config;
  std::string fingerprint;
};

/// Writes the shards' phases (one per step, over every shard's slice) and records into the run
/// `run_id` of `store`, and returns them in run order (the first shard's, then any others), each
/// record's phase the merged one. A step every shard runs is complete when it is in each.
Result<scenario::ResumeFrom> MergeShardStores(store::Store& store, const std::string& run_id,
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

/// Joins the shards of one profile into a profile run in `global`'s store: each level over every
/// shard's records, judged again; writes its files into `out_dir`.
ExitCode MergeProfileShards(const std::vector<ShardRun>& shards, const GlobalOptions& global,
                            const std::string& out_dir, console::Console& console);

}  // namespace stagegate::cli

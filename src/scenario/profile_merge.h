#pragma once

// `merge` of a profile's shards: each level over the records of every shard, judged again with
// the profile's own SLOs and pace, as the runner judges a level.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/metrics.h"
#include "scenario/capacity_search.h"
#include "scenario/profile_output.h"
#include "scenario/shard_merge.h"
#include "store/store.h"

namespace stagegate::scenario {

/// A profile merged from its shards.
struct MergedProfile {
  std::vector<load::Slo> slos;  // the profile's --slo limits
  std::vector<ProfileLevel> levels;
  std::optional<SweepResult> sweep;          // levels of one kind but a trace's
  bool closed_loop = false;                  // concurrency levels
  std::vector<load::RequestRecord> records;  // every shard's, in level order
  nlohmann::json profile;                    // profile.json, with the shards under "sharding"
  int64_t wall_origin_ns = 0;                // the wall-clock time of the records' time zero
  bool interrupted = false;                  // a shard was
};

/// The merged run's config: the shards' profile.json config, its shard null and merged_shards
/// their count. InvalidInput when its slo_percentile is not one the statistics carry.
Result<nlohmann::json> MergedProfileConfig(const std::vector<ShardRun>& shards);

/// Joins `shards`' stores into the run `run_id` of `store` (MergeShardStores), then judges each
/// level again over every shard's records with `config`'s SLOs, percentile and pace (the merged
/// run's profile.json config); each level's client figures are the shards' from their stored
/// findings (summed, or the busiest), and a shard that started a level late is listed.
Result<MergedProfile> MergeProfile(store::Store& store, const std::string& run_id,
                                   const std::string& fingerprint, const nlohmann::json& config,
                                   const std::vector<ShardRun>& shards);

}  // namespace stagegate::scenario

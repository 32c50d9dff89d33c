#pragma once

// `merge` of a profile's shards (scenario/shard_merge.h joins the stores of any run's shards).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/status.h"
#include "cli/command.h"
#include "console/console.h"
#include "scenario/shard_merge.h"

namespace stagegate::cli {

using scenario::ShardRun;

/// Joins the shards of one profile into a profile run in `global`'s store: each level over every
/// shard's records, judged again; writes its files into `out_dir`.
ExitCode MergeProfileShards(const std::vector<ShardRun>& shards, const GlobalOptions& global,
                            const std::string& out_dir, console::Console& console);

}  // namespace stagegate::cli

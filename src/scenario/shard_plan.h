#pragma once

// A run split into shards (`run --shard I/N`): what a scenario must be to be split, how long
// each step's slot in the shared plan lasts, and which part of a step a shard sends.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/schedule.h"
#include "manifest/bundle.h"
#include "scenario/phase_plan.h"

namespace stagegate::scenario {

/// Why `bundle`'s scenario cannot run in `shards` shards, one "file:line:col: ..." line each
/// (empty: it can). Every shard must send its slice of the same plan at the same offsets, with
/// no decision taken on what one shard alone saw, so a sharded run takes fixed plans only:
/// - no sweep that searches (`search: auto`) or bisects: fixed levels, every one run;
/// - every closed loop has a `duration_s`, so the next step's offset is known in advance;
/// - every closed loop keeps at least one request in flight in each shard.
std::vector<std::string> ShardProblems(const manifest::Bundle& bundle, int64_t shards);

/// How long a load step holds the shared plan, in ns: its whole (unsharded) schedule, or its
/// closed loop's duration, then its grace period. The next step starts that long after it, in
/// every shard; a shard still busy then starts it late, by the lag it records.
int64_t SlotNs(const PhaseStep& step);

/// Keeps `shard`'s part of a planned step: of an open loop, the arrivals whose sequence %
/// count == index (so the shards' union is the unsharded schedule, each arrival at its own
/// time), offered at the mean rate of those it keeps; a closed loop's concurrency and sequences
/// the engine splits by `options.shard`.
void TakeShard(PhaseStep& step, load::Shard shard);

/// `--shard`: "I/N" (load::ParseShard), or "job/N", which takes I from a Kubernetes Indexed
/// Job's JOB_COMPLETION_INDEX (counted from 0, so I is it + 1). InvalidInput names the text, or
/// the variable when it is missing or not an index below N.
Result<load::Shard> ShardOption(const std::string& text);

/// `--start-at`: RFC 3339 with a zone ("2026-12-02T10:00:00Z", "...T11:00:00.250+01:00") or
/// Unix milliseconds (digits only), as Unix ms. InvalidInput quotes the text.
Result<int64_t> StartAtOption(const std::string& text);

}  // namespace stagegate::scenario

#include "scenario/profile_merge.h"

#include <algorithm>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "load/metrics.h"
#include "scenario/findings.h"
#include "scenario/level_judge.h"
#include "stats/summary.h"

namespace stagegate::scenario {
namespace {

using nlohmann::json;

double Number(const json& j, const char* key, double otherwise) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : otherwise;
}

// The SLOs of a profile's config ({"ttft_ms": 500, ...}), and its levels' criteria.
std::vector<load::Slo> SlosOf(const json& config) {
  std::vector<load::Slo> slos;
  if (config.contains("slo") && config["slo"].is_object())
    for (const auto& [metric, max_ms] : config["slo"].items())
      if (max_ms.is_number()) slos.push_back({.metric = metric, .max_ms = max_ms.get<double>()});
  return slos;
}

LevelCriteria CriteriaOf(const json& config, const std::vector<load::Slo>& slos) {
  LevelCriteria criteria;
  criteria.thresholds.latency = SloThresholds(slos, Number(config, "slo_percentile", 95));
  criteria.min_share = Number(config, "keep_pace", 0.95);
  criteria.min_completed = static_cast<int64_t>(Number(config, "min_completed", 30));
  if (config.value("max_duration_s", json()).is_number())
    criteria.max_duration_s = config["max_duration_s"].get<double>();
  criteria.duration_s = Number(config, "duration_s", 0);
  return criteria;
}

// Each shard's profile.json: as its store keeps it with its findings, or (a shard stored before
// profiles kept their findings) beside its store, when the shard was given as its output folder.
json ShardProfile(const ShardRun& shard) {
  const json findings = json::parse(shard.run.findings_json, nullptr, false);
  if (findings.is_object() && findings.contains("profile") && findings["profile"].is_object())
    return findings["profile"];
  const std::string path = shard.folder + "/profile.json";
  if (!std::filesystem::is_directory(shard.folder) || !IsRegularFile(path)) return json();
  Result<std::string> text = ReadFile(path);
  return text.ok() ? json::parse(*text, nullptr, false) : json();
}

// Each shard's run, store, requests and clock, and where its client self-check came from.
json ShardList(const std::vector<ShardRun>& shards, const std::vector<json>& profiles) {
  json shard_list = json::array();
  for (size_t s = 0; s < shards.size(); ++s)
    shard_list.push_back(
        {{"shard", load::FormatShard(shards[s].settings.shard)},
         {"run_id", shards[s].run.id},
         {"store", shards[s].path},
         {"requests", shards[s].records.size()},
         {"clock", profiles[s].is_object() ? profiles[s].value("sharding", json()) : json()},
         {"self_check", profiles[s].is_object() ? "from its store"
                                                : "none: a shard stored before profiles kept "
                                                  "their findings; give its output folder"}});
  return shard_list;
}

// Each shard's row of level `l` in its profile.json (null where it has none).
std::vector<json> ShardRows(const std::vector<json>& profiles, size_t l) {
  std::vector<json> rows;
  for (const json& p : profiles)
    rows.push_back(p.is_object() && p.contains("levels") && l < p["levels"].size() ? p["levels"][l]
                                                                                   : json());
  return rows;
}

// A level over every shard's `records`, judged again; its client figures each shard's (`rows`,
// one a shard), summed or the busiest; a shard that started it late goes to `late`.
ProfileLevel MergedLevel(const store::PhaseInfo& phase,
                         const std::vector<load::RequestRecord>& records,
                         const std::vector<load::Slo>& slos, const LevelCriteria& criteria,
                         const std::vector<json>& rows, const std::vector<ShardRun>& shards,
                         json& late) {
  ProfileLevel level{.kind = phase.ProfileLevelKind(),
                     .value = phase.level.value_or(0),
                     .metrics = load::ComputeMetrics(records, slos),
                     .interrupted = phase.status != store::PhaseStatus::kComplete};
  const bool open_loop = level.kind != "concurrency";
  // The offered rate of the whole schedule: every arrival of every shard is a record.
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const load::RequestRecord& r : records) {
    first = std::min(first, r.intended_ns);
    last = std::max(last, r.intended_ns);
  }
  if (open_loop && records.size() > 1 && last > first)
    level.offered_rate =
        static_cast<double>(records.size() - 1) / (static_cast<double>(last - first) / 1e9);
  // What each shard's client spent on its part: summed, or the busiest.
  for (size_t s = 0; s < rows.size(); ++s) {
    const json& row = rows[s];
    if (!row.is_object()) continue;
    const json check = row.value("self_check", json::object());
    level.client_cpu_s += Number(check, "client_cpu_s", 0);
    level.idle_poll_s += Number(check, "client_idle_poll_s", 0);
    level.wall_s = std::max(level.wall_s, Number(check, "wall_s", 0));
    level.workers += static_cast<int>(Number(check, "workers", 0));
    level.dropped += static_cast<int64_t>(Number(check, "dropped", 0));
    level.max_worker_busy = std::max(level.max_worker_busy, Number(check, "max_worker_busy", 0));
    if (row.contains("start_lag_ms"))
      late.push_back({{"shard", load::FormatShard(shards[s].settings.shard)},
                      {"level", level.value},
                      {"start_lag_ms", row["start_lag_ms"]}});
  }
  level.judgement =
      JudgeLevel(records, level.metrics, {}, criteria, open_loop, phase.started_ns.value_or(0));
  CheckClient(level, records);
  return level;
}

}  // namespace

Result<json> MergedProfileConfig(const std::vector<ShardRun>& shards) {
  json config = shards.front().config;
  if (const double p = Number(config, "slo_percentile", 95); !stats::IsCarriedPercentile(p))
    return Status::InvalidInput(
        "the shards' slo_percentile " + FormatNumber(p) +
        " is not one the statistics carry: " + stats::kCarriedPercentilesText);
  config["shard"] = nullptr;
  config["merged_shards"] = shards.size();
  return config;
}

Result<MergedProfile> MergeProfile(store::Store& store, const std::string& run_id,
                                   const std::string& fingerprint, const json& config,
                                   const std::vector<ShardRun>& shards) {
  Result<ResumeFrom> merged = MergeShardStores(store, run_id, shards);
  if (!merged.ok()) return merged.status();
  std::vector<json> profiles;
  for (const ShardRun& shard : shards)
    profiles.push_back(ShardProfile(shard));
  const std::vector<load::Slo> slos = SlosOf(config);
  const LevelCriteria criteria = CriteriaOf(config, slos);
  MergedProfile out{.slos = slos, .records = std::move(merged->records)};
  json late = json::array();
  for (size_t l = 0; l < merged->phases.size(); ++l) {
    const store::PhaseInfo& phase = merged->phases[l];
    std::vector<load::RequestRecord> records;
    for (const load::RequestRecord& r : out.records)
      if (r.phase_id == phase.id) records.push_back(r);
    ProfileLevel level =
        MergedLevel(phase, records, slos, criteria, ShardRows(profiles, l), shards, late);
    level.record_count = records.size();
    out.interrupted = out.interrupted || level.interrupted;
    out.levels.push_back(std::move(level));
  }
  size_t at = 0;
  for (ProfileLevel& level : out.levels) {  // records are in level order
    level.first_record = at;
    at += level.record_count;
  }
  out.closed_loop = !out.levels.empty() && out.levels.front().kind == "concurrency";
  if (!out.levels.empty() && out.levels.front().kind != "trace") {
    out.sweep.emplace();
    for (const ProfileLevel& level : out.levels)
      out.sweep->outcomes.push_back(OutcomeOf(level.value, *level.judgement));
    out.sweep->finding = stats::FindCapacity(out.sweep->outcomes);
  }
  out.profile = ProfileJson(config, fingerprint, run_id, out.levels, out.interrupted);
  if (out.sweep) out.profile["capacity"] = CapacityJson(*out.sweep, out.closed_loop, false);
  out.profile["sharding"] = {{"merged_shards", shards.size()},
                             {"start_at_unix_ms", config.value("start_at_unix_ms", json())},
                             {"shards", ShardList(shards, profiles)},
                             {"late_levels", late}};
  out.wall_origin_ns =
      shards.front().settings.start_at_unix_ms
          ? *shards.front().settings.start_at_unix_ms * 1'000'000
          : WallNsAtSteady(static_cast<int64_t>(Number(profiles.front(), "origin_steady_ns", 0)));
  return out;
}

}  // namespace stagegate::scenario

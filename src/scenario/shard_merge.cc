#include "scenario/shard_merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "base/files.h"
#include "base/strings.h"
#include "load/schedule.h"
#include "manifest/fingerprint.h"

namespace stagegate::scenario {

using nlohmann::json;

namespace {

// A phase is the same step in every shard when its stage, name, level and kind agree.
using PhaseKey = std::tuple<std::string, std::string, bool, std::optional<double>>;
PhaseKey KeyOf(const store::PhaseInfo& p) {
  return {p.stage, p.phase, p.at_rest, p.level};
}

// A load step every shard runs its slice of; the rest (samples, probes) the first shard alone.
bool EveryShardRuns(const store::PhaseInfo& p) {
  return !p.at_rest && p.stage != "faults";
}

}  // namespace

Result<ShardRun> ReadShard(const std::string& given) {
  const std::string path = std::filesystem::is_directory(given) ? given + "/stagegate.db" : given;
  if (!IsRegularFile(path))
    return Status::InvalidInput(given +
                                ": no store there (a shard's store file, or the folder "
                                "holding its stagegate.db)");
  Result<std::unique_ptr<store::Store>> opened = store::Store::OpenExisting(path);
  if (!opened.ok()) return opened.status();
  Result<std::vector<store::RunInfo>> runs = (*opened)->ListRuns();
  if (!runs.ok()) return runs.status();
  for (const store::RunInfo& run : *runs) {  // newest first
    ShardRun shard{.folder = given, .path = path, .run = run, .fingerprint = run.fingerprint};
    if (run.is_profile()) {
      // A profile keeps its options as its config; its shard is one of them.
      shard.profile = true;
      shard.config = json::parse(run.scenario_json, nullptr, /*allow_exceptions=*/false);
      if (!shard.config.is_object() || !shard.config.contains("shard") ||
          !shard.config["shard"].is_string())
        continue;
      Result<load::Shard> index = load::ParseShard(shard.config["shard"].get<std::string>());
      if (!index.ok()) continue;
      shard.settings.shard = *index;
      if (shard.config.value("start_at_unix_ms", json()).is_number_integer())
        shard.settings.start_at_unix_ms = shard.config["start_at_unix_ms"].get<int64_t>();
      // Computed again from the options, as a store from before profile fingerprints left out
      // the shard has each shard's own.
      shard.fingerprint = manifest::ProfileFingerprint(shard.config);
    } else {
      shard.settings =
          SettingsFromJson(json::parse(run.settings_json, nullptr, /*allow_exceptions=*/false));
    }
    if (shard.settings.shard.count <= 1) continue;
    // With the baselines the first shard asked or stored, so that the merged run reviews them.
    Result<std::vector<store::PhaseInfo>> phases =
        (*opened)->ListPhases(run.id, /*with_baselines=*/true);
    if (!phases.ok()) return phases.status();
    Result<std::vector<load::RequestRecord>> records =
        (*opened)->ListRequests(run.id, /*with_baselines=*/true);
    if (!records.ok()) return records.status();
    std::erase_if(*phases, [](const store::PhaseInfo& p) {
      return p.status == store::PhaseStatus::kSuperseded;
    });
    shard.phases = std::move(*phases);
    shard.records = std::move(*records);
    return shard;
  }
  return Status::InvalidInput(path + ": holds no run of a shard (run or profile with --shard I/N)");
}

Status CheckShards(const std::vector<ShardRun>& shards) {
  const ShardRun& first = shards.front();
  const int64_t n = first.settings.shard.count;
  std::vector<std::string> problems;
  std::map<int64_t, std::string> seen;
  for (const ShardRun& s : shards) {
    const std::string name =
        s.path + " (run " + s.run.id + ", shard " + load::FormatShard(s.settings.shard) + ")";
    if (s.profile != first.profile)
      problems.push_back(name + ": a " + (s.profile ? "profile" : "run") + ", where " + first.path +
                         " holds a " + (first.profile ? "profile" : "run"));
    else if (s.fingerprint != first.fingerprint)
      problems.push_back(name + ": its " +
                         (s.profile ? "options differ" : "scenario, corpus or rubric differs") +
                         " from " + first.path + "'s (fingerprint " + s.fingerprint.substr(0, 12) +
                         " against " + first.fingerprint.substr(0, 12) + ")");
    if (s.settings.shard.count != n)
      problems.push_back(name + ": one of " + std::to_string(s.settings.shard.count) +
                         " shards, where " + first.path + " is one of " + std::to_string(n));
    if (s.settings.start_at_unix_ms != first.settings.start_at_unix_ms)
      problems.push_back(name + ": --start-at differs from " + first.path + "'s");
    if (s.settings.seed != first.settings.seed ||
        s.settings.only_stage != first.settings.only_stage)
      problems.push_back(name + ": --seed or --only-stage differs from " + first.path + "'s");
    if (auto [at, added] = seen.emplace(s.settings.shard.index, s.path); !added)
      problems.push_back(name + ": shard " + load::FormatShard(s.settings.shard) +
                         " is given twice (also " + at->second + ")");
  }
  if (problems.empty())
    for (int64_t i = 0; i < n; ++i)
      if (!seen.contains(i))
        problems.push_back("shard " + load::FormatShard({.index = i, .count = n}) +
                           " is missing: give all " + std::to_string(n) + " shards");
  return problems.empty() ? Status::Ok() : Status::InvalidInput(Join(problems, "\n"));
}

json ShardingOf(const std::vector<ShardRun>& shards) {
  json out = {{"merged_shards", shards.size()},
              {"start_at_unix_ms", shards.front().settings.start_at_unix_ms
                                       ? json(*shards.front().settings.start_at_unix_ms)
                                       : json(nullptr)},
              {"shards", json::array()}};
  for (const ShardRun& s : shards) {
    const json findings = json::parse(s.run.findings_json, nullptr, false);
    json late = json::array();
    double most = 0;
    if (findings.is_object() && findings.contains("stages") && findings["stages"].is_array())
      for (const json& stage : findings["stages"])
        if (stage.contains("steps") && stage["steps"].is_array())
          for (const json& step : stage["steps"])
            if (step.contains("start_lag_ms") && step["start_lag_ms"].is_number()) {
              most = std::max(most, step["start_lag_ms"].get<double>());
              late.push_back({{"stage", step.value("stage", "")},
                              {"phase", step.value("phase", "")},
                              {"level", step.value("level", json(nullptr))},
                              {"start_lag_ms", step["start_lag_ms"]}});
            }
    out["shards"].push_back(
        {{"shard", load::FormatShard(s.settings.shard)},
         {"run_id", s.run.id},
         {"store", s.path},
         {"status", store::RunStatusName(s.run.status)},
         {"requests", s.records.size()},
         {"clock", findings.is_object() && findings.contains("sharding") ? findings["sharding"]
                                                                         : json(nullptr)},
         {"max_start_lag_ms", most},
         {"late_steps", late}});
  }
  return out;
}

json MergedFrom(const std::vector<ShardRun>& shards) {
  json ids = json::array();
  for (const ShardRun& s : shards)
    ids.push_back(s.run.id);
  return ids;
}

Status ClearEarlierMerge(store::Store& store, const std::string& store_path,
                         const json& merged_from, console::Console& console) {
  Result<std::vector<store::RunInfo>> runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  for (const store::RunInfo& run : *runs) {
    const json settings = json::parse(run.settings_json, nullptr, /*allow_exceptions=*/false);
    if (!settings.is_object() || settings.value("merged_from", json()) != merged_from) continue;
    Result<std::vector<store::ExportInfo>> exports = store.ListExports(run.id);
    if (!exports.ok()) return exports.status();
    if (exports->empty() &&
        (run.status == store::RunStatus::kRunning || run.status == store::RunStatus::kFailed)) {
      SG_RETURN_IF_ERROR(store.DeleteRun(run.id));
      console.Line("merge: removed run " + run.id +
                   ", an earlier merge of these shards that did "
                   "not finish");
      continue;
    }
    return Status::InvalidInput(
        "run " + run.id + " in " + store_path + " already merges these shards (" +
        std::string(store::RunStatusName(run.status)) + "): see it with `stagegate report " +
        run.id + "`, or merge into another store with --db");
  }
  return Status::Ok();
}

Result<ResumeFrom> MergeShardStores(store::Store& store, const std::string& run_id,
                                    const std::vector<ShardRun>& shards) {
  // Each step's phase in each shard that has it, as (shard, phase).
  std::map<PhaseKey, std::vector<std::pair<size_t, const store::PhaseInfo*>>> by_key;
  std::vector<PhaseKey> order;  // the first shard's order, then any the others have beyond it
  for (size_t s = 0; s < shards.size(); ++s)
    for (const store::PhaseInfo& p : shards[s].phases) {
      auto& same = by_key[KeyOf(p)];
      if (same.empty()) order.push_back(KeyOf(p));
      same.push_back({s, &p});
    }
  ResumeFrom merged;
  std::map<std::pair<size_t, int64_t>, int64_t> new_id;  // (shard, old phase id) -> new id
  for (const PhaseKey& key : order) {
    const auto& same = by_key[key];
    store::PhaseInfo phase = *same.front().second;
    phase.run_id = run_id;
    phase.ordinal = static_cast<int64_t>(merged.phases.size());
    const bool whole = !EveryShardRuns(phase) || same.size() == shards.size();
    bool complete = whole;
    for (const auto& [s, p] : same) {
      complete = complete && p->status == store::PhaseStatus::kComplete;
      if (p->started_ns)
        phase.started_ns = std::min(phase.started_ns.value_or(*p->started_ns), *p->started_ns);
      if (p->ended_ns)
        phase.ended_ns = std::max(phase.ended_ns.value_or(*p->ended_ns), *p->ended_ns);
    }
    phase.status = complete ? store::PhaseStatus::kComplete : store::PhaseStatus::kInterrupted;
    Result<int64_t> id = store.AddPhase(phase);
    if (!id.ok()) return id.status();
    phase.id = *id;
    SG_RETURN_IF_ERROR(store.FinishPhase(phase.id, phase.started_ns.value_or(0),
                                         phase.ended_ns.value_or(0), phase.status));
    for (const auto& [s, p] : same)
      new_id[{s, p->id}] = phase.id;
    merged.phases.push_back(std::move(phase));
  }
  std::map<int64_t, int64_t> ordinal_of;
  for (const store::PhaseInfo& p : merged.phases)
    ordinal_of[p.id] = p.ordinal;
  for (size_t s = 0; s < shards.size(); ++s)
    for (load::RequestRecord r : shards[s].records) {
      r.run_id = run_id;
      r.phase_id = new_id.at({s, r.phase_id});
      merged.records.push_back(std::move(r));
    }
  std::stable_sort(merged.records.begin(), merged.records.end(),
                   [&](const load::RequestRecord& a, const load::RequestRecord& b) {
                     return std::pair(ordinal_of[a.phase_id], a.sequence) <
                            std::pair(ordinal_of[b.phase_id], b.sequence);
                   });
  SG_RETURN_IF_ERROR(store.AddRequestsInBatches(merged.records));
  return merged;
}

}  // namespace stagegate::scenario

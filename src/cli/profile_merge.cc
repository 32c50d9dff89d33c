// `merge` of a profile's shards (scenario/profile_merge judges their levels again).

#include "scenario/profile_merge.h"
#include "base/clock.h"
#include "base/strings.h"
#include "cli/merge.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "manifest/fingerprint.h"

namespace stagegate::cli {

using nlohmann::json;

ExitCode MergeProfileShards(const std::vector<ShardRun>& shards, const GlobalOptions& global,
                            const std::string& out_dir, console::Console& console) {
  Result<std::unique_ptr<store::Store>> opened = store::Store::Open(global.db_path);
  if (!opened.ok()) return Fail(console, "merge", opened.status());
  store::Store& store = **opened;
  Result<json> merged_config = scenario::MergedProfileConfig(shards);
  if (!merged_config.ok()) return Fail(console, "merge", merged_config.status());
  const json& config = *merged_config;
  const std::string config_text = config.dump(-1, ' ', false, json::error_handler_t::replace);
  const std::string fingerprint = manifest::ProfileFingerprint(config);
  const json merged_from = scenario::MergedFrom(shards);
  if (Status cleared = scenario::ClearEarlierMerge(store, global.db_path, merged_from, console);
      !cleared.ok())
    return Fail(console, "merge", cleared);
  const std::string run_id = NewRunId("profile");
  if (Status created = store.CreateRun(
          {.id = run_id,
           .scenario_name = store::RunInfo::kProfileRunName,
           .fingerprint = fingerprint,
           .scenario_json = config_text,
           .settings_json = WithRunFolder({{"merged_from", merged_from}}, out_dir).dump(),
           .started_unix_ms = WallUnixMs()});
      !created.ok())
    return Fail(console, "merge", created);
  Result<scenario::MergedProfile> merged =
      scenario::MergeProfile(store, run_id, fingerprint, config, shards);
  if (!merged.ok()) return Fail(console, "merge", merged.status());
  const std::vector<scenario::ProfileLevel>& levels = merged->levels;
  for (const std::string& line : scenario::ProfileTable(levels))
    console.Line(line);
  for (const std::string& line : scenario::CapacityLines(
           levels, merged->sweep, merged->closed_loop ? "concurrent" : "req/s", false))
    console.Line(line);
  Result<std::vector<std::string>> written =
      scenario::WriteProfileOutputs(out_dir, merged->profile, levels, merged->records, merged->slos,
                                    nullptr, merged->wall_origin_ns);
  if (!written.ok()) return Fail(console, "merge", written.status());
  // The stored config may have been edited: a model that is not text is left out.
  const std::string model = config.contains("model") && config["model"].is_string()
                                ? config["model"].get<std::string>()
                                : "";
  if (Status kept = scenario::KeepFindings(
          store, run_id,
          scenario::ProfileFindings(merged->profile, model, levels, merged->sweep, false),
          merged->interrupted);
      !kept.ok())
    return Fail(console, "merge", kept);
  console.Line("profile " + run_id + ": " + std::to_string(shards.size()) + " shards, " +
               std::to_string(merged->records.size()) + " requests; store " + global.db_path);
  console.Line(out_dir + "/profile.json");
  return ExitCode::kOk;
}

}  // namespace stagegate::cli

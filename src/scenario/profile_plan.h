#pragma once

// `stagegate profile`: the request its flags make, the one-stage scenario that request
// describes, and, once the runner has run it, its levels, console lines, outputs and exit code.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/status.h"
#include "load/engine.h"
#include "load/response_budget.h"
#include "load/schedule.h"
#include "load/sessions.h"
#include "load/synthetic.h"
#include "manifest/scenario.h"
#include "scenario/capacity_search.h"
#include "scenario/profile_output.h"
#include "scenario/runner.h"
#include "scenario/stage_requests.h"
#include "store/store.h"

namespace stagegate::scenario {

/// What `stagegate profile` is asked for, each field as its flag of the same name gives it
/// (docs/cli.md). PlanProfile checks it.
struct ProfileRequest {
  std::string url, model, endpoint = "chat";
  bool no_stream = false;
  std::vector<int64_t> concurrency;
  std::vector<double> rates;
  std::string arrival = "poisson";
  double burstiness = 1;
  std::optional<double> ramp_to;
  std::vector<std::string> spikes;
  std::optional<int64_t> max_concurrency;
  std::string when_full = "queue";
  std::string trace;
  double speedup = 1;
  int64_t block_tokens = 512;
  std::string shared_prefix;
  std::string session_turns, think_time = "0", follow_up_tokens;
  std::optional<int64_t> requests;
  std::optional<double> duration_s;
  int64_t warmup = 0;
  double grace_s = 5;
  std::string input_tokens = "550", output_tokens = "128";
  std::string corpus_dir;
  std::string dataset_path, dataset_format;
  std::optional<int64_t> dataset_min_tokens, dataset_max_tokens, dataset_max_output_tokens;
  std::string extra_inputs;
  std::vector<std::string> headers;
  std::string api_key_env;
  std::string slo;
  double slo_percentile = 95;
  bool search = false;
  double search_from = 1;
  std::optional<double> search_up_to;
  double search_resolution = 0.1;
  std::optional<double> max_duration_s;
  int64_t min_completed = 30;
  double keep_pace = 0.95;
  uint64_t seed = 1;
  int workers = 0;
  bool busy_poll = false;
  std::string receive_times = "kernel";
  double response_memory_mib = load::ResponseBudget::kDefaultLimitBytes >> 20;
  std::string shard, start_at;
  load::Timeouts timeouts;
  std::string out_dir;
  std::string tokenizer_path;
  std::string metrics_url;
  std::vector<std::string> gpu = {"off"};
  int64_t scrape_interval_ms = 1000;
  std::optional<double> slice_s;
};

/// A checked request: the scenario it describes, and what its checks parsed.
struct ProfilePlan {
  ProfileRequest request;  // with the defaults its checks filled in
  manifest::Bundle bundle;
  InputFiles input;       // what the scenario's input names, read; until the runner takes it
  nlohmann::json config;  // profile.json's "config", the fingerprint's input
  load::SyntheticOptions synthetic;
  std::optional<load::SessionShape> sessions;
  std::vector<load::RateSpike> rate_spikes;
  std::vector<load::Slo> slos;
  nlohmann::json extra;  // --extra-inputs
  load::Shard shard;
  std::optional<int64_t> start_at_unix_ms;

  /// Levels are ended early once decided, and judged as a gate, only when asked for.
  bool gating() const { return request.search || !slos.empty(); }
  load::DatasetOptions dataset_options() const;
};

/// Checks `request` and plans its scenario: one stage against --url, whose load is a sweep of
/// the levels (a search, or a trace replayed at its own times), with --slo as thresholds, the
/// input from the flags, and the files it names read. Every problem is a line of one
/// InvalidInput.
Result<ProfilePlan> PlanProfile(ProfileRequest request);

/// The runner's settings: the client's own (workers, response memory), the shard, load alone,
/// and steps named by their level on the console.
RunSettings ProfileSettings(const ProfilePlan& plan);

/// A profile's run, read as levels.
struct ProfileRun {
  std::vector<ProfileLevel> levels;
  std::optional<SweepResult> sweep;  // a sweep's capacity finding; none for a trace
  bool interrupted = false;
};
/// `tokenizer`: the prompts were counted by the model's tokenizer (the self-check's check of
/// the server's counts).
ProfileRun ProfileRunOf(const RunReport& report, const Runner& runner, bool tokenizer);

/// The console's account of the levels: the table, each level's sessions, self-check and
/// notes, and the capacity finding.
std::vector<std::string> ProfileLines(const ProfilePlan& plan, const ProfileRun& run);

/// The exit code of a profile that was not interrupted: with --slo or a search, its gate.
ExitCode ProfileExit(const ProfilePlan& plan, const ProfileRun& run);

/// Writes profile.json, profile.csv, requests.jsonl, the AIPerf exports and, with telemetry,
/// server_metrics.csv under `out_dir`, and keeps the findings with the run in `store`.
/// `series[i]`: the server's canonical series over level i's window, as the report reads them
/// (report::ReadServerSeries), when the run scraped telemetry. Returns the AIPerf directories
/// written.
Result<std::vector<std::string>> WriteProfile(const ProfilePlan& plan, const ProfileRun& run,
                                              const std::string& out_dir, const std::string& run_id,
                                              const RunReport& report,
                                              const std::vector<LevelSeries>& series,
                                              const Runner& runner, store::Store& store);

/// Parsers of `profile`'s flag values that take more than a range check. Each fails with
/// InvalidInput naming the flag and what it expects.

/// --spike "AT_S:DURATION_S:RATE": seconds, seconds and requests/s.
Result<load::RateSpike> ParseSpike(const std::string& text);

/// Each --header must be "Name: value" with a token for a name and no control character in the
/// value (a CR or LF would inject a header), every name once, and Authorization not beside
/// --api-key-env (`api_key_env`): a request carries one. Messages name headers, never their
/// values; one problem a line.
Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env);

/// --metrics-url, --gpu and --scrape-interval-ms: their problems ("--gpu: ..."), a line each.
std::vector<std::string> TelemetryProblems(const ProfileRequest& request);

}  // namespace stagegate::scenario

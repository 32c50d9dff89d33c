// `stagegate profile`: one endpoint, no scenario file. The options become a scenario of one stage
// whose load is a sweep of the given levels (or a search, or a trace replayed at its own times),
// run by the scenario runner as any run is; this prints its levels as a table with each one's
// self-check, and writes profile.json, profile.csv, requests.jsonl and the AIPerf exports.

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/profile_options.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "http/openai_request.h"
#include "load/dataset.h"
#include "load/schedule.h"
#include "load/sessions.h"
#include "load/synthetic.h"
#include "manifest/corpus.h"
#include "manifest/fingerprint.h"
#include "report/server_series.h"
#include "scenario/profile_output.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// The lowest request rate a level may have: levels are named by their rate to 3 decimals.
constexpr double kLowestRate = 0.001;

// A rate as given, however small or odd ("1e-300", "nan"), for a message that refuses it.
std::string GivenRate(double rate) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", rate);
  return text;
}

manifest::TokenDistribution Distribution(const load::TokenSpec& spec) {
  return {.mean = spec.mean, .std = spec.std};
}

class ProfileCommand : public Command, private ProfileFlags {
 public:
  void Configure(CLI::App& app) override { AddOptions(app); }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override;

 private:
  /// Checks the options and parses the values that need it; every problem, a line each.
  Status CheckOptions();
  /// The checks of the load's shape: modes, search, levels and durations.
  void CheckLoad(std::vector<std::string>& errors);
  /// --shard and --start-at, and what a plan in shards cannot have.
  void CheckShards(std::vector<std::string>& errors);
  /// The scenario the options describe (CheckOptions first), and the files its input names.
  Status BuildScenario();
  manifest::LoadPhase LoadPhase() const;
  manifest::InputSpec Input() const;
  /// Levels are ended early once decided, and judged as a gate, only when asked for.
  bool Gating() const { return search_ || !slos_.empty(); }
  /// The table, each level's sessions, self-check and notes, and the capacity finding.
  void PrintLevels(console::Console& console, const std::vector<scenario::ProfileLevel>& levels,
                   const std::optional<scenario::SweepResult>& sweep, bool interrupted) const;
  /// The exit code of a profile that was not interrupted: with --slo or a search, its gate.
  ExitCode GateExit(const std::vector<scenario::ProfileLevel>& levels,
                    const std::optional<scenario::SweepResult>& sweep) const;
  /// The outputs beside the store's findings: profile.json, profile.csv, requests.jsonl, the
  /// AIPerf exports and server_metrics.csv; the findings kept with the run.
  Status WriteOutputs(const std::string& out_dir, const std::string& run_id,
                      const scenario::RunReport& report, const scenario::Runner& runner,
                      store::Store& store, const std::vector<scenario::ProfileLevel>& levels,
                      const std::optional<scenario::SweepResult>& sweep, bool interrupted,
                      std::vector<std::string>& written);
  /// The run's settings: the client's own (workers, response memory), the shard, load alone.
  scenario::RunSettings Settings() const;
  json Config() const;
  json InputConfig() const;
  load::DatasetOptions DatasetOptions() const {
    return {.format = load::DatasetFormatFromName(dataset_format_),
            .min_tokens = dataset_min_tokens_,
            .max_tokens = dataset_max_tokens_,
            .max_output_tokens = dataset_max_output_tokens_};
  }
  ProfileTelemetryOptions TelemetryOptions() const {
    return {.metrics_url = metrics_url_, .gpu = gpu_, .interval_ms = scrape_interval_ms_};
  }

  // Parsed from the options.
  load::SyntheticOptions synthetic_;
  std::optional<load::SessionShape> sessions_;
  std::vector<load::RateSpike> rate_spikes_;
  std::vector<load::Slo> slos_;
  json extra_;
  load::Shard shard_;
  // The scenario, and what its input read.
  manifest::Bundle bundle_;
  scenario::InputFiles input_;  // until the runner takes them
  json config_;                 // profile.json's "config", the fingerprint's input
};

Status ProfileCommand::CheckOptions() {
  std::vector<std::string> errors;
  const auto check = [&errors](const Status& status) {
    if (!status.ok()) errors.push_back(status.message());
  };
  CheckLoad(errors);
  for (const std::string& problem : CheckTelemetryOptions(TelemetryOptions()))
    errors.push_back(problem);
  Result<load::TokenSpec> input = load::ParseTokenSpec("--input-tokens", input_tokens_);
  Result<load::TokenSpec> output = load::ParseTokenSpec("--output-tokens", output_tokens_);
  check(input.status());
  check(output.status());
  if (input.ok() && output.ok())
    synthetic_ = {.input_tokens = *input, .output_tokens = *output, .seed = seed_};
  if (!session_turns_.empty()) {
    if (endpoint_ != "chat" || !corpus_dir_.empty() || !trace_.empty() || !dataset_path_.empty())
      errors.push_back(
          "--session-turns runs synthetic chat sessions: the chat endpoint, and no --corpus, "
          "--trace or --dataset");
    Result<load::SessionShape> shape =
        load::ParseSessionShape(session_turns_, think_time_, follow_up_tokens_);
    check(shape.status());
    if (shape.ok()) sessions_ = *shape;
  } else if (think_time_ != "0" || !follow_up_tokens_.empty()) {
    errors.push_back("--think-time and --follow-up-tokens apply only with --session-turns");
  }
  if (!shared_prefix_.empty()) {
    Result<load::SharedPrefixes> prefixes = load::ParseSharedPrefixes(shared_prefix_);
    check(prefixes.status());
    if (prefixes.ok()) synthetic_.prefixes = *prefixes;
  }
  for (const std::string& text : spikes_) {
    Result<load::RateSpike> spike = ParseSpike(text);
    check(spike.status());
    if (spike.ok()) rate_spikes_.push_back(*spike);
  }
  Result<json> extra = http::ParseExtraInputs(extra_inputs_);
  check(extra.status());
  if (extra.ok()) extra_ = *extra;
  Result<std::vector<load::Slo>> slos = load::ParseSlos(slo_);
  check(slos.status());
  if (slos.ok()) slos_ = *slos;
  if (!(response_memory_mib_ >= 0) || !std::isfinite(response_memory_mib_))
    errors.push_back("--max-response-memory must be 0 (no limit) or more MiB");
  CheckShards(errors);
  check(CheckHeaders(headers_, !api_key_env_.empty()));
  if (!api_key_env_.empty()) {
    const char* key = std::getenv(api_key_env_.c_str());
    if (key == nullptr || *key == '\0')
      errors.push_back("--api-key-env: the environment variable " + api_key_env_ + " is not set");
  }
  if (dataset_min_tokens_ && dataset_max_tokens_ && *dataset_min_tokens_ > *dataset_max_tokens_)
    errors.push_back("--dataset-min-tokens is above --dataset-max-tokens");
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

void ProfileCommand::CheckLoad(std::vector<std::string>& errors) {
  const int modes = !concurrency_.empty() + !rates_.empty() + !trace_.empty();
  if (modes > 1) errors.push_back("give one of --concurrency, --request-rate and --trace");
  if (search_) {
    if (!concurrency_.empty() || !trace_.empty())
      errors.push_back("--search finds a request rate: it does not take --concurrency or --trace");
    if (rates_.size() > 1)
      errors.push_back("--search chooses its own levels: give where it starts with --search-from");
    if (rates_.size() == 1) search_from_ = rates_.front();
    // A level is named by its rate to 3 decimals: one that would read "0/s" is refused.
    if (!(search_from_ >= kLowestRate) || !std::isfinite(search_from_))
      errors.push_back("--search-from must be at least " + FormatNumber(kLowestRate) +
                       " req/s, got " + GivenRate(search_from_));
    if (search_up_to_ && !(*search_up_to_ >= search_from_))
      errors.push_back("--search-up-to must be at least where the search starts");
    rates_.clear();
    if (!requests_ && !duration_s_) duration_s_ = 20;
  } else {
    for (const auto& [given, flag] : {std::pair{search_up_to_.has_value(), "--search-up-to"},
                                      {search_from_ != 1, "--search-from"},
                                      {search_resolution_ != 0.1, "--search-resolution"}})
      if (given) errors.push_back(std::string(flag) + " applies only with --search");
    if (modes == 0) concurrency_ = {1};
  }
  if (max_duration_s_ && !(*max_duration_s_ > 0 && *max_duration_s_ <= 86'400))
    errors.push_back("--max-duration must be above 0 and at most 86400");
  if (max_duration_s_ && duration_s_ && *max_duration_s_ < *duration_s_)
    errors.push_back("--max-duration is shorter than --duration");
  for (int64_t c : concurrency_)
    if (c < 1) errors.push_back("--concurrency levels must be at least 1");
  if (!shard_text_.empty())
    if (Result<load::Shard> shard = ShardOption(shard_text_); shard.ok())
      for (int64_t c : concurrency_)
        if (c < shard->count)
          errors.push_back("--concurrency " + std::to_string(c) + " cannot be split into " +
                           std::to_string(shard->count) +
                           " shards: each needs at least one request in flight");
  for (double r : rates_)
    if (!(r >= kLowestRate) || !std::isfinite(r))
      errors.push_back("--request-rate levels must be at least " + FormatNumber(kLowestRate) +
                       " req/s, got " + GivenRate(r));
  if (!requests_ && !duration_s_) requests_ = 100;
  if (requests_ && *requests_ < 1) errors.push_back("--requests must be at least 1");
  if (duration_s_ && !(*duration_s_ > 0)) errors.push_back("--duration must be above 0");
  if (warmup_ < 0 || grace_s_ < 0) errors.push_back("--warmup and --grace cannot be negative");
}

void ProfileCommand::CheckShards(std::vector<std::string>& errors) {
  if (!shard_text_.empty()) {
    Result<load::Shard> shard = ShardOption(shard_text_);
    if (shard.ok())
      shard_ = *shard;
    else
      errors.push_back(shard.status().message());
  }
  if (!start_at_text_.empty()) {
    Result<int64_t> start_at = StartAtOption(start_at_text_);
    if (start_at.ok())
      start_at_unix_ms_ = *start_at;
    else
      errors.push_back(start_at.status().message());
  }
  // Every shard keeps to one plan: levels fixed in advance, each in a slot of known length.
  if (shard_.count > 1 && search_)
    errors.push_back(
        "--search decides each level from the one before, which no shard sees "
        "whole: a profile in shards takes fixed levels");
  if (shard_.count > 1 && !duration_s_)
    errors.push_back(
        "a profile in shards starts every level at the same planned offset in "
        "every shard: give --duration");
}

manifest::LoadPhase ProfileCommand::LoadPhase() const {
  manifest::LoadPhase phase{.kind = manifest::PhaseKind::kSweep};
  if (!trace_.empty()) {
    // The trace as recorded, sped up: one step, judged on its thresholds.
    phase.kind = manifest::PhaseKind::kSteady;
    phase.speedup = speedup_;
  } else if (search_) {
    phase.search = true;
    phase.rate = search_from_;
    phase.up_to = search_up_to_;
    phase.resolution = search_resolution_;
  } else {
    phase.concurrency_levels = concurrency_;
    phase.rate_levels = rates_;
  }
  phase.arrival = arrival_ == "constant" ? manifest::Arrival::kConstant
                  : arrival_ == "gamma"  ? manifest::Arrival::kGamma
                                         : manifest::Arrival::kPoisson;
  phase.burstiness = burstiness_;
  phase.ramp_to = ramp_to_;
  for (const load::RateSpike& s : rate_spikes_)
    phase.spikes.push_back({.at_s = s.at_s, .duration_s = s.duration_s, .rate = s.rate});
  phase.max_concurrency = max_concurrency_;
  phase.on_full = when_full_ == "drop" ? manifest::OnFull::kDrop : manifest::OnFull::kQueue;
  phase.duration_s = duration_s_;
  phase.requests = requests_;
  phase.grace_s = grace_s_;
  phase.keep_pace = keep_pace_;
  phase.min_completed = min_completed_;
  phase.max_duration_s = max_duration_s_;
  phase.warmup_requests = warmup_;
  phase.schedule_seed = seed_;
  phase.decide_levels = Gating();
  return phase;
}

manifest::InputSpec ProfileCommand::Input() const {
  const auto path = [](const std::string& given) {
    return manifest::PathRef{.written = given, .resolved = given};
  };
  manifest::InputSpec input{.extra_body = extra_};
  if (!tokenizer_path_.empty()) input.tokenizer = path(tokenizer_path_);
  input.output_tokens = Distribution(synthetic_.output_tokens);
  if (!corpus_dir_.empty()) {
    input.source = manifest::InputSource::kCorpus;
  } else if (!dataset_path_.empty()) {
    input.source = manifest::InputSource::kDataset;
    input.dataset = path(dataset_path_);
    input.dataset_format = dataset_format_;
    input.min_tokens = dataset_min_tokens_;
    input.max_tokens = dataset_max_tokens_;
    input.max_output_tokens = dataset_max_output_tokens_;
  } else if (!trace_.empty()) {
    input.source = manifest::InputSource::kTrace;
    input.trace = path(trace_);
    input.block_tokens = block_tokens_;
  } else {
    input.source = manifest::InputSource::kSynthetic;
    input.input_tokens = Distribution(synthetic_.input_tokens);
    const load::SharedPrefixes& prefixes = synthetic_.prefixes;
    if (prefixes.count > 0)
      input.shared_prefix = {
          .count = prefixes.count, .tokens = prefixes.tokens, .share = prefixes.share};
  }
  if (sessions_)
    input.sessions = {
        .turns = Distribution(sessions_->turns),
        .think_ms = Distribution(sessions_->think_ms),
        .follow_up_tokens = sessions_->follow_up_tokens
                                ? std::optional(Distribution(*sessions_->follow_up_tokens))
                                : std::nullopt};
  return input;
}

Status ProfileCommand::BuildScenario() {
  manifest::Scenario& s = bundle_.scenario;
  s.name = store::RunInfo::kProfileRunName;
  s.manifest.model = model_;
  s.seed = seed_;
  std::string base = url_;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  const bool chat = endpoint_ == "chat";
  s.target = {.kind = manifest::TargetKind::kOpenAi,
              .base_url = base,
              .api_key_env = api_key_env_,
              .metrics_url = metrics_url_,
              .model = model_,
              .endpoint = chat ? manifest::Endpoint::kChat : manifest::Endpoint::kCompletions,
              .stream = !no_stream_,
              .timeouts = {.connect_ms = timeouts_.connect_ms,
                           .first_token_ms = timeouts_.first_token_ms,
                           .total_ms = timeouts_.total_ms}};
  // --url names the API's root: the stage's path is the endpoint's below it.
  manifest::Stage stage{
      .name = "profile",
      .path = http::ApiPath(chat ? http::ApiKind::kChat : http::ApiKind::kCompletions),
      .tasks = manifest::TaskSelection::kAll};
  for (const std::string& header : headers_) {
    const size_t colon = header.find(':');
    stage.headers[std::string(Trim(header.substr(0, colon)))] =
        std::string(Trim(header.substr(colon + 1)));
  }
  s.stages = {std::move(stage)};
  s.input = Input();
  s.phases = {LoadPhase()};
  s.thresholds.latency = scenario::SloThresholds(slos_, slo_percentile_);
  s.telemetry = {.scrape_interval_ms = scrape_interval_ms_,
                 .gpu = gpu_.front() == "auto"   ? manifest::GpuTelemetry::kAuto
                        : gpu_.front() == "dcgm" ? manifest::GpuTelemetry::kDcgm
                                                 : manifest::GpuTelemetry::kOff,
                 .dcgm_url = gpu_.size() == 2 ? gpu_[1] : ""};
  s.slice_s = slice_s_;
  s.client = {.busy_poll = busy_poll_,
              .receive_times = receive_times_ == "read" ? manifest::ReceiveTimes::kRead
                                                        : manifest::ReceiveTimes::kKernel};

  std::vector<std::string> errors;
  manifest::Diagnostics diagnostics;
  if (!corpus_dir_.empty()) {
    bundle_.corpus = manifest::LoadCorpus(corpus_dir_, diagnostics);
    if (bundle_.corpus && bundle_.corpus->tasks.empty())
      errors.push_back(corpus_dir_ + ": the corpus has no tasks");
  }
  scenario::LoadInputFiles(s, diagnostics, input_);
  for (const manifest::Diagnostic& d : diagnostics.Sorted())
    errors.push_back(d.ToString());
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

json ProfileCommand::Config() const {
  json spikes = json::array();
  for (const load::RateSpike& s : rate_spikes_)
    spikes.push_back({{"at_s", s.at_s}, {"duration_s", s.duration_s}, {"rate", s.rate}});
  json slos = json::object();
  for (const load::Slo& slo : slos_)
    slos[slo.metric] = slo.max_ms;
  // Header names only: a value may be a secret.
  json header_names = json::array();
  for (const std::string& header : headers_)
    header_names.push_back(header.substr(0, header.find(':')));
  const tokenize::Tokenizer* tokenizer = input_.tokenizer.get();
  return {{"url", UrlWithoutUserinfo(url_)},
          {"model", model_},
          {"endpoint", endpoint_},
          {"stream", !no_stream_},
          {"concurrency", concurrency_},
          {"request_rate", rates_},
          {"arrival", arrival_},
          {"burstiness", burstiness_},
          {"ramp_to", ramp_to_ ? json(*ramp_to_) : json(nullptr)},
          {"spikes", spikes},
          {"max_concurrency", max_concurrency_ ? json(*max_concurrency_) : json(nullptr)},
          {"when_full", when_full_},
          {"trace", trace_},
          {"speedup", speedup_},
          {"trace_block_tokens", block_tokens_},
          {"shared_prefix", shared_prefix_},
          {"sessions", sessions_ ? json({{"turns", session_turns_},
                                         {"think_ms", think_time_},
                                         {"follow_up_tokens", follow_up_tokens_}})
                                 : json(nullptr)},
          {"requests", requests_ ? json(*requests_) : json(nullptr)},
          {"duration_s", duration_s_ ? json(*duration_s_) : json(nullptr)},
          {"warmup", warmup_},
          {"grace_s", grace_s_},
          {"input", InputConfig()},
          {"extra_inputs", extra_},
          {"headers", header_names},
          {"api_key_env", api_key_env_},
          {"slo", slos},
          {"seed", seed_},
          {"token_counts",
           tokenizer ? "tokenizer: " + tokenizer->Describe() + " (" + tokenizer_path_ + ")"
                     : "estimated: 4 bytes a token (no --tokenizer)"},
          {"receive_times", receive_times_},
          {"shard", load::FormatShard(shard_)},
          {"start_at_unix_ms", start_at_unix_ms_ ? json(*start_at_unix_ms_) : json(nullptr)},
          {"slo_percentile", slo_percentile_},
          {"keep_pace", keep_pace_},
          {"min_completed", min_completed_},
          {"max_duration_s", max_duration_s_ ? json(*max_duration_s_) : json(nullptr)},
          {"timeouts_ms",
           {{"connect", timeouts_.connect_ms},
            {"first_token", timeouts_.first_token_ms},
            {"total", timeouts_.total_ms}}}};
}

json ProfileCommand::InputConfig() const {
  if (bundle_.corpus) return {{"corpus", corpus_dir_}};
  const std::optional<load::Dataset>& dataset = input_.dataset;
  if (!dataset) return {{"input_tokens", input_tokens_}, {"output_tokens", output_tokens_}};
  const load::DatasetOptions options = DatasetOptions();
  const auto optional = [](const std::optional<int64_t>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {{"dataset", dataset_path_},
          {"sha256", dataset->sha256},
          {"format", load::DatasetFormatName(dataset->format)},
          {"entries", dataset->entries.size()},
          {"min_tokens", optional(options.min_tokens)},
          {"max_tokens", optional(options.max_tokens)},
          {"max_output_tokens", optional(options.max_output_tokens)},
          {"tokens", dataset->estimated ? "estimated" : "counted"},
          {"output_tokens", output_tokens_}};
}

void ProfileCommand::PrintLevels(console::Console& console,
                                 const std::vector<scenario::ProfileLevel>& levels,
                                 const std::optional<scenario::SweepResult>& sweep,
                                 bool interrupted) const {
  for (const std::string& line : scenario::ProfileTable(levels))
    console.Line(line);
  if (interrupted)
    console.Line("* interrupted: the level stopped early; what was measured is kept");
  for (const scenario::ProfileLevel& level : levels) {
    for (const std::string& line : scenario::SessionLines(level))
      console.Line(line);
    for (const std::string& line : scenario::SelfCheckLines(level))
      console.Line(line);
    for (const std::string& warning : level.metrics.warnings)
      console.Line("  note: " + warning);
  }
  const std::string unit = concurrency_.empty() ? "req/s" : "concurrent";
  for (const std::string& line : scenario::CapacityLines(levels, sweep, unit, search_))
    console.Line(line);
  if (search_ && sweep && sweep->finding.inconclusive && !max_duration_s_)
    console.Line(
        "  the search stopped at a level too short to tell: give --max-duration to let "
        "each level run on past --duration until it can");
}

ExitCode ProfileCommand::GateExit(const std::vector<scenario::ProfileLevel>& levels,
                                  const std::optional<scenario::SweepResult>& sweep) const {
  if (!Gating()) return ExitCode::kOk;
  // The gate: a search must find a sustained rate; fixed levels must all hold their SLOs.
  // One rule for both (docs/cli.md): a level that failed is 1; a level too short to tell (a
  // search: its first miss, whether or not a level held below it) is 4.
  if (search_) {
    if (!sweep || sweep->finding.inconclusive) return ExitCode::kPending;
    return sweep->finding.holds_up_to ? ExitCode::kOk : ExitCode::kGateFailed;
  }
  bool inconclusive = false;
  for (const scenario::ProfileLevel& level : levels) {
    if (level.Verdict() == scenario::LevelVerdict::kFail) return ExitCode::kGateFailed;
    inconclusive = inconclusive || level.Verdict() == scenario::LevelVerdict::kInconclusive;
  }
  return inconclusive ? ExitCode::kPending : ExitCode::kOk;
}

Status ProfileCommand::WriteOutputs(const std::string& out_dir, const std::string& run_id,
                                    const scenario::RunReport& report,
                                    const scenario::Runner& runner, store::Store& store,
                                    const std::vector<scenario::ProfileLevel>& levels,
                                    const std::optional<scenario::SweepResult>& sweep,
                                    bool interrupted, std::vector<std::string>& written) {
  json profile = scenario::ProfileJson(config_, manifest::ProfileFingerprint(config_), run_id,
                                       levels, interrupted);
  std::vector<scenario::LevelWindow> windows;
  for (const scenario::ProfileLevel& level : levels)
    windows.push_back({level.kind, level.value, level.started_ns, level.ended_ns});
  if (!report.telemetry.empty()) {
    std::vector<scenario::LevelSeries> series;
    for (const scenario::LevelWindow& level : windows) {
      Result<scenario::LevelSeries> read =
          report::ReadServerSeries(store, run_id, level.started_ns, level.ended_ns);
      if (!read.ok()) return read.status();
      series.push_back(std::move(*read));
    }
    profile["server_metrics"] = scenario::ServerMetricsJson(report.telemetry, windows, series);
  }
  const scenario::StageResult& stage = report.stages.front();
  if (slice_s_)
    for (size_t i = 0; i < levels.size(); ++i)
      profile["levels"][i]["slices"] =
          load::SlicesToJson(stage.steps[i].slices, stage.steps[i].started_ns);
  if (sweep) profile["capacity"] = scenario::CapacityJson(*sweep, !concurrency_.empty(), search_);
  // Record times are ns from this steady-clock reading (CLOCK_MONOTONIC), so they can be set
  // beside a server's own timestamps on the same machine.
  profile["origin_steady_ns"] = runner.origin_ns();
  if (!report.sharding.is_null()) profile["sharding"] = report.sharding;
  const bool synthetic = bundle_.scenario.input.source == manifest::InputSource::kSynthetic;
  Result<std::vector<std::string>> aiperf = scenario::WriteProfileOutputs(
      out_dir, profile, levels, runner.records(), slos_, synthetic ? &synthetic_ : nullptr,
      WallNsAtSteady(runner.origin_ns()));
  if (!aiperf.ok()) return aiperf.status();
  written = std::move(*aiperf);
  if (!report.telemetry.empty())
    SG_RETURN_IF_ERROR(
        WriteFileAtomically(out_dir + "/server_metrics.csv",
                            scenario::ServerMetricsCsv(report.telemetry_samples, windows)));
  return scenario::KeepFindings(store, run_id,
                                scenario::ProfileFindings(profile, model_, levels, sweep, search_),
                                interrupted);
}

scenario::RunSettings ProfileCommand::Settings() const {
  return {
      .workers = workers_,
      .response_memory_bytes = static_cast<int64_t>(std::ceil(response_memory_mib_ * (1 << 20))),
      .shard = shard_,
      .start_at_unix_ms = start_at_unix_ms_,
      .load_only = true,
      .keep_telemetry = true,
      .step_label = [](const std::string&, const scenario::PhaseStep& step) {
        return scenario::LevelLabel(scenario::LevelKind(step), step.level.value_or(0));
      }};
}

void PrintWritten(console::Console& console, const std::string& out_dir, const std::string& db_path,
                  bool telemetry, size_t aiperf_dirs) {
  console.Line("wrote " + out_dir + "/profile.json, " + out_dir + "/profile.csv, " + out_dir +
               "/requests.jsonl" + (telemetry ? ", " + out_dir + "/server_metrics.csv" : "") +
               "; store " + db_path);
  if (aiperf_dirs > 0)
    console.Line("AIPerf-compatible export: " +
                 (aiperf_dirs == 1 ? out_dir + "/profile_export_aiperf.json and .csv"
                                   : out_dir + "/aiperf/*/profile_export_aiperf.json and .csv"));
}

ExitCode ProfileCommand::Run(const GlobalOptions& global, console::Console& console) {
  const auto fail = [&console](const Status& status, ExitCode code) {
    for (const std::string& line : Split(status.message(), '\n'))
      console.Error("stagegate profile: " + line);
    return code;
  };
  if (Status checked = CheckOptions(); !checked.ok()) return fail(checked, ExitCode::kInvalidInput);
  if (Status built = BuildScenario(); !built.ok()) return fail(built, ExitCode::kInvalidInput);
  if (input_.dataset) console.Line("input: " + input_.dataset->Describe(DatasetOptions()));
  config_ = Config();
  const std::string fingerprint = manifest::ProfileFingerprint(config_);
  const std::string run_id = NewRunId("profile");
  const std::string out_dir = out_dir_.empty() ? "reports/" + run_id : out_dir_;
  const std::string db_path = global.db_path.empty() ? store::kDefaultStorePath : global.db_path;
  // The outputs are written after every level has run: a folder they cannot go to is found now.
  if (Status writable = CheckWritableDirectory(out_dir); !writable.ok())
    return fail(writable.WithContext("--out"), ExitCode::kRuntimeFailure);
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(db_path);
  if (!store.ok()) return fail(store.status(), ExitCode::kRuntimeFailure);
  if ((*store)->read_only())
    return fail(Status::StoreError(db_path + ": cannot write there (read-only)"),
                ExitCode::kRuntimeFailure);
  load::RaiseOpenFileLimit();

  std::atomic<bool> stop{false};
  StopOnSignal stop_on_signal(stop);
  const bool tokenizer = input_.tokenizer != nullptr;
  // A test's seam: its fake clock and scripted application instead of the steady clock and curl.
  scenario::Runner runner(bundle_, Settings(), **store, console, stop,
                          global.seam ? *global.seam : scenario::RunSeam());
  runner.UseInputFiles(std::move(input_));
  const auto create_run = [&] {
    return (*store)->CreateRun(
        {.id = run_id,
         .scenario_name = store::RunInfo::kProfileRunName,
         .fingerprint = fingerprint,
         .scenario_json = config_.dump(-1, ' ', false, json::error_handler_t::replace),
         .settings_json = WithRunFolder(json::object(), out_dir).dump(),
         .started_unix_ms = WallUnixMs()});
  };
  Result<scenario::RunReport> report = runner.Run(run_id, create_run);
  if (!report.ok())
    return fail(report.status(), report.status().code() == Status::Code::kInvalidInput
                                     ? ExitCode::kInvalidInput
                                     : ExitCode::kRuntimeFailure);
  std::vector<scenario::ProfileLevel> levels;
  bool interrupted = report->interrupted;
  for (const scenario::StepResult& step : report->stages.front().steps) {
    levels.push_back(scenario::LevelOf(step, runner.RecordsOf(step), tokenizer));
    interrupted = interrupted || step.interrupted;
  }
  std::optional<scenario::SweepResult> sweep;
  if (const scenario::StageResult& stage = report->stages.front();
      stage.capacity && !levels.empty())
    sweep = scenario::SweepResult{
        .outcomes = stage.sweep_levels, .finding = *stage.capacity, .took_s = stage.sweep_took_s};
  for (const std::string& note : report->notes)
    console.Line("note: " + note);
  PrintLevels(console, levels, sweep, interrupted);
  std::vector<std::string> aiperf;
  if (Status written = WriteOutputs(out_dir, run_id, *report, runner, **store, levels, sweep,
                                    interrupted, aiperf);
      !written.ok())
    return fail(written, ExitCode::kRuntimeFailure);
  console.Line("run " + run_id + (interrupted ? " (interrupted)" : ""));
  PrintWritten(console, out_dir, db_path, !report->telemetry.empty(), aiperf.size());
  if (interrupted) return ExitCode::kInterrupted;
  return GateExit(levels, sweep);
}

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() {
  return std::make_unique<ProfileCommand>();
}

}  // namespace stagegate::cli

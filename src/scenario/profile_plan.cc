#include "scenario/profile_plan.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/clock.h"
#include "base/files.h"
#include "base/http_header.h"
#include "base/redact.h"
#include "base/strings.h"
#include "http/openai_request.h"
#include "http/url_check.h"
#include "load/dataset.h"
#include "manifest/corpus.h"
#include "manifest/fingerprint.h"
#include "scenario/findings.h"
#include "scenario/shard_plan.h"

namespace stagegate::scenario {
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

// The checks of the load's shape (modes, search, levels and durations), and its defaults.
void CheckLoad(ProfileRequest& r, std::vector<std::string>& errors) {
  const int modes = !r.concurrency.empty() + !r.rates.empty() + !r.trace.empty();
  if (modes > 1) errors.push_back("give one of --concurrency, --request-rate and --trace");
  if (r.search) {
    if (!r.concurrency.empty() || !r.trace.empty())
      errors.push_back("--search finds a request rate: it does not take --concurrency or --trace");
    if (r.rates.size() > 1)
      errors.push_back("--search chooses its own levels: give where it starts with --search-from");
    if (r.rates.size() == 1) r.search_from = r.rates.front();
    // A level is named by its rate to 3 decimals: one that would read "0/s" is refused.
    if (!(r.search_from >= kLowestRate) || !std::isfinite(r.search_from))
      errors.push_back("--search-from must be at least " + FormatNumber(kLowestRate) +
                       " req/s, got " + GivenRate(r.search_from));
    if (r.search_up_to && !(*r.search_up_to >= r.search_from))
      errors.push_back("--search-up-to must be at least where the search starts");
    r.rates.clear();
    if (!r.requests && !r.duration_s) r.duration_s = 20;
  } else {
    for (const auto& [given, flag] : {std::pair{r.search_up_to.has_value(), "--search-up-to"},
                                      {r.search_from != 1, "--search-from"},
                                      {r.search_resolution != 0.1, "--search-resolution"}})
      if (given) errors.push_back(std::string(flag) + " applies only with --search");
    if (modes == 0) r.concurrency = {1};
  }
  if (r.max_duration_s && !(*r.max_duration_s > 0 && *r.max_duration_s <= 86'400))
    errors.push_back("--max-duration must be above 0 and at most 86400");
  if (r.max_duration_s && r.duration_s && *r.max_duration_s < *r.duration_s)
    errors.push_back("--max-duration is shorter than --duration");
  for (int64_t c : r.concurrency)
    if (c < 1) errors.push_back("--concurrency levels must be at least 1");
  if (!r.shard.empty())
    if (Result<load::Shard> shard = scenario::ShardOption(r.shard); shard.ok())
      for (int64_t c : r.concurrency)
        if (c < shard->count)
          errors.push_back("--concurrency " + std::to_string(c) + " cannot be split into " +
                           std::to_string(shard->count) +
                           " shards: each needs at least one request in flight");
  for (double rate : r.rates)
    if (!(rate >= kLowestRate) || !std::isfinite(rate))
      errors.push_back("--request-rate levels must be at least " + FormatNumber(kLowestRate) +
                       " req/s, got " + GivenRate(rate));
  if (!r.requests && !r.duration_s) r.requests = 100;
  if (r.requests && *r.requests < 1) errors.push_back("--requests must be at least 1");
  if (r.duration_s && !(*r.duration_s > 0)) errors.push_back("--duration must be above 0");
  if (r.warmup < 0 || r.grace_s < 0) errors.push_back("--warmup and --grace cannot be negative");
}

// --shard and --start-at, and what a plan in shards cannot have.
void CheckShards(ProfilePlan& p, std::vector<std::string>& errors) {
  const ProfileRequest& r = p.request;
  if (!r.shard.empty()) {
    Result<load::Shard> shard = ShardOption(r.shard);
    if (shard.ok())
      p.shard = *shard;
    else
      errors.push_back(shard.status().message());
  }
  if (!r.start_at.empty()) {
    Result<int64_t> start_at = StartAtOption(r.start_at);
    if (start_at.ok())
      p.start_at_unix_ms = *start_at;
    else
      errors.push_back(start_at.status().message());
  }
  // Every shard keeps to one plan: levels fixed in advance, each in a slot of known length.
  if (p.shard.count > 1 && r.search)
    errors.push_back(
        "--search decides each level from the one before, which no shard sees "
        "whole: a profile in shards takes fixed levels");
  if (p.shard.count > 1 && !r.duration_s)
    errors.push_back(
        "a profile in shards starts every level at the same planned offset in "
        "every shard: give --duration");
}

// Parses the values that need it into `p`; every problem, a line of `errors`.
void ParseRequest(ProfilePlan& p, std::vector<std::string>& errors) {
  ProfileRequest& r = p.request;
  const auto check = [&errors](const Status& status) {
    if (!status.ok()) errors.push_back(status.message());
  };
  CheckLoad(r, errors);
  for (const std::string& problem : TelemetryProblems(r))
    errors.push_back(problem);
  Result<load::TokenSpec> input = load::ParseTokenSpec("--input-tokens", r.input_tokens);
  Result<load::TokenSpec> output = load::ParseTokenSpec("--output-tokens", r.output_tokens);
  check(input.status());
  check(output.status());
  if (input.ok() && output.ok())
    p.synthetic = {.input_tokens = *input, .output_tokens = *output, .seed = r.seed};
  if (!r.session_turns.empty()) {
    if (r.endpoint != "chat" || !r.corpus_dir.empty() || !r.trace.empty() ||
        !r.dataset_path.empty())
      errors.push_back(
          "--session-turns runs synthetic chat sessions: the chat endpoint, and no --corpus, "
          "--trace or --dataset");
    Result<load::SessionShape> shape =
        load::ParseSessionShape(r.session_turns, r.think_time, r.follow_up_tokens);
    check(shape.status());
    if (shape.ok()) p.sessions = *shape;
  } else if (r.think_time != "0" || !r.follow_up_tokens.empty()) {
    errors.push_back("--think-time and --follow-up-tokens apply only with --session-turns");
  }
  if (!r.shared_prefix.empty()) {
    Result<load::SharedPrefixes> prefixes = load::ParseSharedPrefixes(r.shared_prefix);
    check(prefixes.status());
    if (prefixes.ok()) p.synthetic.prefixes = *prefixes;
  }
  for (const std::string& text : r.spikes) {
    Result<load::RateSpike> spike = ParseSpike(text);
    check(spike.status());
    if (spike.ok()) p.rate_spikes.push_back(*spike);
  }
  Result<json> extra = http::ParseExtraInputs(r.extra_inputs);
  check(extra.status());
  if (extra.ok()) p.extra = *extra;
  Result<std::vector<load::Slo>> slos = load::ParseSlos(r.slo);
  check(slos.status());
  if (slos.ok()) p.slos = *slos;
  if (!(r.response_memory_mib >= 0) || !std::isfinite(r.response_memory_mib))
    errors.push_back("--max-response-memory must be 0 (no limit) or more MiB");
  CheckShards(p, errors);
  check(CheckHeaders(r.headers, !r.api_key_env.empty()));
  if (!r.api_key_env.empty()) {
    const char* key = std::getenv(r.api_key_env.c_str());
    if (key == nullptr || *key == '\0')
      errors.push_back("--api-key-env: the environment variable " + r.api_key_env + " is not set");
  }
  if (r.dataset_min_tokens && r.dataset_max_tokens && *r.dataset_min_tokens > *r.dataset_max_tokens)
    errors.push_back("--dataset-min-tokens is above --dataset-max-tokens");
}

manifest::LoadPhase LoadPhase(const ProfilePlan& p) {
  const ProfileRequest& r = p.request;
  manifest::LoadPhase phase{.kind = manifest::PhaseKind::kSweep};
  if (!r.trace.empty()) {
    // The trace as recorded, sped up: one step, judged on its thresholds.
    phase.kind = manifest::PhaseKind::kSteady;
    phase.speedup = r.speedup;
  } else if (r.search) {
    phase.search = true;
    phase.rate = r.search_from;
    phase.up_to = r.search_up_to;
    phase.resolution = r.search_resolution;
  } else {
    phase.concurrency_levels = r.concurrency;
    phase.rate_levels = r.rates;
  }
  phase.arrival = r.arrival == "constant" ? manifest::Arrival::kConstant
                  : r.arrival == "gamma"  ? manifest::Arrival::kGamma
                                          : manifest::Arrival::kPoisson;
  phase.burstiness = r.burstiness;
  phase.ramp_to = r.ramp_to;
  for (const load::RateSpike& s : p.rate_spikes)
    phase.spikes.push_back({.at_s = s.at_s, .duration_s = s.duration_s, .rate = s.rate});
  phase.max_concurrency = r.max_concurrency;
  phase.on_full = r.when_full == "drop" ? manifest::OnFull::kDrop : manifest::OnFull::kQueue;
  phase.duration_s = r.duration_s;
  phase.requests = r.requests;
  phase.grace_s = r.grace_s;
  phase.keep_pace = r.keep_pace;
  phase.min_completed = r.min_completed;
  phase.max_duration_s = r.max_duration_s;
  phase.warmup_requests = r.warmup;
  phase.schedule_seed = r.seed;
  phase.decide_levels = p.gating();
  return phase;
}

manifest::InputSpec Input(const ProfilePlan& p) {
  const ProfileRequest& r = p.request;
  const auto path = [](const std::string& given) {
    return manifest::PathRef{.written = given, .resolved = given};
  };
  manifest::InputSpec input{.extra_body = p.extra};
  if (!r.tokenizer_path.empty()) input.tokenizer = path(r.tokenizer_path);
  input.output_tokens = Distribution(p.synthetic.output_tokens);
  if (!r.corpus_dir.empty()) {
    input.source = manifest::InputSource::kCorpus;
  } else if (!r.dataset_path.empty()) {
    input.source = manifest::InputSource::kDataset;
    input.dataset = path(r.dataset_path);
    input.dataset_format = r.dataset_format;
    input.min_tokens = r.dataset_min_tokens;
    input.max_tokens = r.dataset_max_tokens;
    input.max_output_tokens = r.dataset_max_output_tokens;
  } else if (!r.trace.empty()) {
    input.source = manifest::InputSource::kTrace;
    input.trace = path(r.trace);
    input.block_tokens = r.block_tokens;
  } else {
    input.source = manifest::InputSource::kSynthetic;
    input.input_tokens = Distribution(p.synthetic.input_tokens);
    const load::SharedPrefixes& prefixes = p.synthetic.prefixes;
    if (prefixes.count > 0)
      input.shared_prefix = {
          .count = prefixes.count, .tokens = prefixes.tokens, .share = prefixes.share};
  }
  if (p.sessions)
    input.sessions = {
        .turns = Distribution(p.sessions->turns),
        .think_ms = Distribution(p.sessions->think_ms),
        .follow_up_tokens = p.sessions->follow_up_tokens
                                ? std::optional(Distribution(*p.sessions->follow_up_tokens))
                                : std::nullopt};
  return input;
}

// The scenario the request describes, and the files its input names.
Status BuildScenario(ProfilePlan& p) {
  const ProfileRequest& r = p.request;
  manifest::Scenario& s = p.bundle.scenario;
  s.name = store::RunInfo::kProfileRunName;
  s.manifest.model = r.model;
  s.seed = r.seed;
  std::string base = r.url;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  const bool chat = r.endpoint == "chat";
  s.target = {.kind = manifest::TargetKind::kOpenAi,
              .base_url = base,
              .api_key_env = r.api_key_env,
              .metrics_url = r.metrics_url,
              .model = r.model,
              .endpoint = chat ? manifest::Endpoint::kChat : manifest::Endpoint::kCompletions,
              .stream = !r.no_stream,
              .timeouts = {.connect_ms = r.timeouts.connect_ms,
                           .first_token_ms = r.timeouts.first_token_ms,
                           .total_ms = r.timeouts.total_ms}};
  // --url names the API's root: the stage's path is the endpoint's below it.
  manifest::Stage stage{
      .name = "profile",
      .path = http::ApiPath(chat ? http::ApiKind::kChat : http::ApiKind::kCompletions),
      .tasks = manifest::TaskSelection::kAll};
  for (const std::string& header : r.headers) {
    const size_t colon = header.find(':');
    stage.headers[std::string(Trim(header.substr(0, colon)))] =
        std::string(Trim(header.substr(colon + 1)));
  }
  s.stages = {std::move(stage)};
  s.input = Input(p);
  s.phases = {LoadPhase(p)};
  s.thresholds.latency = SloThresholds(p.slos, r.slo_percentile);
  s.telemetry = {.scrape_interval_ms = r.scrape_interval_ms,
                 .gpu = r.gpu.front() == "auto"   ? manifest::GpuTelemetry::kAuto
                        : r.gpu.front() == "dcgm" ? manifest::GpuTelemetry::kDcgm
                                                  : manifest::GpuTelemetry::kOff,
                 .dcgm_url = r.gpu.size() == 2 ? r.gpu[1] : ""};
  s.slice_s = r.slice_s;
  s.client = {.busy_poll = r.busy_poll,
              .receive_times = r.receive_times == "read" ? manifest::ReceiveTimes::kRead
                                                         : manifest::ReceiveTimes::kKernel};

  std::vector<std::string> errors;
  manifest::Diagnostics diagnostics;
  if (!r.corpus_dir.empty()) {
    p.bundle.corpus = manifest::LoadCorpus(r.corpus_dir, diagnostics);
    if (p.bundle.corpus && p.bundle.corpus->tasks.empty())
      errors.push_back(r.corpus_dir + ": the corpus has no tasks");
  }
  LoadInputFiles(s, diagnostics, p.input);
  for (const manifest::Diagnostic& d : diagnostics.Sorted())
    errors.push_back(d.ToString());
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

json InputConfig(const ProfilePlan& p) {
  const ProfileRequest& r = p.request;
  if (p.bundle.corpus) return {{"corpus", r.corpus_dir}};
  const std::optional<load::Dataset>& dataset = p.input.dataset;
  if (!dataset) return {{"input_tokens", r.input_tokens}, {"output_tokens", r.output_tokens}};
  const load::DatasetOptions options = p.dataset_options();
  const auto optional = [](const std::optional<int64_t>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {{"dataset", r.dataset_path},
          {"sha256", dataset->sha256},
          {"format", load::DatasetFormatName(dataset->format)},
          {"entries", dataset->entries.size()},
          {"min_tokens", optional(options.min_tokens)},
          {"max_tokens", optional(options.max_tokens)},
          {"max_output_tokens", optional(options.max_output_tokens)},
          {"tokens", dataset->estimated ? "estimated" : "counted"},
          {"output_tokens", r.output_tokens}};
}

// profile.json's "config": the request as given, header names only.
json Config(const ProfilePlan& p) {
  const ProfileRequest& r = p.request;
  json spikes = json::array();
  for (const load::RateSpike& s : p.rate_spikes)
    spikes.push_back({{"at_s", s.at_s}, {"duration_s", s.duration_s}, {"rate", s.rate}});
  json slos = json::object();
  for (const load::Slo& slo : p.slos)
    slos[slo.metric] = slo.max_ms;
  // Header names only: a value may be a secret.
  json header_names = json::array();
  for (const std::string& header : r.headers)
    header_names.push_back(header.substr(0, header.find(':')));
  const tokenize::Tokenizer* tokenizer = p.input.tokenizer.get();
  return {{"url", UrlWithoutUserinfo(r.url)},
          {"model", r.model},
          {"endpoint", r.endpoint},
          {"stream", !r.no_stream},
          {"concurrency", r.concurrency},
          {"request_rate", r.rates},
          {"arrival", r.arrival},
          {"burstiness", r.burstiness},
          {"ramp_to", r.ramp_to ? json(*r.ramp_to) : json(nullptr)},
          {"spikes", spikes},
          {"max_concurrency", r.max_concurrency ? json(*r.max_concurrency) : json(nullptr)},
          {"when_full", r.when_full},
          {"trace", r.trace},
          {"speedup", r.speedup},
          {"trace_block_tokens", r.block_tokens},
          {"shared_prefix", r.shared_prefix},
          {"sessions", p.sessions ? json({{"turns", r.session_turns},
                                          {"think_ms", r.think_time},
                                          {"follow_up_tokens", r.follow_up_tokens}})
                                  : json(nullptr)},
          {"requests", r.requests ? json(*r.requests) : json(nullptr)},
          {"duration_s", r.duration_s ? json(*r.duration_s) : json(nullptr)},
          {"warmup", r.warmup},
          {"grace_s", r.grace_s},
          {"input", InputConfig(p)},
          {"extra_inputs", p.extra},
          {"headers", header_names},
          {"api_key_env", r.api_key_env},
          {"slo", slos},
          {"seed", r.seed},
          {"token_counts",
           tokenizer ? "tokenizer: " + tokenizer->Describe() + " (" + r.tokenizer_path + ")"
                     : "estimated: 4 bytes a token (no --tokenizer)"},
          {"receive_times", r.receive_times},
          {"shard", load::FormatShard(p.shard)},
          {"start_at_unix_ms", p.start_at_unix_ms ? json(*p.start_at_unix_ms) : json(nullptr)},
          {"slo_percentile", r.slo_percentile},
          {"keep_pace", r.keep_pace},
          {"min_completed", r.min_completed},
          {"max_duration_s", r.max_duration_s ? json(*r.max_duration_s) : json(nullptr)},
          {"timeouts_ms",
           {{"connect", r.timeouts.connect_ms},
            {"first_token", r.timeouts.first_token_ms},
            {"total", r.timeouts.total_ms}}}};
}

}  // namespace

load::DatasetOptions ProfilePlan::dataset_options() const {
  return {.format = load::DatasetFormatFromName(request.dataset_format),
          .min_tokens = request.dataset_min_tokens,
          .max_tokens = request.dataset_max_tokens,
          .max_output_tokens = request.dataset_max_output_tokens};
}

Result<ProfilePlan> PlanProfile(ProfileRequest request) {
  ProfilePlan plan{.request = std::move(request)};
  std::vector<std::string> errors;
  ParseRequest(plan, errors);
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  SG_RETURN_IF_ERROR(BuildScenario(plan));
  plan.config = Config(plan);
  return plan;
}

RunSettings ProfileSettings(const ProfilePlan& plan) {
  const double mib = plan.request.response_memory_mib;
  return {.workers = plan.request.workers,
          .response_memory_bytes = static_cast<int64_t>(std::ceil(mib * (1 << 20))),
          .shard = plan.shard,
          .start_at_unix_ms = plan.start_at_unix_ms,
          .load_only = true,
          .keep_telemetry = true,
          .step_label = [](const std::string&, const PhaseStep& step) {
            return LevelLabel(LevelKind(step), step.level.value_or(0));
          }};
}

ProfileRun ProfileRunOf(const RunReport& report, const Runner& runner, bool tokenizer) {
  ProfileRun run{.interrupted = report.interrupted};
  const StageResult& stage = report.stages.front();
  for (const StepResult& step : stage.steps) {
    run.levels.push_back(LevelOf(step, runner.RecordsOf(step), tokenizer));
    run.interrupted = run.interrupted || step.interrupted;
  }
  if (stage.capacity && !run.levels.empty())
    run.sweep = SweepResult{
        .outcomes = stage.sweep_levels, .finding = *stage.capacity, .took_s = stage.sweep_took_s};
  return run;
}

std::vector<std::string> ProfileLines(const ProfilePlan& plan, const ProfileRun& run) {
  const ProfileRequest& r = plan.request;
  std::vector<std::string> lines = ProfileTable(run.levels);
  const auto add = [&lines](const std::vector<std::string>& more) {
    lines.insert(lines.end(), more.begin(), more.end());
  };
  if (run.interrupted)
    lines.push_back("* interrupted: the level stopped early; what was measured is kept");
  for (const ProfileLevel& level : run.levels) {
    add(SessionLines(level));
    add(SelfCheckLines(level));
    for (const std::string& warning : level.metrics.warnings)
      lines.push_back("  note: " + warning);
  }
  const std::string unit = r.concurrency.empty() ? "req/s" : "concurrent";
  add(CapacityLines(run.levels, run.sweep, unit, r.search));
  if (r.search && run.sweep && run.sweep->finding.inconclusive && !r.max_duration_s)
    lines.push_back(
        "  the search stopped at a level too short to tell: give --max-duration to let "
        "each level run on past --duration until it can");
  return lines;
}

ExitCode ProfileExit(const ProfilePlan& plan, const ProfileRun& run) {
  if (!plan.gating()) return ExitCode::kOk;
  // The gate: a search must find a sustained rate; fixed levels must all hold their SLOs.
  // One rule for both (docs/cli.md): a level that failed is 1; a level too short to tell (a
  // search: its first miss, whether or not a level held below it) is 4.
  if (plan.request.search) {
    if (!run.sweep || run.sweep->finding.inconclusive) return ExitCode::kPending;
    return run.sweep->finding.holds_up_to ? ExitCode::kOk : ExitCode::kGateFailed;
  }
  bool inconclusive = false;
  for (const ProfileLevel& level : run.levels) {
    if (level.Verdict() == LevelVerdict::kFail) return ExitCode::kGateFailed;
    inconclusive = inconclusive || level.Verdict() == LevelVerdict::kInconclusive;
  }
  return inconclusive ? ExitCode::kPending : ExitCode::kOk;
}

Result<std::vector<std::string>> WriteProfile(const ProfilePlan& plan, const ProfileRun& run,
                                              const std::string& out_dir, const std::string& run_id,
                                              const RunReport& report,
                                              const std::vector<LevelSeries>& series,
                                              const Runner& runner, store::Store& store) {
  const ProfileRequest& r = plan.request;
  const std::vector<ProfileLevel>& levels = run.levels;
  json profile = ProfileJson(plan.config, manifest::ProfileFingerprint(plan.config), run_id, levels,
                             run.interrupted);
  std::vector<LevelWindow> windows;
  for (const ProfileLevel& level : levels)
    windows.push_back({level.kind, level.value, level.started_ns, level.ended_ns});
  if (!report.telemetry.empty())
    profile["server_metrics"] = ServerMetricsJson(report.telemetry, windows, series);
  const StageResult& stage = report.stages.front();
  if (r.slice_s)
    for (size_t i = 0; i < levels.size(); ++i)
      profile["levels"][i]["slices"] =
          load::SlicesToJson(stage.steps[i].slices, stage.steps[i].started_ns);
  if (run.sweep) profile["capacity"] = CapacityJson(*run.sweep, !r.concurrency.empty(), r.search);
  // Record times are ns from this steady-clock reading (CLOCK_MONOTONIC), so they can be set
  // beside a server's own timestamps on the same machine.
  profile["origin_steady_ns"] = runner.origin_ns();
  if (!report.sharding.is_null()) profile["sharding"] = report.sharding;
  const bool synthetic = plan.bundle.scenario.input.source == manifest::InputSource::kSynthetic;
  Result<std::vector<std::string>> aiperf = WriteProfileOutputs(
      out_dir, profile, levels, runner.records(), plan.slos, synthetic ? &plan.synthetic : nullptr,
      WallNsAtSteady(runner.origin_ns()));
  if (!aiperf.ok()) return aiperf.status();
  if (!report.telemetry.empty())
    SG_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/server_metrics.csv",
                                           ServerMetricsCsv(report.telemetry_samples, windows)));
  SG_RETURN_IF_ERROR(KeepFindings(store, run_id,
                                  ProfileFindings(profile, r.model, levels, run.sweep, r.search),
                                  run.interrupted));
  return aiperf;
}

Result<load::RateSpike> ParseSpike(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  double values[3] = {};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    char* end = nullptr;
    values[i] = std::strtod(parts[i].c_str(), &end);
    ok = !parts[i].empty() && *end == '\0' && values[i] >= 0 && values[i] <= 604'800;
  }
  ok = ok && values[1] > 0 && values[2] > 0 && values[2] <= 1e5;
  if (!ok)
    return Status::InvalidInput("--spike '" + text +
                                "': expected AT_S:DURATION_S:RATE, each within a week and the "
                                "rate at most 100,000 requests/s");
  return load::RateSpike{.at_s = values[0], .duration_s = values[1], .rate = values[2]};
}

Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env) {
  std::vector<std::string> errors;
  std::vector<std::string> names;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    if (colon == std::string::npos) {
      errors.push_back("--header '" + header + "': expected 'Name: value'");
      continue;
    }
    const std::string name = header.substr(0, colon);
    std::string_view value = std::string_view(header).substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    if (std::optional<std::string> problem = HeaderProblem(name, value)) {
      errors.push_back("--header: " + *problem);
      continue;
    }
    for (const std::string& earlier : names)
      if (SameHeaderName(earlier, name))
        errors.push_back("--header '" + name + "' is given twice (also as '" + earlier +
                         "'; names are case-insensitive)");
    names.push_back(name);
    if (api_key_env && SameHeaderName(name, "Authorization"))
      errors.push_back("--header '" + name +
                       "' and --api-key-env both send an Authorization "
                       "header; give one of them");
  }
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

std::vector<std::string> TelemetryProblems(const ProfileRequest& r) {
  std::vector<std::string> problems;
  if (!r.metrics_url.empty())
    if (Status url = http::CheckHttpUrl(r.metrics_url); !url.ok())
      problems.push_back("--metrics-url: " + url.message());
  const std::vector<std::string>& gpu = r.gpu;
  if (gpu.empty() || (gpu[0] != "auto" && gpu[0] != "off" && gpu[0] != "dcgm"))
    problems.push_back("--gpu: give auto, off, or dcgm URL");
  else if (gpu[0] == "dcgm" && gpu.size() != 2)
    problems.push_back("--gpu dcgm: give the DCGM exporter's metrics URL after it");
  else if (gpu[0] != "dcgm" && gpu.size() != 1)
    problems.push_back("--gpu " + gpu[0] + ": takes no URL");
  else if (gpu[0] == "dcgm")
    if (Status url = http::CheckHttpUrl(gpu[1]); !url.ok())
      problems.push_back("--gpu dcgm: " + url.message());
  if (r.scrape_interval_ms < 1) problems.push_back("--scrape-interval-ms: must be at least 1");
  return problems;
}

}  // namespace stagegate::scenario

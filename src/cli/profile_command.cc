// `stagegate profile`: one endpoint, no scenario file. Runs each load level in turn, prints a
// metrics table and a self-check, and writes profile.json, profile.csv, requests.jsonl and the
// store.

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/http_header.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/profile_options.h"
#include "cli/profile_report.h"
#include "cli/profile_telemetry.h"
#include "cli/run_support.h"
#include "cli/stored_run.h"
#include "http/openai_request.h"
#include "load/dataset.h"
#include "load/engine.h"
#include "load/metrics.h"
#include "load/progress.h"
#include "load/schedule.h"
#include "load/sessions.h"
#include "load/slices.h"
#include "load/synthetic.h"
#include "load/trace.h"
#include "manifest/corpus.h"
#include "manifest/fingerprint.h"
#include "scenario/capacity_search.h"
#include "scenario/findings.h"
#include "scenario/level_judge.h"
#include "scenario/runner.h"
#include "scenario/step_runner.h"
#include "store/store.h"
#include "tokenize/tokenizer.h"

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

class ProfileCommand : public Command, private ProfileFlags {
 public:
  void Configure(CLI::App& app) override { AddOptions(app); }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override;

 private:
  // One level as planned before anything runs, so schedule errors come before the store is
  // touched.
  struct LevelPlan {
    std::string kind;  // "concurrency", "request_rate" or "trace"
    double value = 0;
    load::LoadOptions options;
    std::optional<double> offered_rate;
  };
  Status Prepare();
  Status PlanLevels();
  Result<LevelPlan> PlanLevel(const std::string& kind, double value) const;
  Result<ProfileLevel> RunLevel(const LevelPlan& plan, scenario::StepRunner& steps);
  /// Runs the search, or each planned level; the sweep over them when they give a capacity
  /// finding (a search, or fixed levels of one kind).
  Result<std::optional<scenario::SweepResult>> RunLevels(scenario::StepRunner& steps,
                                                         const std::atomic<bool>& stop,
                                                         std::vector<ProfileLevel>& levels);
  /// The table, each level's sessions, self-check and notes, and the capacity finding.
  void PrintLevels(console::Console& console, const std::vector<ProfileLevel>& levels,
                   const std::optional<scenario::SweepResult>& sweep, bool interrupted) const;
  /// The exit code of a profile that was not interrupted: with --slo or a search, its gate.
  ExitCode GateExit(const std::vector<ProfileLevel>& levels,
                    const std::optional<scenario::SweepResult>& sweep) const;
  /// Levels are ended early once decided, and judged as a gate, only when asked for.
  bool Gating() const { return search_ || !slos_.empty(); }
  load::RequestSpec MakeRequest(int64_t sequence) const;
  Result<std::vector<load::Arrival>> Schedule(double rate) const;
  json Config() const;
  ProfileTelemetryOptions TelemetryOptions() const {
    return {.metrics_url = metrics_url_, .gpu = gpu_, .interval_ms = scrape_interval_ms_};
  }
  json InputConfig() const;
  load::DatasetOptions DatasetOptions() const {
    return {.format = load::DatasetFormatFromName(dataset_format_),
            .min_tokens = dataset_min_tokens_,
            .max_tokens = dataset_max_tokens_,
            .max_output_tokens = dataset_max_output_tokens_};
  }

  // Prepared from the options.
  std::unique_ptr<tokenize::Tokenizer> tokenizer_;  // --tokenizer
  std::optional<load::SessionShape> sessions_;
  http::RequestBodyOptions body_;
  load::SyntheticOptions synthetic_;
  std::vector<load::TraceEntry> trace_entries_;
  std::optional<manifest::Corpus> corpus_;
  std::optional<load::Dataset> dataset_;
  std::vector<std::string> request_headers_;  // may hold the API key: never printed or stored
  Redactor redactor_;                         // the API key and the URL's password
  std::vector<load::RateSpike> rate_spikes_;
  std::vector<load::Slo> slos_;
  load::Shard shard_;
  std::string endpoint_url_;
  std::vector<LevelPlan> plans_;
  scenario::LevelCriteria criteria_;          // every level's, but for its duration
  std::vector<load::RequestRecord> records_;  // every level's, for requests.jsonl
  int64_t next_slot_ns_ = 0;                  // in shards: where the next level's slot starts
};

Status ProfileCommand::Prepare() {
  std::vector<std::string> errors;
  const auto check = [&errors](const Status& status) {
    if (!status.ok()) errors.push_back(status.message());
  };
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
  for (const std::string& problem : CheckTelemetryOptions(TelemetryOptions()))
    errors.push_back(problem);
  if (!requests_ && !duration_s_) requests_ = 100;
  if (requests_ && *requests_ < 1) errors.push_back("--requests must be at least 1");
  if (duration_s_ && !(*duration_s_ > 0)) errors.push_back("--duration must be above 0");
  if (warmup_ < 0 || grace_s_ < 0) errors.push_back("--warmup and --grace cannot be negative");

  Result<load::TokenSpec> input = load::ParseTokenSpec("--input-tokens", input_tokens_);
  Result<load::TokenSpec> output = load::ParseTokenSpec("--output-tokens", output_tokens_);
  check(input.status());
  check(output.status());
  if (input.ok() && output.ok())
    synthetic_ = {.input_tokens = *input, .output_tokens = *output, .seed = seed_};
  if (!tokenizer_path_.empty()) {
    Result<std::unique_ptr<tokenize::Tokenizer>> loaded =
        tokenize::Tokenizer::Load(tokenizer_path_);
    check(loaded.status());
    if (loaded.ok()) tokenizer_ = std::move(*loaded);
    synthetic_.tokenizer = tokenizer_.get();
  }
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
  Result<std::vector<load::Slo>> slos = load::ParseSlos(slo_);
  check(slos.status());
  if (slos.ok()) slos_ = *slos;
  if (slos.ok()) {
    // Each SLO becomes a threshold at --slo-percentile, as a scenario's thresholds are.
    for (const load::Slo& slo : *slos) {
      const std::string name = slo.metric.substr(0, slo.metric.size() - 3);
      for (const auto& [metric, metric_name] : manifest::kLatencyMetricNames)
        if (metric_name == name)
          criteria_.thresholds.latency.push_back(
              {.metric = metric, .percentile = slo_percentile_, .max_ms = slo.max_ms});
    }
  }
  if (!(response_memory_mib_ >= 0) || !std::isfinite(response_memory_mib_))
    errors.push_back("--max-response-memory must be 0 (no limit) or more MiB");
  criteria_.min_share = keep_pace_;
  criteria_.min_completed = min_completed_;
  criteria_.max_duration_s = max_duration_s_;
  if (!shard_text_.empty()) {
    Result<load::Shard> shard = ShardOption(shard_text_);
    check(shard.status());
    if (shard.ok()) shard_ = *shard;
  }
  if (!start_at_text_.empty()) {
    Result<int64_t> start_at = StartAtOption(start_at_text_);
    check(start_at.status());
    if (start_at.ok()) start_at_unix_ms_ = *start_at;
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
  check(CheckHeaders(headers_, !api_key_env_.empty()));
  request_headers_ = headers_;
  if (!api_key_env_.empty()) {
    const char* key = std::getenv(api_key_env_.c_str());
    if (key == nullptr || *key == '\0') {
      errors.push_back("--api-key-env: the environment variable " + api_key_env_ + " is not set");
    } else {
      request_headers_.push_back(std::string("Authorization: Bearer ") + key);
      redactor_.Add(key);
    }
  }
  redactor_.AddAll(UrlSecrets(url_));
  if (!trace_.empty()) {
    Result<std::vector<load::TraceEntry>> entries = load::LoadTrace(trace_);
    check(entries.status());
    if (entries.ok()) trace_entries_ = std::move(*entries);
  }
  if (!corpus_dir_.empty()) {
    manifest::Diagnostics diagnostics;
    corpus_ = manifest::LoadCorpus(corpus_dir_, diagnostics);
    for (const manifest::Diagnostic& d : diagnostics.Sorted())
      errors.push_back(d.ToString());
    if (corpus_ && corpus_->tasks.empty())
      errors.push_back(corpus_dir_ + ": the corpus has no tasks");
    if (corpus_) criteria_.refusal_tasks = scenario::RefusalTasks(*corpus_);
  }
  if (dataset_min_tokens_ && dataset_max_tokens_ && *dataset_min_tokens_ > *dataset_max_tokens_)
    errors.push_back("--dataset-min-tokens is above --dataset-max-tokens");
  if (!dataset_path_.empty() && errors.empty()) {
    load::DatasetOptions options = DatasetOptions();
    if (tokenizer_)
      options.count_tokens = [this](std::string_view text) { return tokenizer_->Count(text); };
    load::DatasetLoad loaded = load::LoadDataset(dataset_path_, options);
    if (loaded.dataset)
      dataset_ = std::move(loaded.dataset);
    else
      errors.push_back(loaded.Message());
  }
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));

  body_ = {.api = endpoint_ == "chat" ? http::ApiKind::kChat : http::ApiKind::kCompletions,
           .model = model_,
           .stream = !no_stream_,
           .extra = *extra};
  std::string base = url_;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  endpoint_url_ = base + http::ApiPath(body_.api);
  return Status::Ok();
}

load::RequestSpec ProfileCommand::MakeRequest(int64_t sequence) const {
  load::RequestSpec spec{.url = endpoint_url_,
                         .headers = request_headers_,
                         .stream = body_.stream,
                         .redactor = &redactor_,
                         .tokenizer = tokenizer_.get()};
  http::RequestBodyOptions body = body_;
  if (corpus_) {
    const manifest::Task& task = corpus_->tasks[sequence % corpus_->tasks.size()];
    spec.task_id = task.id;
    if (!task.messages.empty() && body.api == http::ApiKind::kChat) {
      json messages = json::array();
      for (const manifest::ChatMessage& message : task.messages)
        messages.push_back({{"role", message.role}, {"content", message.content}});
      spec.body = http::BuildChatBody(body, messages);
    } else {
      spec.body = http::BuildRequestBody(
          body, task.messages.empty() ? task.prompt : task.messages.back().content);
    }
    return spec;
  }
  if (dataset_) {
    const load::DatasetEntry& entry =
        dataset_->entries[load::DatasetIndex(seed_, sequence, dataset_->entries.size())];
    body.max_tokens = std::llround(synthetic_.output_tokens.mean);
    spec.body = load::DatasetRequestBody(body, entry);
    spec.requested_input_tokens = entry.input_tokens;
    spec.requested_output_tokens = entry.output_tokens.value_or(*body.max_tokens);
    return spec;
  }
  load::SyntheticOptions options = synthetic_;
  const load::TraceEntry* entry = trace_entries_.empty() ? nullptr : &trace_entries_[sequence];
  if (entry) {
    options.input_tokens = {static_cast<double>(entry->input_length), 0};
    options.output_tokens = {static_cast<double>(entry->output_length), 0};
  }
  load::SyntheticInput input = load::MakeSyntheticInput(options, sequence);
  // Entries that name the same blocks share those prompt blocks, as in the traced system.
  if (entry && !entry->hash_ids.empty())
    input.prompt =
        load::MakeBlockPrompt(seed_, entry->hash_ids, block_tokens_, entry->input_length, sequence);
  body.max_tokens = input.output_tokens;
  spec.body = http::BuildRequestBody(body, input.prompt);
  spec.requested_input_tokens = input.input_tokens;
  spec.requested_output_tokens = input.output_tokens;
  return spec;
}

Result<std::vector<load::Arrival>> ProfileCommand::Schedule(double rate) const {
  if (!trace_entries_.empty())
    return load::BuildTraceSchedule(
        trace_entries_,
        {.speedup = speedup_, .requests = requests_, .duration_s = duration_s_, .shard = shard_});
  load::ArrivalProcess process = arrival_ == "constant" ? load::ArrivalProcess::kConstant
                                 : arrival_ == "gamma"  ? load::ArrivalProcess::kGamma
                                                        : load::ArrivalProcess::kPoisson;
  std::optional<int64_t> count = requests_;
  if (count) *count += warmup_;
  // A level that may run on until it can tell is planned for its longest.
  return load::BuildOpenLoop({.rate = rate,
                              .process = process,
                              .burstiness = burstiness_,
                              .ramp_to = ramp_to_,
                              .spikes = rate_spikes_,
                              .duration_s = max_duration_s_ ? max_duration_s_ : duration_s_,
                              .requests = count,
                              .seed = seed_,
                              .shard = shard_,
                              // Judged levels offer their nominal rate exactly.
                              .exact_count_s = Gating() ? duration_s_ : std::nullopt});
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
  return {{"url", UrlWithoutUserinfo(url_)},
          {"model", model_},
          {"endpoint", endpoint_},
          {"stream", body_.stream},
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
          {"extra_inputs", body_.extra},
          {"headers", header_names},
          {"api_key_env", api_key_env_},
          {"slo", slos},
          {"seed", seed_},
          {"token_counts",
           tokenizer_ ? "tokenizer: " + tokenizer_->Describe() + " (" + tokenizer_path_ + ")"
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
  if (corpus_) return {{"corpus", corpus_dir_}};
  if (!dataset_) return {{"input_tokens", input_tokens_}, {"output_tokens", output_tokens_}};
  const load::DatasetOptions options = DatasetOptions();
  const auto optional = [](const std::optional<int64_t>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {{"dataset", dataset_path_},
          {"sha256", dataset_->sha256},
          {"format", load::DatasetFormatName(dataset_->format)},
          {"entries", dataset_->entries.size()},
          {"min_tokens", optional(options.min_tokens)},
          {"max_tokens", optional(options.max_tokens)},
          {"max_output_tokens", optional(options.max_output_tokens)},
          {"tokens", dataset_->estimated ? "estimated" : "counted"},
          {"output_tokens", output_tokens_}};
}

Result<ProfileCommand::LevelPlan> ProfileCommand::PlanLevel(const std::string& kind,
                                                            double value) const {
  LevelPlan plan{.kind = kind, .value = value};
  plan.options = {
      .max_concurrency = max_concurrency_,
      .when_full = when_full_ == "drop" ? load::WhenFull::kDrop : load::WhenFull::kQueue,
      .warmup_requests = warmup_,
      .grace_s = grace_s_,
      .workers = workers_,
      .busy_poll = busy_poll_,
      .receive_times =
          receive_times_ == "read" ? load::ReceiveTimes::kRead : load::ReceiveTimes::kKernel,
      .shard = shard_,
      .timeouts = timeouts_,
      .response_memory_bytes = static_cast<int64_t>(std::ceil(response_memory_mib_ * (1 << 20)))};
  if (sessions_)
    plan.options.sessions = load::MakeSyntheticSessions(
        *sessions_, synthetic_, [this](const json& messages, int64_t output_tokens) {
          load::RequestSpec spec = MakeRequest(0);
          http::RequestBodyOptions body = body_;
          body.max_tokens = output_tokens;
          spec.body = http::BuildChatBody(body, messages);
          return spec;
        });
  if (kind == "concurrency") {
    plan.options.concurrency = static_cast<int64_t>(value);
    if (requests_) plan.options.requests = *requests_ + warmup_;
    plan.options.duration_s = max_duration_s_ ? max_duration_s_ : duration_s_;
    return plan;
  }
  Result<std::vector<load::Arrival>> arrivals = Schedule(value);
  if (!arrivals.ok()) return arrivals.status();
  plan.options.arrivals = std::move(*arrivals);
  const std::vector<load::Arrival>& a = plan.options.arrivals;
  if (a.size() > 1 && a.back().intended_ns > a.front().intended_ns)
    plan.offered_rate = static_cast<double>(a.size() - 1) /
                        (static_cast<double>(a.back().intended_ns - a.front().intended_ns) / 1e9);
  return plan;
}

Status ProfileCommand::PlanLevels() {
  std::vector<std::pair<std::string, double>> levels;
  for (int64_t c : concurrency_)
    levels.push_back({"concurrency", static_cast<double>(c)});
  for (double r : rates_)
    levels.push_back({"request_rate", r});
  if (!trace_entries_.empty()) levels.push_back({"trace", speedup_});
  // A search plans its first level here, so a schedule it cannot build fails before the store.
  if (search_) levels.push_back({"request_rate", search_from_});
  for (const auto& [kind, value] : levels) {
    Result<LevelPlan> plan = PlanLevel(kind, value);
    if (!plan.ok()) return plan.status();
    plans_.push_back(std::move(*plan));
  }
  return Status::Ok();
}

Result<ProfileLevel> ProfileCommand::RunLevel(const LevelPlan& plan, scenario::StepRunner& steps) {
  const std::string label = plan.kind == "concurrency" ? "c=" + FormatNumber(plan.value, 0)
                            : plan.kind == "trace"     ? "trace x" + FormatNumber(plan.value, 2)
                                                       : FormatNumber(plan.value, 2) + "/s";
  const load::RequestSource source = [this](int64_t sequence) { return MakeRequest(sequence); };
  const bool open_loop = plan.kind != "concurrency";
  const std::vector<load::Arrival>& arrivals = plan.options.arrivals;
  // The level's own duration: what was asked for, or how long its schedule of requests lasts.
  scenario::LevelCriteria criteria = criteria_;
  criteria.duration_s = duration_s_.value_or(
      arrivals.empty() ? 0 : static_cast<double>(arrivals.back().intended_ns) / 1e9);
  std::string ended_because;
  const int64_t planned =
      open_loop ? static_cast<int64_t>(arrivals.size()) : plan.options.requests.value_or(0);
  // In shards, each level holds a slot of the shared plan: its duration, then its grace.
  std::optional<int64_t> slot_ns;
  if (shard_.count > 1 || start_at_unix_ms_) {
    slot_ns = next_slot_ns_;
    next_slot_ns_ +=
        static_cast<int64_t>((max_duration_s_.value_or(duration_s_.value_or(0)) + grace_s_) * 1e9);
  }
  Result<scenario::StepRunner::Ran> ran =
      steps.Run({.stage = "profile",
                 .phase = plan.kind,
                 .level = plan.value,
                 .label = label,
                 .options = plan.options,
                 .source = source,
                 .end_early = (Gating() || max_duration_s_) && shard_.count == 1
                                  ? scenario::LevelController(criteria, open_loop, arrivals,
                                                              planned, ended_because)
                                  : scenario::StepRunner::EndEarly(),
                 .start_ns = slot_ns});
  if (!ran.ok()) return ran.status();
  load::LoadResult& result = ran->load;
  ProfileLevel level{.kind = plan.kind,
                     .value = plan.value,
                     .started_ns = result.started_ns,
                     .ended_ns = result.ended_ns,
                     .metrics = load::ComputeMetrics(result.records, slos_),
                     .offered_rate = plan.offered_rate,
                     .wall_s = static_cast<double>(result.ended_ns - result.started_ns) / 1e9,
                     .client_cpu_s = result.client_cpu_s,
                     .idle_poll_s = result.idle_poll_s,
                     .workers = result.workers,
                     .dropped = result.dropped,
                     .interrupted = result.interrupted,
                     .receive_times = plan.options.receive_times,
                     .receive = result.receive,
                     .start_lag_ns = result.start_lag_ns};
  level.judgement = scenario::JudgeLevel(result.records, level.metrics, {}, criteria, open_loop,
                                         result.started_ns, ran->ended_early ? ended_because : "");
  for (double busy : result.worker_busy)
    level.max_worker_busy = std::max(level.max_worker_busy, busy);
  CheckClient(level, result.records);
  if (tokenizer_)
    if (std::optional<std::string> check = TokenizerCheck(result.records))
      level.self_check_warnings.push_back(*check);
  if (sessions_)
    level.sessions = load::ComputeSessionMetrics(result.records, [this](int64_t session) {
      return load::SessionTurns(*sessions_, seed_, session);
    });
  level.first_record = records_.size();
  level.record_count = result.records.size();
  records_.reserve(records_.size() + result.records.size());
  for (load::RequestRecord& record : result.records)
    records_.push_back(std::move(record));
  return level;
}

Result<std::optional<scenario::SweepResult>> ProfileCommand::RunLevels(
    scenario::StepRunner& steps, const std::atomic<bool>& stop, std::vector<ProfileLevel>& levels) {
  std::optional<scenario::SweepResult> sweep;
  if (search_) {
    const scenario::RunLevel run_level = [&](double rate) -> Result<stats::LevelOutcome> {
      Result<LevelPlan> plan =
          levels.empty() ? Result<LevelPlan>(plans_.front()) : PlanLevel("request_rate", rate);
      if (!plan.ok()) return plan.status();
      Result<ProfileLevel> level = RunLevel(*plan, steps);
      if (!level.ok()) return level.status();
      levels.push_back(std::move(*level));
      return scenario::OutcomeOf(rate, *levels.back().judgement);
    };
    Result<scenario::SweepResult> searched = scenario::RunSweep({.search = true,
                                                                 .start = search_from_,
                                                                 .max_level = search_up_to_,
                                                                 .resolution = search_resolution_},
                                                                run_level, stop);
    if (!searched.ok()) return searched.status();
    sweep = std::move(*searched);
  } else {
    for (size_t ordinal = 0; ordinal < plans_.size() && !stop.load(); ++ordinal) {
      Result<ProfileLevel> level = RunLevel(plans_[ordinal], steps);
      if (!level.ok()) return level.status();
      levels.push_back(std::move(*level));
    }
    // The capacity finding of fixed levels of one kind (rates or concurrencies).
    if (trace_entries_.empty() && !levels.empty()) {
      sweep.emplace();
      for (const ProfileLevel& level : levels)
        sweep->outcomes.push_back(scenario::OutcomeOf(level.value, *level.judgement));
      sweep->finding = stats::FindCapacity(sweep->outcomes);
    }
  }
  return sweep;
}

void ProfileCommand::PrintLevels(console::Console& console, const std::vector<ProfileLevel>& levels,
                                 const std::optional<scenario::SweepResult>& sweep,
                                 bool interrupted) const {
  for (const std::string& line : ProfileTable(levels))
    console.Line(line);
  if (interrupted)
    console.Line("* interrupted: the level stopped early; what was measured is kept");
  for (const ProfileLevel& level : levels) {
    for (const std::string& line : SessionLines(level))
      console.Line(line);
    for (const std::string& line : SelfCheckLines(level))
      console.Line(line);
    for (const std::string& warning : level.metrics.warnings)
      console.Line("  note: " + warning);
  }
  const std::string unit = concurrency_.empty() ? "req/s" : "concurrent";
  for (const std::string& line : CapacityLines(levels, sweep, unit, search_))
    console.Line(line);
  if (search_ && sweep && sweep->finding.inconclusive && !max_duration_s_)
    console.Line(
        "  the search stopped at a level too short to tell: give --max-duration to let "
        "each level run on past --duration until it can");
}

ExitCode ProfileCommand::GateExit(const std::vector<ProfileLevel>& levels,
                                  const std::optional<scenario::SweepResult>& sweep) const {
  if (!Gating()) return ExitCode::kOk;
  // The gate: a search must find a sustained rate; fixed levels must all hold their SLOs.
  // One rule for both (docs/cli.md): a level that failed is 1; a level too short to tell (a
  // search: its first miss, whether or not a level held below it) is 4.
  if (search_) {
    if (sweep->finding.inconclusive) return ExitCode::kPending;
    return sweep->finding.holds_up_to ? ExitCode::kOk : ExitCode::kGateFailed;
  }
  bool inconclusive = false;
  for (const ProfileLevel& level : levels) {
    if (level.judgement->verdict == scenario::LevelVerdict::kFail) return ExitCode::kGateFailed;
    inconclusive =
        inconclusive || level.judgement->verdict == scenario::LevelVerdict::kInconclusive;
  }
  return inconclusive ? ExitCode::kPending : ExitCode::kOk;
}

ExitCode ProfileCommand::Run(const GlobalOptions& global, console::Console& console) {
  const auto fail = [&console](const Status& status, ExitCode code) {
    for (const std::string& line : Split(status.message(), '\n'))
      console.Error("stagegate profile: " + line);
    return code;
  };
  if (Status prepared = Prepare(); !prepared.ok()) return fail(prepared, ExitCode::kInvalidInput);
  if (Status planned = PlanLevels(); !planned.ok()) return fail(planned, ExitCode::kInvalidInput);
  if (dataset_) console.Line("input: " + dataset_->Describe(DatasetOptions()));
  const json config = Config();
  const std::string fingerprint = manifest::ProfileFingerprint(config);
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
  if (Status created = (*store)->CreateRun(
          {.id = run_id,
           .scenario_name = store::RunInfo::kProfileRunName,
           .fingerprint = fingerprint,
           .scenario_json = config.dump(-1, ' ', false, json::error_handler_t::replace),
           .settings_json = WithRunFolder(json::object(), out_dir).dump(),
           .started_unix_ms = WallUnixMs()});
      !created.ok())
    return fail(created, ExitCode::kRuntimeFailure);
  load::RaiseOpenFileLimit();

  std::atomic<bool> stop{false};
  StopOnSignal stop_on_signal(stop);
  // In shards, time zero is the agreed instant, read through the wall and steady clocks.
  const ClockAnchors anchors = ReadClockAnchors();
  // A test's seam: its fake clock and scripted application instead of the steady clock and curl.
  const scenario::RunSeam seam = global.seam ? *global.seam : scenario::RunSeam();
  const int64_t origin_ns =
      start_at_unix_ms_ ? anchors.steady_ns + (*start_at_unix_ms_ * 1'000'000 - anchors.wall_ns)
                        : seam.clock->NowNs();
  scenario::StepRunner steps({.run_id = run_id,
                              .store = **store,
                              .console = console,
                              .clock = *seam.clock,
                              .origin_ns = origin_ns,
                              .stop = stop,
                              .transport = seam.transport,
                              .ticks_on_clock = seam.ticks_on_clock});
  std::vector<std::string> telemetry_notes;
  ProfileTelemetry telemetry(TelemetryOptions(), origin_ns, telemetry_notes);
  for (const std::string& note : telemetry_notes)
    console.Line("note: " + note);
  std::vector<ProfileLevel> levels;
  const auto fail_run = [&](const Status& status) {
    return fail(status, ExitCode::kRuntimeFailure);
  };
  Result<std::optional<scenario::SweepResult>> ran = RunLevels(steps, stop, levels);
  if (!ran.ok()) return fail_run(ran.status());
  const std::optional<scenario::SweepResult>& sweep = *ran;
  bool interrupted = stop.load();
  for (const ProfileLevel& level : levels)
    interrupted = interrupted || level.interrupted;
  if (Status stored = telemetry.Finish(**store, run_id); !stored.ok()) return fail_run(stored);

  PrintLevels(console, levels, sweep, interrupted);
  json profile = ProfileJson(config, fingerprint, run_id, levels, interrupted);
  std::vector<LevelWindow> windows;
  for (const ProfileLevel& level : levels)
    windows.push_back({level.kind, level.value, level.started_ns, level.ended_ns});
  if (telemetry.any()) {
    Result<json> server = telemetry.Json(windows, **store, run_id);
    if (!server.ok()) return fail_run(server.status());
    profile["server_metrics"] = std::move(*server);
  }
  if (slice_s_)
    for (size_t i = 0; i < levels.size(); ++i) {
      const ProfileLevel& level = levels[i];
      const std::span<const load::RequestRecord> records =
          std::span<const load::RequestRecord>(records_).subspan(level.first_record,
                                                                 level.record_count);
      profile["levels"][i]["slices"] =
          load::SlicesToJson(load::ComputeSlices(records, slos_, level.started_ns, level.ended_ns,
                                                 static_cast<int64_t>(*slice_s_ * 1e9)),
                             level.started_ns);
    }
  if (sweep) profile["capacity"] = scenario::CapacityJson(*sweep, !concurrency_.empty(), search_);
  // Record times are ns from this steady-clock reading (CLOCK_MONOTONIC), so they can be set
  // beside a server's own timestamps on the same machine.
  profile["origin_steady_ns"] = steps.context().origin_ns;
  if (shard_.count > 1 || start_at_unix_ms_)
    profile["sharding"] = {
        {"shard", load::FormatShard(shard_)},
        {"start_at_unix_ms", start_at_unix_ms_ ? json(*start_at_unix_ms_) : json(nullptr)},
        {"anchors", {{"wall_ns", anchors.wall_ns}, {"steady_ns", anchors.steady_ns}}},
        {"origin_steady_ns", origin_ns}};
  Result<std::vector<std::string>> aiperf =
      WriteProfileOutputs(out_dir, profile, levels, records_, slos_,
                          corpus_ || dataset_ || !trace_entries_.empty() ? nullptr : &synthetic_,
                          WallNsAtSteady(steps.context().origin_ns));
  if (!aiperf.ok()) return fail(aiperf.status(), ExitCode::kRuntimeFailure);
  if (telemetry.any())
    if (Status written =
            WriteFileAtomically(out_dir + "/server_metrics.csv", telemetry.Csv(windows));
        !written.ok())
      return fail(written, ExitCode::kRuntimeFailure);
  if (Status kept = KeepFindings(
          **store, run_id, ProfileFindings(profile, model_, levels, sweep, search_), interrupted);
      !kept.ok())
    return fail(kept, ExitCode::kRuntimeFailure);
  console.Line("run " + run_id + (interrupted ? " (interrupted)" : ""));
  console.Line("wrote " + out_dir + "/profile.json, " + out_dir + "/profile.csv, " + out_dir +
               "/requests.jsonl" + (telemetry.any() ? ", " + out_dir + "/server_metrics.csv" : "") +
               "; store " + db_path);
  if (!aiperf->empty())
    console.Line("AIPerf-compatible export: " +
                 (aiperf->size() == 1 ? out_dir + "/profile_export_aiperf.json and .csv"
                                      : out_dir + "/aiperf/*/profile_export_aiperf.json and .csv"));
  if (interrupted) return ExitCode::kInterrupted;
  return GateExit(levels, sweep);
}

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() {
  return std::make_unique<ProfileCommand>();
}

}  // namespace stagegate::cli

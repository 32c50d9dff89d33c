// `stagegate profile`: one endpoint, no scenario file. Runs each load level in turn, prints a
// metrics table and a self-check, and writes profile.json, profile.csv, requests.jsonl and the
// store.

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/hashing.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/profile_report.h"
#include "cli/run_support.h"
#include "http/openai_request.h"
#include "load/engine.h"
#include "load/metrics.h"
#include "load/progress.h"
#include "load/schedule.h"
#include "load/synthetic.h"
#include "load/trace.h"
#include "manifest/corpus.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// "MEAN" or "MEAN:STD".
Result<load::TokenSpec> ParseTokenSpec(const std::string& flag, const std::string& text) {
  load::TokenSpec spec;
  const std::vector<std::string> parts = Split(text, ':');
  char* end = nullptr;
  spec.mean = std::strtod(parts[0].c_str(), &end);
  bool ok = parts.size() <= 2 && *end == '\0' && !parts[0].empty() && spec.mean >= 1;
  if (ok && parts.size() == 2) {
    spec.std = std::strtod(parts[1].c_str(), &end);
    ok = *end == '\0' && !parts[1].empty() && spec.std >= 0;
  }
  if (!ok)
    return Status::InvalidInput(flag + " '" + text + "': expected MEAN or MEAN:STD, MEAN >= 1");
  return spec;
}

// "AT:DURATION:RATE", seconds and requests/s.
Result<load::RateSpike> ParseSpike(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  double values[3] = {};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    char* end = nullptr;
    values[i] = std::strtod(parts[i].c_str(), &end);
    ok = !parts[i].empty() && *end == '\0';
  }
  if (!ok) return Status::InvalidInput("--spike '" + text + "': expected AT_S:DURATION_S:RATE");
  return load::RateSpike{.at_s = values[0], .duration_s = values[1], .rate = values[2]};
}

class ProfileCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("--url", url_,
                   "Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
        ->required();
    app.add_option("--model", model_, "Model name sent in every request")->required();
    app.add_option("--endpoint", endpoint_, "chat or completions")
        ->check(CLI::IsMember({"chat", "completions"}))
        ->capture_default_str();
    app.add_flag("--no-stream", no_stream_,
                 "Ask for whole answers (then TTFT, TTST, ITL and TPOT are not measured)");
    app.add_option("--concurrency", concurrency_,
                   "Closed loop: levels of requests in flight, e.g. 1,2,4,8")
        ->delimiter(',');
    app.add_option("--request-rate", rates_, "Open loop: levels of requests/s, e.g. 2,4,8")
        ->delimiter(',');
    app.add_option("--arrival", arrival_, "Open-loop arrivals: constant, poisson or gamma")
        ->check(CLI::IsMember({"constant", "poisson", "gamma"}))
        ->capture_default_str();
    app.add_option("--burstiness", burstiness_, "Gamma shape k (inter-arrival CV 1/sqrt(k))")
        ->capture_default_str();
    app.add_option("--ramp-to", ramp_to_, "Open loop: ramp linearly to this rate over --duration");
    app.add_option("--spike", spikes_,
                   "Open loop: AT_S:DURATION_S:RATE replaces the rate (repeatable)");
    app.add_option("--max-concurrency", max_concurrency_, "Open loop: cap on requests in flight");
    app.add_option("--when-full", when_full_, "Under the cap: queue (and record the wait) or drop")
        ->check(CLI::IsMember({"queue", "drop"}))
        ->capture_default_str();
    app.add_option("--trace", trace_,
                   "Replay a JSONL trace (timestamp ms, input_length, output_length)");
    app.add_option("--speedup", speedup_, "Trace replay speed factor")->capture_default_str();
    app.add_option("--requests", requests_, "Requests per level (default 100 unless --duration)");
    app.add_option("--duration", duration_s_, "Seconds per level");
    app.add_option("--warmup", warmup_, "Requests per level sent first and left out of statistics")
        ->capture_default_str();
    app.add_option("--grace", grace_s_, "Seconds requests in flight at the end may finish")
        ->capture_default_str();
    app.add_option("--input-tokens", input_tokens_, "Synthetic prompt length MEAN[:STD] in tokens")
        ->capture_default_str();
    app.add_option("--output-tokens", output_tokens_,
                   "Requested output length MEAN[:STD] (max_tokens)")
        ->capture_default_str();
    app.add_option("--corpus", corpus_dir_,
                   "Send the prompts of this corpus's tasks instead of synthetic ones");
    app.add_option("--extra-inputs", extra_inputs_,
                   "JSON fields merged into every body, e.g. ignore_eos:true,min_tokens:128");
    app.add_option("--header", headers_, "Extra request header 'Name: value' (repeatable)");
    app.add_option(
        "--api-key-env", api_key_env_,
        "Environment variable holding the API key (sent as a Bearer token, never stored)");
    app.add_option("--slo", slo_, "SLOs for goodput, e.g. ttft_ms:500,e2e_ms:4000");
    app.add_option("--seed", seed_, "Seed of schedules and synthetic prompts")
        ->capture_default_str();
    app.add_option("--workers", workers_, "Worker threads (0: one per hardware thread)")
        ->capture_default_str();
    app.add_flag("--busy-poll", busy_poll_,
                 "Workers poll without sleeping (a core each), so they read what arrived without a "
                 "wake-up's delay");
    app.add_option("--receive-times", receive_times_,
                   "Stamp token arrivals with the kernel's receive time (kernel) or when the "
                   "client read them (read)")
        ->check(CLI::IsMember({"kernel", "read"}))
        ->capture_default_str();
    app.add_option("--shard", shard_text_, "Take slice I of N of the schedule, e.g. 1/4");
    app.add_option("--connect-timeout-ms", timeouts_.connect_ms,
                   "Give up connecting after this long")
        ->capture_default_str();
    app.add_option("--first-token-timeout-ms", timeouts_.first_token_ms,
                   "Give up when no token came this long after the send")
        ->capture_default_str();
    app.add_option("--total-timeout-ms", timeouts_.total_ms, "Give up on a request after this long")
        ->capture_default_str();
    app.add_option("--out", out_dir_, "Output folder (default reports/<run id>)");
  }

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
  // What every level of one run shares.
  struct RunContext {
    const std::string& run_id;
    store::Store& store;
    console::Console& console;
    const Clock& clock;
    int64_t origin_ns = 0;
    std::atomic<bool>& stop;
    std::vector<load::RequestRecord>& records;  // every level's, for requests.jsonl
  };

  Status Prepare();
  Status PlanLevels();
  Result<ProfileLevel> RunLevel(const LevelPlan& plan, int64_t ordinal, const RunContext& context);
  load::RequestSpec MakeRequest(int64_t sequence) const;
  Result<std::vector<load::Arrival>> Schedule(double rate) const;
  json Config() const;

  std::string url_, model_, endpoint_ = "chat";
  bool no_stream_ = false;
  std::vector<int64_t> concurrency_;
  std::vector<double> rates_;
  std::string arrival_ = "poisson";
  double burstiness_ = 1;
  std::optional<double> ramp_to_;
  std::vector<std::string> spikes_;
  std::optional<int64_t> max_concurrency_;
  std::string when_full_ = "queue";
  std::string trace_;
  double speedup_ = 1;
  std::optional<int64_t> requests_;
  std::optional<double> duration_s_;
  int64_t warmup_ = 0;
  double grace_s_ = 5;
  std::string input_tokens_ = "550", output_tokens_ = "128";
  std::string corpus_dir_;
  std::string extra_inputs_;
  std::vector<std::string> headers_;
  std::string api_key_env_;
  std::string slo_;
  uint64_t seed_ = 1;
  int workers_ = 0;
  bool busy_poll_ = false;
  std::string receive_times_ = "kernel";
  std::string shard_text_;
  load::Timeouts timeouts_;
  std::string out_dir_;

  // Prepared from the options.
  http::RequestBodyOptions body_;
  load::SyntheticOptions synthetic_;
  std::vector<load::TraceEntry> trace_entries_;
  std::optional<manifest::Corpus> corpus_;
  std::vector<std::string> request_headers_;  // may hold the API key: never printed or stored
  std::vector<load::RateSpike> rate_spikes_;
  std::vector<load::Slo> slos_;
  load::Shard shard_;
  std::string endpoint_url_;
  std::vector<LevelPlan> plans_;
};

Status ProfileCommand::Prepare() {
  std::vector<std::string> errors;
  const auto check = [&errors](const Status& status) {
    if (!status.ok()) errors.push_back(status.message());
  };
  const int modes = !concurrency_.empty() + !rates_.empty() + !trace_.empty();
  if (modes > 1) errors.push_back("give one of --concurrency, --request-rate and --trace");
  if (modes == 0) concurrency_ = {1};
  for (int64_t c : concurrency_)
    if (c < 1) errors.push_back("--concurrency levels must be at least 1");
  if (!shard_text_.empty())
    if (Result<load::Shard> shard = load::ParseShard(shard_text_); shard.ok())
      for (int64_t c : concurrency_)
        if (c < shard->count)
          errors.push_back("--concurrency " + std::to_string(c) + " cannot be split into " +
                           std::to_string(shard->count) +
                           " shards: each needs at least one request in flight");
  for (double r : rates_)
    if (!(r > 0)) errors.push_back("--request-rate levels must be above 0");
  if (!requests_ && !duration_s_) requests_ = 100;
  if (requests_ && *requests_ < 1) errors.push_back("--requests must be at least 1");
  if (duration_s_ && !(*duration_s_ > 0)) errors.push_back("--duration must be above 0");
  if (warmup_ < 0 || grace_s_ < 0) errors.push_back("--warmup and --grace cannot be negative");

  Result<load::TokenSpec> input = ParseTokenSpec("--input-tokens", input_tokens_);
  Result<load::TokenSpec> output = ParseTokenSpec("--output-tokens", output_tokens_);
  check(input.status());
  check(output.status());
  if (input.ok() && output.ok())
    synthetic_ = {.input_tokens = *input, .output_tokens = *output, .seed = seed_};
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
  if (!shard_text_.empty()) {
    Result<load::Shard> shard = load::ParseShard(shard_text_);
    check(shard.status());
    if (shard.ok()) shard_ = *shard;
  }
  for (const std::string& header : headers_)
    if (header.find(':') == std::string::npos)
      errors.push_back("--header '" + header + "': expected 'Name: value'");
  request_headers_ = headers_;
  if (!api_key_env_.empty()) {
    const char* key = std::getenv(api_key_env_.c_str());
    if (key == nullptr || *key == '\0')
      errors.push_back("--api-key-env: the environment variable " + api_key_env_ + " is not set");
    else
      request_headers_.push_back(std::string("Authorization: Bearer ") + key);
  }
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
  load::RequestSpec spec{.url = endpoint_url_, .headers = request_headers_, .stream = body_.stream};
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
  load::SyntheticOptions options = synthetic_;
  if (!trace_entries_.empty()) {
    const load::TraceEntry& entry = trace_entries_[sequence];
    options.input_tokens = {static_cast<double>(entry.input_length), 0};
    options.output_tokens = {static_cast<double>(entry.output_length), 0};
  }
  load::SyntheticInput input = load::MakeSyntheticInput(options, sequence);
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
  return load::BuildOpenLoop({.rate = rate,
                              .process = process,
                              .burstiness = burstiness_,
                              .ramp_to = ramp_to_,
                              .spikes = rate_spikes_,
                              .duration_s = duration_s_,
                              .requests = count,
                              .seed = seed_,
                              .shard = shard_});
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
  return {{"url", url_},
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
          {"requests", requests_ ? json(*requests_) : json(nullptr)},
          {"duration_s", duration_s_ ? json(*duration_s_) : json(nullptr)},
          {"warmup", warmup_},
          {"grace_s", grace_s_},
          {"input",
           corpus_ ? json({{"corpus", corpus_dir_}})
                   : json({{"input_tokens", input_tokens_}, {"output_tokens", output_tokens_}})},
          {"extra_inputs", body_.extra},
          {"headers", header_names},
          {"api_key_env", api_key_env_},
          {"slo", slos},
          {"seed", seed_},
          {"receive_times", receive_times_},
          {"shard", load::FormatShard(shard_)},
          {"timeouts_ms",
           {{"connect", timeouts_.connect_ms},
            {"first_token", timeouts_.first_token_ms},
            {"total", timeouts_.total_ms}}}};
}

Status ProfileCommand::PlanLevels() {
  std::vector<std::pair<std::string, double>> levels;
  for (int64_t c : concurrency_)
    levels.push_back({"concurrency", static_cast<double>(c)});
  for (double r : rates_)
    levels.push_back({"request_rate", r});
  if (!trace_entries_.empty()) levels.push_back({"trace", speedup_});
  for (const auto& [kind, value] : levels) {
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
        .timeouts = timeouts_};
    if (kind == "concurrency") {
      plan.options.concurrency = static_cast<int64_t>(value);
      if (requests_) plan.options.requests = *requests_ + warmup_;
      plan.options.duration_s = duration_s_;
    } else {
      Result<std::vector<load::Arrival>> arrivals = Schedule(value);
      if (!arrivals.ok()) return arrivals.status();
      plan.options.arrivals = std::move(*arrivals);
      const std::vector<load::Arrival>& a = plan.options.arrivals;
      if (a.size() > 1 && a.back().intended_ns > a.front().intended_ns)
        plan.offered_rate =
            static_cast<double>(a.size() - 1) /
            (static_cast<double>(a.back().intended_ns - a.front().intended_ns) / 1e9);
    }
    plans_.push_back(std::move(plan));
  }
  return Status::Ok();
}

Result<ProfileLevel> ProfileCommand::RunLevel(const LevelPlan& plan, int64_t ordinal,
                                              const RunContext& context) {
  store::PhaseInfo phase{.run_id = context.run_id,
                         .ordinal = ordinal,
                         .stage = "profile",
                         .phase = plan.kind,
                         .level = plan.value,
                         .status = "running"};
  Result<int64_t> phase_id = context.store.AddPhase(phase);
  if (!phase_id.ok()) return phase_id.status();

  const std::string label = plan.kind == "concurrency" ? "c=" + FormatNumber(plan.value, 0)
                            : plan.kind == "trace"     ? "trace x" + FormatNumber(plan.value, 2)
                                                       : FormatNumber(plan.value, 2) + "/s";
  load::RunControl control{
      .clock = &context.clock, .origin_ns = context.origin_ns, .stop = &context.stop};
  control.on_tick = load::ProgressLine(context.console, context.clock, label);
  const load::RequestSource source = [this](int64_t sequence) { return MakeRequest(sequence); };
  Result<load::LoadResult> result = load::RunLoad(plan.options, source, control);
  context.console.EndProgress();
  if (!result.ok()) return result.status();

  for (load::RequestRecord& record : result->records) {
    record.run_id = context.run_id;
    record.phase_id = *phase_id;
  }
  SG_RETURN_IF_ERROR(context.store.AddRequestsInBatches(result->records));
  SG_RETURN_IF_ERROR(context.store.FinishPhase(*phase_id, result->started_ns, result->ended_ns,
                                               result->interrupted ? "interrupted" : "complete"));
  ProfileLevel level{.kind = plan.kind,
                     .value = plan.value,
                     .metrics = load::ComputeMetrics(result->records, slos_),
                     .offered_rate = plan.offered_rate,
                     .wall_s = static_cast<double>(result->ended_ns - result->started_ns) / 1e9,
                     .client_cpu_s = result->client_cpu_s,
                     .idle_poll_s = result->idle_poll_s,
                     .workers = result->workers,
                     .dropped = result->dropped,
                     .interrupted = result->interrupted,
                     .receive_times = plan.options.receive_times,
                     .receive = result->receive};
  for (double busy : result->worker_busy)
    level.max_worker_busy = std::max(level.max_worker_busy, busy);
  CheckClient(level);
  if (context.records.empty()) {
    context.records = std::move(result->records);
  } else {
    context.records.reserve(context.records.size() + result->records.size());
    for (load::RequestRecord& record : result->records)
      context.records.push_back(std::move(record));
  }
  return level;
}

Status WriteOutputs(const std::string& out_dir, const json& profile,
                    const std::vector<ProfileLevel>& levels,
                    const std::vector<load::RequestRecord>& records) {
  std::error_code made;
  std::filesystem::create_directories(out_dir, made);
  if (made) return Status::IoError(out_dir + ": " + made.message());
  SG_RETURN_IF_ERROR(
      WriteFileAtomically(out_dir + "/profile.json",
                          profile.dump(2, ' ', false, json::error_handler_t::replace) + "\n"));
  SG_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/profile.csv", ProfileCsv(levels)));
  SG_RETURN_IF_ERROR(WriteRequestsJsonl(out_dir + "/requests.jsonl", records));
  return Status::Ok();
}

ExitCode ProfileCommand::Run(const GlobalOptions& global, console::Console& console) {
  const auto fail = [&console](const Status& status, ExitCode code) {
    for (const std::string& line : Split(status.message(), '\n'))
      console.Error("stagegate profile: " + line);
    return code;
  };
  if (Status prepared = Prepare(); !prepared.ok()) return fail(prepared, ExitCode::kInvalidInput);
  if (Status planned = PlanLevels(); !planned.ok()) return fail(planned, ExitCode::kInvalidInput);
  const json config = Config();
  const std::string fingerprint = Sha256Hex(config.dump());
  const std::string run_id = NewRunId("profile");
  const std::string out_dir = out_dir_.empty() ? "reports/" + run_id : out_dir_;
  const std::string db_path = global.db_path.empty() ? store::kDefaultStorePath : global.db_path;
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(db_path);
  if (!store.ok()) return fail(store.status(), ExitCode::kRuntimeFailure);
  if (Status created = (*store)->CreateRun({.id = run_id,
                                            .scenario_name = "profile",
                                            .fingerprint = fingerprint,
                                            .scenario_json = config.dump(),
                                            .started_unix_ms = WallUnixMs()});
      !created.ok())
    return fail(created, ExitCode::kRuntimeFailure);
  load::RaiseOpenFileLimit();

  std::atomic<bool> stop{false};
  StopOnSignal stop_on_signal(stop);
  std::vector<load::RequestRecord> records;
  RunContext context{.run_id = run_id,
                     .store = **store,
                     .console = console,
                     .clock = SteadyClock::Get(),
                     .origin_ns = SteadyClock::Get().NowNs(),
                     .stop = stop,
                     .records = records};
  std::vector<ProfileLevel> levels;
  bool interrupted = false;
  for (size_t ordinal = 0; ordinal < plans_.size() && !stop.load(); ++ordinal) {
    Result<ProfileLevel> level = RunLevel(plans_[ordinal], static_cast<int64_t>(ordinal), context);
    if (!level.ok()) return fail(level.status(), ExitCode::kRuntimeFailure);
    interrupted = interrupted || level->interrupted;
    levels.push_back(std::move(*level));
  }
  interrupted = interrupted || stop.load();

  for (const std::string& line : ProfileTable(levels))
    console.Line(line);
  if (interrupted)
    console.Line("* interrupted: the level stopped early; what was measured is kept");
  for (const ProfileLevel& level : levels) {
    for (const std::string& line : SelfCheckLines(level))
      console.Line(line);
    for (const std::string& warning : level.metrics.warnings)
      console.Line("  note: " + warning);
  }
  json profile = ProfileJson(config, fingerprint, run_id, levels, interrupted);
  // Record times are ns from this steady-clock reading (CLOCK_MONOTONIC), so they can be set
  // beside a server's own timestamps on the same machine.
  profile["origin_steady_ns"] = context.origin_ns;
  if (Status written = WriteOutputs(out_dir, profile, levels, records); !written.ok())
    return fail(written, ExitCode::kRuntimeFailure);
  if (Status marked = (*store)->SetRunStatus(
          run_id, interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
          WallUnixMs());
      !marked.ok())
    return fail(marked, ExitCode::kRuntimeFailure);
  console.Line("run " + run_id + (interrupted ? " (interrupted)" : ""));
  console.Line("wrote " + out_dir + "/profile.json, " + out_dir + "/profile.csv, " + out_dir +
               "/requests.jsonl; store " + db_path);
  return interrupted ? ExitCode::kInterrupted : ExitCode::kOk;
}

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() {
  return std::make_unique<ProfileCommand>();
}

}  // namespace stagegate::cli

#include "load/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/strings.h"

namespace stagegate::load {
namespace {

constexpr std::string_view kSloMetrics[] = {"ttft_ms", "ttst_ms", "tpot_ms",
                                            "itl_ms",  "e2e_ms",  "corrected_ms"};
constexpr Outcome kAllOutcomes[] = {
    Outcome::kOk,        Outcome::kHttpError,      Outcome::kShed,
    Outcome::kTimeout,   Outcome::kTransportError, Outcome::kMalformedStream,
    Outcome::kCancelled, Outcome::kDenied,         Outcome::kMemoryLimit};

double Ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// What a phase's records give, gathered in one pass and summarized after it.
struct Samples {
  std::vector<double> ttft, ttst, itl, tpot, e2e, corrected, lag, queue, in_tokens, out_tokens,
      out_speed;
  int64_t first_send = std::numeric_limits<int64_t>::max();
  int64_t last_end = std::numeric_limits<int64_t>::min();
  int64_t last_send = std::numeric_limits<int64_t>::min();
  double completed_output_tokens = 0;
  int64_t short_answers = 0;
};

// Adds a completed request (ok, sent and ended): its latencies, its tokens and their source,
// and whether it met the SLOs.
void AddCompleted(const RequestRecord& r, const std::vector<Slo>& slos, Samples& s,
                  PhaseMetrics& m) {
  ++m.completed;
  const RequestLatency l = LatencyOf(r);
  s.e2e.push_back(l.e2e);
  s.corrected.push_back(l.corrected);
  if (l.ttft) s.ttft.push_back(*l.ttft);
  if (l.ttst) s.ttst.push_back(*l.ttst);
  if (l.tpot) s.tpot.push_back(*l.tpot);
  for (size_t i = 1; i < r.chunk_times_ns.size(); ++i)
    s.itl.push_back(Ms(r.chunk_times_ns[i] - r.chunk_times_ns[i - 1]));
  if (r.input_tokens) s.in_tokens.push_back(static_cast<double>(*r.input_tokens));
  if (r.output_tokens) {
    s.out_tokens.push_back(static_cast<double>(*r.output_tokens));
    s.completed_output_tokens += static_cast<double>(*r.output_tokens);
    if (l.e2e > 0) s.out_speed.push_back(static_cast<double>(*r.output_tokens) / (l.e2e / 1e3));
    (r.token_source == "usage"       ? m.usage_tokens
     : r.token_source == "tokenizer" ? m.tokenizer_tokens
                                     : m.counted_tokens)++;
    if (r.requested_output_tokens) {
      ++m.requested_length;
      if (*r.output_tokens != *r.requested_output_tokens) ++m.length_mismatches;
      if (*r.output_tokens < *r.requested_output_tokens) ++s.short_answers;
    }
  }
  if (MeetsSlos(l, slos)) ++m.met_slos;
}

// Adds one record: counted by outcome, its send timed against the schedule, and its latencies
// when it completed. A warmup request is only counted as one.
void AddRecord(const RequestRecord& r, const std::vector<Slo>& slos, Samples& s, PhaseMetrics& m) {
  if (r.warmup) {
    ++m.warmup;
    return;
  }
  ++m.offered;
  ++m.outcomes[std::string(OutcomeName(r.outcome))];
  if (r.sent_ns) {
    ++m.sent;
    s.first_send = std::min(s.first_send, *r.sent_ns);
    s.last_send = std::max(s.last_send, *r.sent_ns);
    s.lag.push_back(Ms(*r.sent_ns - r.intended_ns));
    if (r.queue_ns) s.queue.push_back(Ms(*r.queue_ns));
    (r.streamed ? m.streamed : m.not_streamed)++;
  }
  if (r.end_ns && r.sent_ns) s.last_end = std::max(s.last_end, *r.end_ns);
  if (r.outcome != Outcome::kOk || !r.sent_ns || !r.end_ns) return;
  AddCompleted(r, slos, s, m);
}

// Summarizes the samples, which it empties, into the phase's distributions.
void SummarizeSamples(Samples& s, PhaseMetrics& m) {
  m.ttft_ms = stats::Summarize(std::move(s.ttft));
  m.ttst_ms = stats::Summarize(std::move(s.ttst));
  m.itl_ms = stats::Summarize(std::move(s.itl));
  m.tpot_ms = stats::Summarize(std::move(s.tpot));
  m.e2e_ms = stats::Summarize(std::move(s.e2e));
  m.corrected_ms = stats::Summarize(std::move(s.corrected));
  m.schedule_lag_ms = stats::Summarize(std::move(s.lag));
  m.queue_ms = stats::Summarize(std::move(s.queue));
  m.input_tokens = stats::Summarize(std::move(s.in_tokens));
  m.output_tokens = stats::Summarize(std::move(s.out_tokens));
  m.output_tokens_per_s = stats::Summarize(std::move(s.out_speed));
}

// Sets the phase's rates: throughputs and goodput over its window, the rate it sent at, and the
// share of its requests that completed.
void SetRates(const Samples& s, PhaseMetrics& m) {
  if (s.last_end > s.first_send) m.window_s = static_cast<double>(s.last_end - s.first_send) / 1e9;
  if (m.window_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / m.window_s;
    m.output_token_throughput = s.completed_output_tokens / m.window_s;
    m.goodput = static_cast<double>(m.met_slos) / m.window_s;
  }
  // Like the offered rate of a schedule: sends per second between the first and the last send,
  // so the tail of the last answer does not count as sending time.
  if (m.sent > 1 && s.last_send > s.first_send)
    m.achieved_rate =
        static_cast<double>(m.sent - 1) / (static_cast<double>(s.last_send - s.first_send) / 1e9);
  if (m.offered > 0)
    m.completion_rate = static_cast<double>(m.completed) / static_cast<double>(m.offered);
}

// Warns of what makes the phase's numbers less than they seem: answers not streamed, lengths
// not as requested (`short_answers` of them shorter), requests the client cut, counted tokens.
void AddWarnings(int64_t short_answers, PhaseMetrics& m) {
  if (m.not_streamed > 0)
    m.warnings.push_back(
        "streaming is off for " + std::to_string(m.not_streamed) +
        " requests: TTFT, TTST, ITL and TPOT cannot be measured for them and are not reported");
  if (m.requested_length > 0 && m.length_mismatches * 20 > m.requested_length)
    m.warnings.push_back(
        std::to_string(m.length_mismatches) + " of " + std::to_string(m.requested_length) +
        " answers did not have the requested output length (" + std::to_string(short_answers) +
        " shorter): max_tokens is only an upper bound; add ignore_eos:true or min_tokens to "
        "--extra-inputs when the length matters");
  if (const int64_t cut = m.outcomes["memory_limit"]; cut > 0)
    m.warnings.push_back(std::to_string(cut) +
                         " requests were cut by the client's memory limit for responses in "
                         "flight, not by the server: raise --max-response-memory to measure them");
  if (m.counted_tokens > 0)
    m.warnings.push_back(std::to_string(m.counted_tokens) +
                         " answers carried no usage: their output tokens are counted content "
                         "events, which can differ from the server's token count (--tokenizer "
                         "counts them with the model's tokenizer)");
}

}  // namespace

bool MeetsSlos(const RequestLatency& l, const std::vector<Slo>& slos) {
  for (const Slo& slo : slos) {
    std::optional<double> value;
    if (slo.metric == "ttft_ms")
      value = l.ttft;
    else if (slo.metric == "ttst_ms")
      value = l.ttst;
    else if (slo.metric == "tpot_ms")
      value = l.tpot;
    else if (slo.metric == "itl_ms")
      value = l.max_itl.value_or(0);
    else if (slo.metric == "e2e_ms")
      value = l.e2e;
    else if (slo.metric == "corrected_ms")
      value = l.corrected;
    if (!value || *value > slo.max_ms) return false;
  }
  return true;
}

RequestLatency LatencyOf(const RequestRecord& r) {
  RequestLatency l;
  l.e2e = Ms(*r.end_ns - *r.sent_ns);
  l.corrected = Ms(*r.end_ns - r.intended_ns);
  if (r.first_token_ns) l.ttft = Ms(*r.first_token_ns - *r.sent_ns);
  if (r.chunk_times_ns.size() >= 2) l.ttst = Ms(r.chunk_times_ns[1] - r.chunk_times_ns[0]);
  for (size_t i = 1; i < r.chunk_times_ns.size(); ++i)
    l.max_itl = std::max(l.max_itl.value_or(0), Ms(r.chunk_times_ns[i] - r.chunk_times_ns[i - 1]));
  if (l.ttft && r.output_tokens && *r.output_tokens > 1)
    l.tpot = (l.e2e - *l.ttft) / static_cast<double>(*r.output_tokens - 1);
  return l;
}

Result<std::vector<Slo>> ParseSlos(std::string_view text) {
  std::vector<Slo> slos;
  std::vector<std::string> errors;
  for (const std::string& part : Split(std::string(text), ',')) {
    const std::string item(Trim(part));
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    const std::string name(Trim(std::string_view(item).substr(0, colon)));
    if (colon == std::string::npos) {
      errors.push_back("'" + item + "' is not metric:milliseconds");
      continue;
    }
    if (std::find(std::begin(kSloMetrics), std::end(kSloMetrics), name) == std::end(kSloMetrics)) {
      std::vector<std::string> known(std::begin(kSloMetrics), std::end(kSloMetrics));
      errors.push_back("unknown metric '" + name + "'" + DidYouMean(name, known) +
                       " (known: " + Join(known, ", ") + ")");
      continue;
    }
    const std::string value(Trim(std::string_view(item).substr(colon + 1)));
    double max_ms = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), max_ms);
    if (error != std::errc() || end != value.data() + value.size() || !(max_ms > 0) ||
        !std::isfinite(max_ms)) {
      errors.push_back("'" + item + "': the limit must be a positive number of milliseconds");
      continue;
    }
    if (std::any_of(slos.begin(), slos.end(), [&](const Slo& s) { return s.metric == name; })) {
      errors.push_back(name + " is given twice");
      continue;
    }
    slos.push_back(Slo{.metric = name, .max_ms = max_ms});
  }
  if (errors.empty() && slos.empty() && !text.empty())
    errors.push_back("'" + std::string(text) + "' gives no SLO (e.g. ttft_ms:500,e2e_ms:4000)");
  if (!errors.empty()) return Status::InvalidInput("--slo: " + Join(errors, "; "));
  return slos;
}

PhaseMetrics ComputeMetrics(std::span<const RequestRecord> records, const std::vector<Slo>& slos) {
  PhaseMetrics m;
  for (Outcome outcome : kAllOutcomes)
    m.outcomes[std::string(OutcomeName(outcome))] = 0;
  Samples s;
  size_t gaps = 0;  // the inter-token gaps are by far the most values: sized once
  for (const RequestRecord& r : records)
    gaps += r.chunk_times_ns.empty() ? 0 : r.chunk_times_ns.size() - 1;
  s.itl.reserve(gaps);
  for (const RequestRecord& r : records)
    AddRecord(r, slos, s, m);
  SummarizeSamples(s, m);
  SetRates(s, m);
  AddWarnings(s.short_answers, m);
  return m;
}

std::vector<std::pair<std::string, const stats::Summary*>> NamedSummaries(const PhaseMetrics& m) {
  return {{"ttft_ms", &m.ttft_ms},
          {"ttst_ms", &m.ttst_ms},
          {"itl_ms", &m.itl_ms},
          {"tpot_ms", &m.tpot_ms},
          {"e2e_ms", &m.e2e_ms},
          {"corrected_ms", &m.corrected_ms},
          {"schedule_lag_ms", &m.schedule_lag_ms},
          {"queue_ms", &m.queue_ms},
          {"input_tokens", &m.input_tokens},
          {"output_tokens", &m.output_tokens},
          {"output_tokens_per_s", &m.output_tokens_per_s}};
}

nlohmann::json MetricsToJson(const PhaseMetrics& m) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, summary] : NamedSummaries(m))
    metrics[name] = summary->ToJson();
  return {
      {"requests",
       {{"offered", m.offered},
        {"sent", m.sent},
        {"completed", m.completed},
        {"warmup_excluded", m.warmup},
        {"met_slos", m.met_slos},
        {"outcomes", m.outcomes},
        {"output_tokens_from_usage", m.usage_tokens},
        {"output_tokens_counted", m.counted_tokens},
        {"output_tokens_from_tokenizer", m.tokenizer_tokens}}},
      {"throughput",
       {{"window_s", m.window_s},
        {"request_throughput", m.request_throughput},
        {"output_token_throughput", m.output_token_throughput},
        {"goodput", m.goodput},
        {"completion_rate", m.completion_rate},
        {"achieved_rate", m.achieved_rate}}},
      {"metrics", metrics},
      {"warnings", m.warnings},
  };
}

}  // namespace stagegate::load

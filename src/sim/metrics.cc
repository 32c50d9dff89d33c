#include "sim/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/strings.h"

namespace stagegate::sim {
namespace {

constexpr size_t kMaxHttpSeries = 64;
constexpr std::string_view kOtherPath = "other";

// vLLM's bucket bounds, so that histogram_quantile() over the sim matches a real server's.
const std::vector<double> kTimeToFirstTokenBuckets = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10};
const std::vector<double> kE2eLatencyBuckets = {0.3, 0.5, 0.8, 1,  1.5, 2,  2.5, 5,
                                                10,  15,  20,  30, 40,  50, 60};

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integral values below 2^53 print as integers (also turning -0 into 0).
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0)
    return std::to_string(static_cast<int64_t>(value));
  char buffer[32];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

// Escapes per the text format; bytes that are not UTF-8 become U+FFFD, since one invalid label
// would make scrapers reject the whole exposition.
std::string EscapeLabelValue(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  while (!value.empty()) {
    const size_t length = Utf8SequenceLength(value);
    if (length == 0) {
      escaped += "\xEF\xBF\xBD";
      value.remove_prefix(1);
      continue;
    }
    const char c = value[0];
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped.append(value.substr(0, length));
    }
    value.remove_prefix(length);
  }
  return escaped;
}

std::string Label(std::string_view name, std::string_view value) {
  return std::string(name) + "=\"" + EscapeLabelValue(value) + "\"";
}

// The text of an exposition, built one family at a time.
class Exposition {
 public:
  /// The # HELP and # TYPE lines; they come once, before the family's samples.
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    text_.append("# HELP ").append(name).append(" ").append(help).append("\n");
    text_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }

  /// `labels` is `key="value",...`, already escaped.
  void Sample(std::string_view name, std::string_view labels, std::string_view value) {
    text_.append(name).append("{").append(labels).append("} ").append(value).append("\n");
  }
  void Sample(std::string_view name, std::string_view labels, int64_t value) {
    Sample(name, labels, std::to_string(value));
  }

  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace

Metrics::Histogram::Histogram(const std::vector<double>& bounds_in)
    : bounds(&bounds_in), counts(bounds_in.size() + 1, 0) {}

void Metrics::Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // Bucket `le` counts values <= its bound; lower_bound finds the first bound >= value.
  const auto bucket = std::lower_bound(bounds->begin(), bounds->end(), value) - bounds->begin();
  ++counts[static_cast<size_t>(bucket)];
  sum += value;
  ++count;
}

Metrics::Metrics()
    : time_to_first_token_(kTimeToFirstTokenBuckets),
      e2e_latency_(kE2eLatencyBuckets),
      queue_time_(kTimeToFirstTokenBuckets) {
  // Known label values start at 0 so that rate() sees the first increment.
  for (const char* reason : {"stop", "length", "tool_calls", "abort"})
    finished_[reason] = 0;
  shed_[429] = 0;
  shed_[503] = 0;
}

void Metrics::SetRunning(int64_t n) {
  running_ = std::max<int64_t>(n, 0);
}
void Metrics::SetWaiting(int64_t n) {
  waiting_ = std::max<int64_t>(n, 0);
}

void Metrics::SetKvCacheUsage(double fraction) {
  if (std::isnan(fraction)) return;
  kv_cache_usage_ = std::clamp(fraction, 0.0, 1.0);
}

void Metrics::AddPromptTokens(int64_t n) {
  if (n > 0) prompt_tokens_ += n;
}
void Metrics::AddGenerationTokens(int64_t n) {
  if (n > 0) generation_tokens_ += n;
}

void Metrics::ObserveTimeToFirstToken(double seconds) {
  time_to_first_token_.Observe(seconds);
}
void Metrics::ObserveE2eLatency(double seconds) {
  e2e_latency_.Observe(seconds);
}
void Metrics::ObserveQueueTime(double seconds) {
  queue_time_.Observe(seconds);
}

void Metrics::CountFinished(std::string_view finished_reason) {
  auto it = finished_.find(finished_reason);
  if (it == finished_.end()) it = finished_.emplace(std::string(finished_reason), 0).first;
  ++it->second;
}

void Metrics::CountShed(int64_t status) {
  ++shed_[status];
}

void Metrics::CountHttpRequest(std::string_view path, int64_t status) {
  std::pair<std::string, int64_t> key(path, status);
  // Bounded, so that a client probing random paths cannot grow the exposition without end.
  if (http_requests_.size() >= kMaxHttpSeries && !http_requests_.contains(key))
    key.first = kOtherPath;
  ++http_requests_[key];
}

namespace {

void RenderHistogram(Exposition& out, std::string_view name, std::string_view help,
                     const std::string& model_label, const std::vector<double>& bounds,
                     const std::vector<int64_t>& counts, double sum, int64_t count) {
  const std::string base(name);
  out.Family(base, "histogram", help);
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    out.Sample(base + "_bucket", model_label + "," + Label("le", FormatValue(bounds[i])),
               cumulative);
  }
  out.Sample(base + "_bucket", model_label + "," + Label("le", "+Inf"), count);
  out.Sample(base + "_sum", model_label, FormatValue(sum));
  out.Sample(base + "_count", model_label, count);
}

}  // namespace

std::string Metrics::Render(std::string_view model_name) const {
  const std::string model = Label("model_name", model_name);
  Exposition out;
  out.Family("vllm:num_requests_running", "gauge", "Number of requests currently running on GPU.");
  out.Sample("vllm:num_requests_running", model, running_);
  out.Family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  out.Sample("vllm:num_requests_waiting", model, waiting_);
  out.Family("vllm:gpu_cache_usage_perc", "gauge",
             "GPU KV-cache usage. 1 means 100 percent usage.");
  out.Sample("vllm:gpu_cache_usage_perc", model, FormatValue(kv_cache_usage_));
  out.Family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
  out.Sample("vllm:prompt_tokens_total", model, prompt_tokens_);
  out.Family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
  out.Sample("vllm:generation_tokens_total", model, generation_tokens_);

  struct Named {
    std::string_view name;
    std::string_view help;
    const Histogram& histogram;
  };
  for (const Named& h : {
           Named{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                 time_to_first_token_},
           Named{"vllm:e2e_request_latency_seconds",
                 "Histogram of end to end request latency in seconds.", e2e_latency_},
           Named{"vllm:request_queue_time_seconds",
                 "Histogram of time spent in WAITING phase for request.", queue_time_},
       }) {
    RenderHistogram(out, h.name, h.help, model, *h.histogram.bounds, h.histogram.counts,
                    h.histogram.sum, h.histogram.count);
  }

  out.Family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const auto& [reason, n] : finished_)
    out.Sample("vllm:request_success_total", model + "," + Label("finished_reason", reason), n);

  // The sim's own series describe the server, not the model, so they carry no model_name.
  out.Family("stagegate_sim_shed_total", "counter",
             "Requests refused by the sim's admission control, by HTTP status.");
  for (const auto& [status, n] : shed_)
    out.Sample("stagegate_sim_shed_total", Label("status", std::to_string(status)), n);
  out.Family("stagegate_sim_http_requests_total", "counter",
             "HTTP responses sent by the sim, by route and status code.");
  for (const auto& [key, n] : http_requests_) {
    out.Sample("stagegate_sim_http_requests_total",
               Label("path", key.first) + "," + Label("code", std::to_string(key.second)), n);
  }
  return out.Take();
}

}  // namespace stagegate::sim

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stagegate::sim {

/// The series an inference server (vLLM) exposes on /metrics, under vLLM's names so that existing
/// dashboards and parsers work, plus two sim-specific counters. Render() writes the Prometheus text
/// exposition format 0.0.4. Not thread-safe: the sim's event loop thread owns it.
///
/// Values that no real server could report are dropped rather than asserted on: negative counts,
/// NaN observations. A gauge fraction is clamped to [0, 1].
class Metrics {
 public:
  Metrics();

  void SetRunning(int64_t n);
  void SetWaiting(int64_t n);
  /// `fraction` of the KV cache in use, 0..1 (vllm:gpu_cache_usage_perc is a fraction, not
  /// percent).
  void SetKvCacheUsage(double fraction);

  void AddPromptTokens(int64_t n);
  void AddGenerationTokens(int64_t n);

  void ObserveTimeToFirstToken(double seconds);
  void ObserveE2eLatency(double seconds);
  void ObserveQueueTime(double seconds);

  /// One finished request. stop, length, tool_calls and abort are exported from the start at 0;
  /// any other reason becomes its own series when first counted.
  void CountFinished(std::string_view finished_reason);
  /// One request shed by admission control; 429 and 503 are exported from the start at 0.
  void CountShed(int64_t status);
  /// One HTTP response. Pass the route ("/v1/chat/completions"), not the raw request target: each
  /// distinct (path, status) stays a series for the life of the process. Past 64 of them, new paths
  /// are counted as path="other", so that clients probing random paths cannot grow /metrics.
  void CountHttpRequest(std::string_view path, int64_t status);

  /// The exposition text: every series with # HELP and # TYPE lines. The vllm: series carry
  /// model_name="..."; the sim's own (stagegate_sim_*) describe the server and do not. Label values
  /// are escaped per the format, bytes that are not UTF-8 replaced by U+FFFD. Integral values print
  /// without decimals, others in their shortest round-trip form, infinities as +Inf / -Inf.
  std::string Render(std::string_view model_name) const;

 private:
  struct Histogram {
    explicit Histogram(const std::vector<double>& bounds);
    void Observe(double value);

    const std::vector<double>* bounds;  // upper bounds, ascending, without +Inf; static storage
    std::vector<int64_t> counts;        // per bucket, not cumulative; the last one is +Inf
    double sum = 0;
    int64_t count = 0;
  };

  int64_t running_ = 0;
  int64_t waiting_ = 0;
  double kv_cache_usage_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  Histogram time_to_first_token_;
  Histogram e2e_latency_;
  Histogram queue_time_;
  std::map<std::string, int64_t, std::less<>> finished_;
  std::map<int64_t, int64_t> shed_;
  std::map<std::pair<std::string, int64_t>, int64_t> http_requests_;
};

}  // namespace stagegate::sim

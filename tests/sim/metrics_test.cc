#include "sim/metrics.h"

#include <catch2/catch.hpp>

#include <limits>
#include <regex>
#include <set>
#include <sstream>

namespace stagegate::sim {
namespace {

// The problems with `text` as Prometheus text format 0.0.4, one per line; "" when it is
// well-formed: every sample is `name{labels} value`, with labels `key="escaped value"`, and belongs
// to the family announced by the # HELP and # TYPE lines before it.
std::string ExpositionProblems(const std::string& text) {
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")"
      R"((?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)\} )"
      R"((-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?|\+Inf|-Inf|NaN))");
  static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter|histogram))");
  std::string problems;
  std::string helped, family, type;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::smatch match;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (std::regex_match(line, match, kHelp)) {
      helped = match[1];
    } else if (std::regex_match(line, match, kType)) {
      if (match[1] != helped) problems += where + "# TYPE without # HELP\n";
      family = match[1];
      type = match[2];
    } else if (std::regex_match(line, match, kSample)) {
      std::set<std::string> names = {family};
      if (type == "histogram") names = {family + "_bucket", family + "_sum", family + "_count"};
      if (!names.contains(match[1])) problems += where + "sample outside its family\n";
    } else {
      problems += where + "not a sample: " + line + "\n";
    }
  }
  if (text.empty() || text.back() != '\n') problems += "the text does not end with a newline\n";
  return problems;
}

TEST_CASE("metrics render every series in vLLM's names with cumulative buckets", "[sim]") {
  Metrics metrics;
  metrics.SetRunning(3);
  metrics.SetWaiting(1);
  metrics.SetKvCacheUsage(0.25);
  metrics.AddPromptTokens(120);
  metrics.AddPromptTokens(30);
  metrics.AddGenerationTokens(64);
  metrics.ObserveTimeToFirstToken(0.004);
  metrics.ObserveTimeToFirstToken(0.1);  // on a bound: counted in le="0.1"
  metrics.ObserveTimeToFirstToken(3);
  metrics.ObserveE2eLatency(0.2);
  metrics.ObserveE2eLatency(12);
  metrics.ObserveE2eLatency(75);  // past the last bound: only in +Inf
  metrics.ObserveQueueTime(0.1);
  metrics.ObserveQueueTime(0.2);
  metrics.CountFinished("stop");
  metrics.CountFinished("stop");
  metrics.CountFinished("length");
  metrics.CountShed(429);
  metrics.CountHttpRequest("/v1/chat/completions", 200);
  metrics.CountHttpRequest("/v1/chat/completions", 200);
  metrics.CountHttpRequest("/metrics", 200);

  const std::string text = metrics.Render("sim-7b");
  CHECK(ExpositionProblems(text) == "");
  CHECK(text == R"(# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="sim-7b"} 3
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="sim-7b"} 1
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="sim-7b"} 0.25
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="sim-7b"} 150
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="sim-7b"} 64
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.001"} 0
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.005"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.01"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.02"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.04"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.06"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.08"} 1
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.1"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.25"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.5"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="0.75"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="1"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="2.5"} 2
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="5"} 3
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="7.5"} 3
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="10"} 3
vllm:time_to_first_token_seconds_bucket{model_name="sim-7b",le="+Inf"} 3
vllm:time_to_first_token_seconds_sum{model_name="sim-7b"} 3.104
vllm:time_to_first_token_seconds_count{model_name="sim-7b"} 3
# HELP vllm:e2e_request_latency_seconds Histogram of end to end request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="0.3"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="0.5"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="0.8"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="1"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="1.5"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="2"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="2.5"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="5"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="10"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="15"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="20"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="30"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="40"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="50"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="60"} 2
vllm:e2e_request_latency_seconds_bucket{model_name="sim-7b",le="+Inf"} 3
vllm:e2e_request_latency_seconds_sum{model_name="sim-7b"} 87.2
vllm:e2e_request_latency_seconds_count{model_name="sim-7b"} 3
# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.001"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.005"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.01"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.02"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.04"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.06"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.08"} 0
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.1"} 1
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.25"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.5"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="0.75"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="1"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="2.5"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="5"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="7.5"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="10"} 2
vllm:request_queue_time_seconds_bucket{model_name="sim-7b",le="+Inf"} 2
vllm:request_queue_time_seconds_sum{model_name="sim-7b"} 0.30000000000000004
vllm:request_queue_time_seconds_count{model_name="sim-7b"} 2
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{model_name="sim-7b",finished_reason="abort"} 0
vllm:request_success_total{model_name="sim-7b",finished_reason="length"} 1
vllm:request_success_total{model_name="sim-7b",finished_reason="stop"} 2
vllm:request_success_total{model_name="sim-7b",finished_reason="tool_calls"} 0
# HELP stagegate_sim_shed_total Requests refused by the sim's admission control, by HTTP status.
# TYPE stagegate_sim_shed_total counter
stagegate_sim_shed_total{status="429"} 1
stagegate_sim_shed_total{status="503"} 0
# HELP stagegate_sim_http_requests_total HTTP responses sent by the sim, by route and status code.
# TYPE stagegate_sim_http_requests_total counter
stagegate_sim_http_requests_total{path="/metrics",code="200"} 1
stagegate_sim_http_requests_total{path="/v1/chat/completions",code="200"} 2
)");
}

TEST_CASE("metrics start with every series present and well-formed", "[sim]") {
  const std::string text = Metrics().Render("m");
  CHECK(ExpositionProblems(text) == "");
  CHECK(text.find("vllm:time_to_first_token_seconds_count{model_name=\"m\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("vllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("stagegate_sim_shed_total{status=\"503\"} 0\n") != std::string::npos);
}

TEST_CASE("metrics escape label values and keep every line parseable", "[sim]") {
  Metrics metrics;
  metrics.CountFinished("odd \"reason\"");
  metrics.CountHttpRequest("/a\\b\nc", 404);
  metrics.CountHttpRequest("/bad-\xff-byte", 404);
  const std::string text = metrics.Render("we\"ird\\model\nname");
  CHECK(ExpositionProblems(text) == "");
  CHECK(text.find("vllm:num_requests_running{model_name=\"we\\\"ird\\\\model\\nname\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("finished_reason=\"odd \\\"reason\\\"\"} 1\n") != std::string::npos);
  CHECK(text.find("{path=\"/a\\\\b\\nc\",code=\"404\"} 1\n") != std::string::npos);
  CHECK(text.find("{path=\"/bad-\xEF\xBF\xBD-byte\",code=\"404\"} 1\n") != std::string::npos);
}

TEST_CASE("the checker rejects malformed expositions", "[sim]") {
  // Evidence that the checker above could fail.
  CHECK(ExpositionProblems("# HELP a x\n# TYPE a gauge\na{m=\"1\"} 1\n") == "");
  CHECK(ExpositionProblems("# HELP a x\n# TYPE a gauge\na{m=\"1\"} one\n") ==
        "line 3: not a sample: a{m=\"1\"} one\n");
  CHECK(ExpositionProblems("# HELP a x\n# TYPE a gauge\na{m=\"a\"b\"} 1\n") ==
        "line 3: not a sample: a{m=\"a\"b\"} 1\n");
  CHECK(ExpositionProblems("# HELP a x\n# TYPE a gauge\nb{m=\"1\"} 1\n") ==
        "line 3: sample outside its family\n");
  CHECK(ExpositionProblems("# TYPE a gauge\na{m=\"1\"} 1") ==
        "line 1: # TYPE without # HELP\nthe text does not end with a newline\n");
}

TEST_CASE("metrics drop values no server could report", "[sim]") {
  Metrics metrics;
  metrics.SetRunning(-1);
  metrics.SetKvCacheUsage(1.5);
  metrics.AddPromptTokens(-10);
  metrics.AddGenerationTokens(0);
  metrics.ObserveE2eLatency(std::numeric_limits<double>::quiet_NaN());
  metrics.ObserveTimeToFirstToken(std::numeric_limits<double>::infinity());
  const std::string text = metrics.Render("m");
  CHECK(ExpositionProblems(text) == "");
  CHECK(text.find("vllm:num_requests_running{model_name=\"m\"} 0\n") != std::string::npos);
  CHECK(text.find("vllm:gpu_cache_usage_perc{model_name=\"m\"} 1\n") != std::string::npos);
  CHECK(text.find("vllm:prompt_tokens_total{model_name=\"m\"} 0\n") != std::string::npos);
  CHECK(text.find("vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"10\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_sum{model_name=\"m\"} +Inf\n") !=
        std::string::npos);
}

TEST_CASE("metrics fold HTTP paths past 64 series into path=\"other\"", "[sim]") {
  Metrics metrics;
  for (int i = 0; i < 70; ++i)
    metrics.CountHttpRequest("/probe/" + std::to_string(i), 404);
  metrics.CountHttpRequest("/probe/0", 404);  // an existing series still counts on its own
  const std::string text = metrics.Render("m");
  CHECK(ExpositionProblems(text) == "");
  CHECK(text.find("{path=\"/probe/0\",code=\"404\"} 2\n") != std::string::npos);
  CHECK(text.find("{path=\"/probe/63\",code=\"404\"} 1\n") != std::string::npos);
  CHECK(text.find("/probe/64\"") == std::string::npos);
  CHECK(text.find("{path=\"other\",code=\"404\"} 6\n") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::sim

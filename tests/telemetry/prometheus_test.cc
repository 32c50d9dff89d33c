#include "telemetry/prometheus.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

// How Catch prints a Sample in a failed check: name{labels} value @timestamp.
namespace Catch {
template <>
struct StringMaker<stagegate::telemetry::Sample> {
  static std::string convert(const stagegate::telemetry::Sample& sample) {
    std::string text = sample.name + "{";
    for (const auto& [name, value] : sample.labels)
      text += name + "=\"" + value + "\",";
    text += "} " + std::to_string(sample.value);
    if (sample.timestamp_ms) text += " @" + std::to_string(*sample.timestamp_ms);
    return text;
  }
};
template <>
struct StringMaker<stagegate::telemetry::MetricFamily> {
  static std::string convert(const stagegate::telemetry::MetricFamily& family) {
    return "{" + family.name + ", " + family.type + ", \"" + family.help + "\"}";
  }
};
}  // namespace Catch

namespace stagegate::telemetry {
namespace {

using Families = std::vector<MetricFamily>;

constexpr double kInf = std::numeric_limits<double>::infinity();

Exposition Parse(std::string_view text) {
  Result<Exposition> exposition = ParsePrometheusText(text);
  INFO(exposition.status().message());
  REQUIRE(exposition.ok());
  return std::move(exposition).value();
}

std::string ParseError(std::string_view text) {
  Result<Exposition> exposition = ParsePrometheusText(text);
  REQUIRE_FALSE(exposition.ok());
  CHECK(exposition.status().code() == Status::Code::kInvalidInput);
  return exposition.status().message();
}

// What vLLM's /metrics serves (trimmed), with the Go client's summary added.
constexpr char kVllm[] =
    R"(# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.4375
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.234567e+06
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.005",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="meta-llama/Llama-3.1-8B-Instruct"} 31.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 40.0
vllm:time_to_first_token_seconds_count{model_name="meta-llama/Llama-3.1-8B-Instruct"} 40.0
vllm:time_to_first_token_seconds_sum{model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.25

# HELP go_gc_duration_seconds A summary of the pause duration of garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 4.1e-05
go_gc_duration_seconds{quantile="0.5"} 0.000112
go_gc_duration_seconds{quantile="1"} 0.0021
go_gc_duration_seconds_sum 0.05
go_gc_duration_seconds_count 312
# A plain comment, then a metric with no HELP or TYPE.
process_open_fds 17
)";

TEST_CASE("ParsePrometheusText reads a vLLM exposition", "[telemetry]") {
  const Exposition exposition = Parse(kVllm);
  CHECK(
      exposition.families ==
      Families{
          {"vllm:num_requests_running", "gauge", "Number of requests currently running on GPU."},
          {"vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage."},
          {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed."},
          {"vllm:time_to_first_token_seconds", "histogram",
           "Histogram of time to first token in seconds."},
          {"go_gc_duration_seconds", "summary",
           "A summary of the pause duration of garbage collection cycles."}});

  REQUIRE(exposition.samples.size() == 14u);
  const std::string model = "meta-llama/Llama-3.1-8B-Instruct";
  CHECK(exposition.samples[0] == Sample{"vllm:num_requests_running", {{"model_name", model}}, 3});
  CHECK(exposition.samples[5] == Sample{"vllm:time_to_first_token_seconds_bucket",
                                        {{"le", "+Inf"}, {"model_name", model}},
                                        40});
  CHECK(exposition.samples[8] == Sample{"go_gc_duration_seconds", {{"quantile", "0"}}, 4.1e-05});
  CHECK(exposition.samples[12] == Sample{"go_gc_duration_seconds_count", {}, 312});
  CHECK(exposition.samples[13] == Sample{"process_open_fds", {}, 17});

  CHECK(FindValue(exposition, "vllm:gpu_cache_usage_perc") == 0.4375);
  CHECK(FindValue(exposition, "vllm:prompt_tokens_total") == 1234567);
  CHECK(FindValue(exposition, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.5"}}) == 31);
  CHECK(FindValue(exposition, "vllm:time_to_first_token_seconds_sum") == 7.25);
  CHECK(FindValue(exposition, "go_gc_duration_seconds", {{"quantile", "0.5"}}) == 0.000112);
}

TEST_CASE("FindValue matches a subset of the labels, in any order", "[telemetry]") {
  const Exposition exposition = Parse(
      "requests{model=\"a\",status=\"200\"} 5\n"
      "requests{status=\"500\",model=\"a\"} 2\n"
      "requests{model=\"b\",status=\"500\"} 9\n");
  // The first sample whose labels include every pair asked for.
  CHECK(FindValue(exposition, "requests") == 5);
  CHECK(FindValue(exposition, "requests", {{"status", "500"}}) == 2);
  CHECK(FindValue(exposition, "requests", {{"model", "a"}, {"status", "500"}}) == 2);
  CHECK(FindValue(exposition, "requests", {{"status", "500"}, {"model", "b"}}) == 9);
  CHECK(FindValue(exposition, "requests", {{"status", "404"}}) == std::nullopt);
  CHECK(FindValue(exposition, "requests", {{"model", "a"}, {"model", "b"}}) == std::nullopt);
  CHECK(FindValue(exposition, "request") == std::nullopt);
}

TEST_CASE("Label values and help texts are unescaped", "[telemetry]") {
  const Exposition exposition =
      Parse(R"(# HELP files Files seen, by path: a \\ is a backslash,\na new line follows)"
            "\n"
            R"(files{path="C:\\dir\\\"x\"\nnext",empty=""} 1)"
            "\n");
  CHECK(exposition.families ==
        Families{{"files", "", "Files seen, by path: a \\ is a backslash,\na new line follows"}});
  REQUIRE(exposition.samples.size() == 1u);
  CHECK(exposition.samples[0] ==
        Sample{"files", {{"path", "C:\\dir\\\"x\"\nnext"}, {"empty", ""}}, 1});
}

TEST_CASE("Special values, timestamps, blanks and a trailing comma", "[telemetry]") {
  const Exposition exposition = Parse(
      "not_a_number NaN\n"
      "positive +Inf\n"
      "unsigned Inf\n"
      "negative -Inf 1700000000000\n"
      "signed{a=\"1\"} +1.5 -42\n"
      "exponent 6.02e23\n"
      "fraction -0.25\n"
      "spaced\t{ a = \"x\" ,\tb=\"y\", }\t 2.5 \t 1700000000123 \t\n"
      "  indented{} 0\n"
      "tight{a=\"b\"}7\n");
  REQUIRE(exposition.samples.size() == 10u);
  CHECK(exposition.samples[0].name == "not_a_number");
  CHECK(std::isnan(exposition.samples[0].value));
  CHECK(exposition.samples[1] == Sample{"positive", {}, kInf});
  CHECK(exposition.samples[2] == Sample{"unsigned", {}, kInf});
  CHECK(exposition.samples[3] == Sample{"negative", {}, -kInf, 1700000000000});
  CHECK(exposition.samples[4] == Sample{"signed", {{"a", "1"}}, 1.5, -42});
  CHECK(exposition.samples[5] == Sample{"exponent", {}, 6.02e23});
  CHECK(exposition.samples[6] == Sample{"fraction", {}, -0.25});
  CHECK(exposition.samples[7] == Sample{"spaced", {{"a", "x"}, {"b", "y"}}, 2.5, 1700000000123});
  CHECK(exposition.samples[8] == Sample{"indented", {}, 0});
  CHECK(exposition.samples[9] == Sample{"tight", {{"a", "b"}}, 7});
}

TEST_CASE("CRLF, a missing final newline and blank lines read the same", "[telemetry]") {
  const std::string lf = "# TYPE up gauge\nup{job=\"a\"} 1\n\nup{job=\"b\"} 0 1700000000000\n";
  const Exposition expected = Parse(lf);
  CHECK(expected.families == Families{{"up", "gauge", ""}});
  REQUIRE(expected.samples.size() == 2u);
  CHECK(expected.samples[1] == Sample{"up", {{"job", "b"}}, 0, 1700000000000});

  for (const std::string& text :
       {std::string("# TYPE up gauge\r\nup{job=\"a\"} 1\r\n\r\nup{job=\"b\"} 0 1700000000000\r\n"),
        lf.substr(0, lf.size() - 1), " \t\n\n" + lf + "\r\n  \n"}) {
    INFO(text);
    const Exposition exposition = Parse(text);
    CHECK(exposition.samples == expected.samples);
    CHECK(exposition.families == expected.families);
  }
  CHECK(Parse("").samples.empty());
}

TEST_CASE("A broken line is reported with its line and column", "[telemetry]") {
  // Labels.
  CHECK(ParseError("ok 1\nm{a=\"x} 1\n") == "line 2, column 5: unterminated label value");
  CHECK(ParseError(R"(m{a="x\q"} 1)") == R"(line 1, column 7: unknown escape '\q')");
  CHECK(ParseError(R"(m{a="x\)") == R"(line 1, column 7: a backslash ends the line)");
  CHECK(ParseError(R"(m{1a="b"} 1)") == "line 1, column 3: expected a label name");
  CHECK(ParseError(R"(m{a="b",,} 1)") == "line 1, column 9: expected a label name");
  CHECK(ParseError(R"(m{a="1",b="2",a="3"} 1)") == "line 1, column 15: duplicate label 'a'");
  CHECK(ParseError(R"(m{a "b"} 1)") == "line 1, column 5: expected '=' after label name");
  CHECK(ParseError(R"(m{a=b} 1)") == R"(line 1, column 5: expected '"' to open the label value)");
  CHECK(ParseError(R"(m{a="b" c="d"} 1)") ==
        "line 1, column 9: expected ',' or '}' after label value");
  CHECK(ParseError(R"(m{a="b")") == "line 1, column 8: expected ',' or '}' after label value");
  // Names, values and timestamps.
  CHECK(ParseError("1m 1") == "line 1, column 1: expected a metric name");
  CHECK(ParseError("m-x 1") == "line 1, column 2: invalid character in metric name");
  CHECK(ParseError(R"(m{a="b"})") == "line 1, column 9: expected a value");
  CHECK(ParseError("m  \r\n") == "line 1, column 4: expected a value");
  CHECK(ParseError("m abc") == "line 1, column 3: invalid value 'abc'");
  CHECK(ParseError("m inf") == "line 1, column 3: invalid value 'inf'");
  CHECK(ParseError("m 1.5.2") == "line 1, column 3: invalid value '1.5.2'");
  CHECK(ParseError("m 1e999") == "line 1, column 3: invalid value '1e999'");
  CHECK(ParseError("m 1 12.5") == "line 1, column 5: invalid timestamp '12.5'");
  CHECK(ParseError("m 1 1700000000000 extra") ==
        "line 1, column 19: unexpected text after the timestamp");
  // HELP and TYPE.
  CHECK(ParseError(R"(# HELP m bad \" quote)") == R"(line 1, column 14: unknown escape '\"')");
  CHECK(ParseError("# TYPE") == "line 1, column 7: expected a metric name");
  CHECK(ParseError("# TYPE m-x gauge") == "line 1, column 9: invalid character in metric name");
  CHECK(ParseError("# TYPE m histo") ==
        "line 1, column 10: expected a metric type (counter, gauge, histogram, summary or "
        "untyped)");
  CHECK(ParseError("# TYPE m gauge extra") ==
        "line 1, column 16: unexpected text after the metric type");
}

TEST_CASE("Every broken line is reported, the first ten in full", "[telemetry]") {
  CHECK(ParseError("a 1\nb{\n# TYPE b gauge\nc 1 2 3\n") ==
        "line 2, column 3: expected a label name\n"
        "line 4, column 7: unexpected text after the timestamp");

  std::string text = "good 1\n";
  std::string expected;
  for (int line = 2; line <= 13; ++line) {
    text += "bad\n";
    if (line <= 11) expected += "line " + std::to_string(line) + ", column 4: expected a value\n";
  }
  CHECK(ParseError(text) == expected + "2 more bad lines not shown");
}

}  // namespace
}  // namespace stagegate::telemetry

// One requests.jsonl line: valid JSON whatever the record holds, every field where it belongs.

#include "load/record_json.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

namespace stagegate::load {
namespace {

using json = nlohmann::json;

TEST_CASE("A record line is one JSON object with every field, hostile text kept as text",
          "[load]") {
  RequestRecord r;
  r.run_id = "run \"1\"";
  r.phase_id = 3;
  r.sequence = 41;
  r.worker = 1;
  r.task_id = "task\\x";
  r.persona = "hr-partner";
  r.intended_ns = 1'000'000;
  r.sent_ns = 1'500'000;
  r.first_byte_ns = 2'000'000;
  r.first_token_ns = 3'000'000;
  r.first_answer_ns = 4'000'000;
  r.end_ns = 9'250'000;
  r.chunk_times_ns = {3'000'000, 3'500'000, 4'000'000};
  r.outcome = Outcome::kMalformedStream;
  r.http_status = 200;
  r.error_message = "malformed\nJSON \x01 in chunk 3: {\"a\"";
  r.retry_after_s = 2.5;
  r.input_tokens = 12;
  r.input_token_source = "usage";
  r.output_tokens = 3;
  r.token_source = "counted";
  r.requested_output_tokens = 64;
  r.queue_ns = 250'000;
  r.finish_reason = "length";
  r.answer_text = "</script><script>alert('x')</script> \xC3\xBC\t";
  r.reasoning_text = "think";
  r.tool_calls_json =
      R"([{"index":0,"id":"c1","type":"function","name":"open_ticket","arguments":"{\"a\":1}"}])";
  r.server_timing = R"(retrieval;dur=12.5;desc="BM25", identity;dur=0.25)";
  r.trace_id = "0af7651916cd43dd8448eb211c80319c";

  std::string line;
  AppendRecordLine(r, line);
  REQUIRE(line.back() == '\n');
  REQUIRE(std::count(line.begin(), line.end(), '\n') == 1);
  const json j = json::parse(line);
  CHECK(j["run_id"] == "run \"1\"");
  CHECK(j["phase_id"] == 3);
  CHECK(j["sequence"] == 41);
  CHECK(j["worker"] == 1);
  CHECK(j["warmup"] == false);
  CHECK(
      j["input"] ==
      json::parse(R"({"task_id":"task\\x","persona":"hr-partner","requested_output_tokens":64})"));
  CHECK(j["stream"] == true);
  CHECK(j["times_ns"] == json::parse(R"({"intended":1000000,"sent":1500000,"first_byte":2000000,
    "first_token":3000000,"first_answer_token":4000000,"end":9250000})"));
  CHECK(j["latency_ms"]["schedule_lag"] == 0.5);
  CHECK(j["latency_ms"]["queue"] == 0.25);
  CHECK(j["latency_ms"]["ttft"] == 1.5);
  CHECK(j["latency_ms"]["ttst"] == 0.5);
  CHECK(j["latency_ms"]["e2e"] == 7.75);
  CHECK(j["latency_ms"]["corrected"] == 8.25);
  CHECK(j["outcome"] == "malformed_stream");
  CHECK(j["http_status"] == 200);
  CHECK(j["curl_code"].is_null());
  CHECK(j["error"] == r.error_message);
  CHECK(j["invalid_utf8"] == false);
  CHECK(j["retry_after_s"] == 2.5);
  CHECK(
      j["tokens"] ==
      json::parse(
          R"({"input":12,"input_source":"usage","cached":null,"output":3,"output_source":"counted"})"));
  CHECK(j["finish_reason"] == "length");
  CHECK(j["answer"] == r.answer_text);
  CHECK(j["reasoning"] == "think");
  CHECK(j["tool_calls"] == json::parse(r.tool_calls_json));
  CHECK(j["server_timing"] == json::parse(R"([{"name":"retrieval","dur_ms":12.5,"desc":"BM25"},
    {"name":"identity","dur_ms":0.25}])"));
  CHECK(j["chunk_times_ns"] == json::array({3'000'000, 3'500'000, 4'000'000}));
  CHECK(j["trace_id"] == r.trace_id);
}

TEST_CASE("A record that never got an answer writes nulls, and broken tool-call text as []",
          "[load]") {
  RequestRecord r;
  r.intended_ns = 5;
  r.outcome = Outcome::kTransportError;
  r.curl_code = 7;
  r.tool_calls_json = "[{broken";
  r.requested_input_tokens = 550;
  std::string line;
  AppendRecordLine(r, line);
  const json j = json::parse(line);
  CHECK(j["times_ns"]["sent"].is_null());
  CHECK(j["times_ns"]["end"].is_null());
  CHECK(j["latency_ms"]["ttft"].is_null());
  CHECK(j["latency_ms"]["schedule_lag"].is_null());
  CHECK(j["curl_code"] == 7);
  CHECK(j["http_status"].is_null());
  CHECK(j["tool_calls"] == json::array());
  CHECK(j["server_timing"] == json::array());
  CHECK(j["chunk_times_ns"] == json::array());
  CHECK(j["input"] ==
        json::parse(R"({"synthetic_input_tokens":550,"requested_output_tokens":null})"));
}

TEST_CASE("A record with bytes that are not UTF-8 is kept as U+FFFD and says so", "[load]") {
  RequestRecord r;
  r.outcome = Outcome::kMalformedStream;
  r.error_message = "malformed JSON in chunk 4: {\"content\":\"a\xFF\xFE\"}";
  r.answer_text = "caf\xC3\xA9 \xC3";  // a character cut short at the end
  r.server_timing = "db;desc=\"\xE9t\xE9\"";
  r.reasoning_text = "fine \xE2\x82\xAC";

  SECTION("KeepValidUtf8 replaces every ill-formed part and sets the flag") {
    KeepValidUtf8(r);
    CHECK(r.invalid_utf8);
    CHECK(r.error_message ==
          "malformed JSON in chunk 4: {\"content\":\"a\xEF\xBF\xBD\xEF\xBF\xBD\"}");
    CHECK(r.answer_text == "caf\xC3\xA9 \xEF\xBF\xBD");
    CHECK(r.server_timing == "db;desc=\"\xEF\xBF\xBDt\xEF\xBF\xBD\"");
    CHECK(r.reasoning_text == "fine \xE2\x82\xAC");
    std::string line;
    AppendRecordLine(r, line);
    const json j = json::parse(line);  // nlohmann's parser is strict about UTF-8
    CHECK(j["invalid_utf8"] == true);
    CHECK(j["error"] == r.error_message);
  }
  SECTION("a record that was never cleaned still writes a line a strict parser reads") {
    std::string line;
    AppendRecordLine(r, line);
    json j;
    REQUIRE_NOTHROW(j = json::parse(line));
    CHECK(j["answer"] == "caf\xC3\xA9 \xEF\xBF\xBD");
    CHECK(j["invalid_utf8"] == false);
  }
  SECTION("valid text is left alone and the flag stays unset") {
    RequestRecord valid;
    valid.answer_text = "caf\xC3\xA9";
    KeepValidUtf8(valid);
    CHECK_FALSE(valid.invalid_utf8);
    CHECK(valid.answer_text == "caf\xC3\xA9");
  }
}

}  // namespace
}  // namespace stagegate::load

#include "http/openai_stream.h"

#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "http/splits.h"
#include "http/sse_parser.h"
#include "test_util.h"

namespace stagegate::http {
namespace {

using testing::ByteByByte;
using testing::RandomSplit;

using State = OpenAiStreamDecoder::State;

std::string_view StateName(State state) {
  switch (state) {
    case State::kStreaming:
      return "streaming";
    case State::kDone:
      return "done";
    case State::kError:
      return "error";
    case State::kMalformed:
      return "malformed";
  }
  return "?";
}

std::string ShowTime(std::optional<int64_t> ns) {
  return ns ? std::to_string(*ns) : "none";
}

// Everything the decoder knows, as text, so two runs compare in one CHECK that shows the
// difference.
std::string Describe(const OpenAiStreamDecoder& decoder) {
  std::string text = "state=" + std::string(StateName(decoder.state())) + " error=\"" +
                     decoder.error() + "\"\ncontent=\"" + decoder.content() + "\"\nreasoning=\"" +
                     decoder.reasoning() + "\"\nfinish=\"" + decoder.finish_reason() + "\"\n";
  for (const ToolCallState& call : decoder.tool_calls())
    text += "tool " + std::to_string(call.index) + " id=" + call.id + " type=" + call.type +
            " name=" + call.name + " arguments=" + call.arguments + "\n";
  text += "usage=" + ShowTime(decoder.usage().prompt_tokens) + "/" +
          ShowTime(decoder.usage().completion_tokens) +
          " first_token=" + ShowTime(decoder.first_token_ns()) +
          " first_answer=" + ShowTime(decoder.first_answer_ns()) +
          " end=" + ShowTime(decoder.end_ns()) + " chunks=" + std::to_string(decoder.chunks()) +
          "\ntimes=";
  for (int64_t ns : decoder.content_times_ns())
    text += std::to_string(ns) + " ";
  return text;
}

std::string Describe(const std::vector<SseEvent>& events) {
  std::string text;
  for (const SseEvent& event : events)
    text += "[" + event.type + "|" + event.id + "|" +
            (event.retry_ms ? std::to_string(*event.retry_ms) : "") + "] " + event.data + "\n";
  return text;
}

// A stream fed through the parser and the decoder, the way the transport will: event k (from 1)
// arrives at k microseconds, so times do not depend on how the bytes were split.
struct Decoded {
  std::vector<SseEvent> events;
  bool truncated = false;
  int64_t comments = 0;
  OpenAiStreamDecoder decoder;

  std::string Describe() const {
    return http::Describe(events) + "truncated=" + std::to_string(truncated) +
           " comments=" + std::to_string(comments) + "\n" + http::Describe(decoder);
  }
};

constexpr int64_t kEventNs = 1000;

Decoded DecodePieces(const std::vector<std::string_view>& pieces) {
  Decoded decoded;
  SseParser parser;
  std::vector<SseEvent> out;
  for (std::string_view piece : pieces) {
    out.clear();
    parser.Feed(piece, out);
    for (const SseEvent& event : out) {
      decoded.events.push_back(event);
      decoded.decoder.OnEvent(event, static_cast<int64_t>(decoded.events.size()) * kEventNs);
    }
  }
  decoded.truncated = parser.Finish();
  decoded.comments = parser.comments();
  decoded.decoder.OnEnd(static_cast<int64_t>(decoded.events.size() + 1) * kEventNs);
  return decoded;
}

// Decodes the data of each event in `data`, in order, without [DONE] unless given.
OpenAiStreamDecoder DecodeData(const std::vector<std::string>& data) {
  OpenAiStreamDecoder decoder;
  int64_t ns = 0;
  for (const std::string& text : data)
    decoder.OnEvent(SseEvent{.data = text}, ns += kEventNs);
  return decoder;
}

std::optional<int64_t> EventTime(int64_t event) {
  return event * kEventNs;
}

struct Expected {
  const char* file;
  State state;
  std::string error;
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  std::vector<ToolCallState> tool_calls;
  StreamUsage usage;
  size_t events = 0;  // SSE events, [DONE] included
  int64_t content_events = 0;
  std::optional<int64_t> first_token_ns;
  std::optional<int64_t> first_answer_ns;
  bool truncated = false;  // Finish found a partial event
  int64_t comments = 0;
};

const std::vector<Expected>& Fixtures() {
  static const std::vector<Expected> kFixtures = {
      {.file = "vllm-chat.sse",
       .state = State::kDone,
       .content = "The capital of France is Paris.",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 14, .completion_tokens = 8},
       .events = 11,  // role, 7 tokens, finish, usage, [DONE]
       .content_events = 7,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2)},
      {.file = "openai-chat.sse",
       .state = State::kDone,
       .content = "Hello! How can I help you today?",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 9, .completion_tokens = 9},
       .events = 13,
       .content_events = 9,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2)},
      {.file = "openai-tools.sse",
       .state = State::kDone,
       .finish_reason = "tool_calls",
       .tool_calls = {{.index = 0,
                       .id = "call_Xq7LmN2pR8sT4vW1yZ3aB5cD",
                       .type = "function",
                       .name = "get_weather",
                       .arguments = R"({"location":"Paris, France","unit":"celsius"})"},
                      {.index = 1,
                       .id = "call_Jk9HgF6dS3aQ1wE5rT7yU2iO",
                       .type = "function",
                       .name = "get_weather",
                       .arguments = R"({"location":"Tokyo, Japan","unit":"celsius"})"}},
       .usage = {.prompt_tokens = 84, .completion_tokens = 52},
       .events = 29,          // 2 × (header + 12 fragments), finish, usage, [DONE]
       .content_events = 24,  // the argument fragments
       .first_token_ns = EventTime(2),
       .first_answer_ns = std::nullopt},
      {.file = "llama-cpp.sse",
       .state = State::kDone,
       .content = "Paris is the capital of France.",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 25, .completion_tokens = 8},
       .events = 10,
       .content_events = 7,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2)},
      {.file = "ollama.sse",
       .state = State::kDone,
       .content = "Sure! Here are three colours: red, green and blue.",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 31, .completion_tokens = 14},
       .events = 16,
       .content_events = 13,
       .first_token_ns = EventTime(1),
       .first_answer_ns = EventTime(1)},
      {.file = "tgi.sse",
       .state = State::kDone,
       .content = "Deep learning is a subset of machine learning.",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 21, .completion_tokens = 10},
       .events = 12,
       .content_events = 9,
       .first_token_ns = EventTime(1),
       .first_answer_ns = EventTime(1)},
      {.file = "deepseek-reasoner.sse",
       .state = State::kDone,
       .content = "2 + 2 = **4**",
       .reasoning = "Okay, the user asks for 2+2.",
       .finish_reason = "stop",
       .usage = {.prompt_tokens = 12, .completion_tokens = 18},
       .events = 20,  // role, 10 reasoning, 7 content, finish, [DONE]
       .content_events = 17,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(12),
       .comments = 2},
      {.file = "crlf-gateway.sse",
       .state = State::kDone,
       .content = "Bonjour le monde — ça va ?",
       .finish_reason = "stop",
       .events = 12,  // prompt filter results, role, 8 tokens, finish, [DONE]
       .content_events = 8,
       .first_token_ns = EventTime(3),
       .first_answer_ns = EventTime(3)},
      {.file = "keepalive-fields.sse",
       .state = State::kDone,
       .content = " Once upon a time, there",
       .finish_reason = "length",
       .usage = {.prompt_tokens = 4, .completion_tokens = 6},
       .events = 8,
       .content_events = 6,
       .first_token_ns = EventTime(1),
       .first_answer_ns = EventTime(1),
       .comments = 3},
      {.file = "truncated.sse",
       .state = State::kMalformed,
       .error = "stream ended without [DONE]",
       .content = "Photosynthesis converts light",
       .events = 5,
       .content_events = 4,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2),
       .truncated = true},
      {.file = "error-after-content.sse",
       .state = State::kError,
       .error = "EngineCore encountered an issue. See stack trace (above) for the root cause.",
       .content = "Step 1: open",
       .events = 7,  // the [DONE] after the error is received, and ignored
       .content_events = 4,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2)},
      {.file = "malformed-json.sse",
       .state = State::kMalformed,
       .error =
           "malformed JSON in chunk 5: "
           R"({"id":"chatcmpl-9c1f0f4e5a3b4d0e8f7a6b5c4d3e2f10","choices":[{"delta":{"content")",
       .content = "Rome was not",
       .events = 11,
       .content_events = 3,
       .first_token_ns = EventTime(2),
       .first_answer_ns = EventTime(2)},
  };
  return kFixtures;
}

TEST_CASE("each captured stream decodes to its expected answer, usage and state", "[openai]") {
  for (const Expected& expected : Fixtures()) {
    INFO(expected.file);
    const std::string stream =
        testing::ReadText(testing::Testdata(std::string("sse/") + expected.file));
    REQUIRE(!stream.empty());
    const Decoded decoded = DecodePieces({stream});
    const OpenAiStreamDecoder& decoder = decoded.decoder;
    CHECK(StateName(decoder.state()) == StateName(expected.state));
    CHECK(decoder.error() == expected.error);
    CHECK(decoder.content() == expected.content);
    CHECK(decoder.reasoning() == expected.reasoning);
    CHECK(decoder.finish_reason() == expected.finish_reason);
    CHECK(decoder.tool_calls() == expected.tool_calls);
    CHECK(decoder.usage().prompt_tokens == expected.usage.prompt_tokens);
    CHECK(decoder.usage().completion_tokens == expected.usage.completion_tokens);
    CHECK(decoded.events.size() == expected.events);
    CHECK(decoder.content_events() == expected.content_events);
    CHECK(decoder.first_token_ns() == expected.first_token_ns);
    CHECK(decoder.first_answer_ns() == expected.first_answer_ns);
    CHECK(decoded.truncated == expected.truncated);
    CHECK(decoded.comments == expected.comments);
    // The first token is the first of the token times.
    if (!decoder.content_times_ns().empty())
      CHECK(decoder.content_times_ns().front() == decoder.first_token_ns());
  }
}

TEST_CASE("each captured stream decodes the same whole, byte by byte and in 200 random splits",
          "[openai]") {
  for (size_t number = 0; number < Fixtures().size(); ++number) {
    const Expected& expected = Fixtures()[number];
    INFO(expected.file);
    const std::string stream =
        testing::ReadText(testing::Testdata(std::string("sse/") + expected.file));
    const std::string whole = DecodePieces({stream}).Describe();
    CHECK(DecodePieces(ByteByByte(stream)).Describe() == whole);
    std::mt19937 random(static_cast<uint32_t>(7919 * (number + 1)));
    for (int split = 0; split < 200; ++split) {
      const std::string got = DecodePieces(RandomSplit(stream, random)).Describe();
      if (got != whole) {
        INFO("random split " << split);
        REQUIRE(got == whole);
      }
    }
  }
}

TEST_CASE("the keep-alive fixture carries ids, event types, retry and comments", "[openai]") {
  const std::string stream = testing::ReadText(testing::Testdata("sse/keepalive-fields.sse"));
  const Decoded decoded = DecodePieces({stream});
  REQUIRE(decoded.events.size() == 8);
  for (size_t at = 0; at < 7; ++at) {
    CHECK(decoded.events[at].type == "completion");
    CHECK(decoded.events[at].id == "evt-" + std::to_string(at + 1));
    CHECK_FALSE(decoded.events[at].retry_ms);  // the retry came in a block of its own
  }
  CHECK(decoded.events[7].data == "[DONE]");
  CHECK(decoded.events[7].id == "evt-7");  // the last event ID persists
  // The chunk a gateway re-wrapped over two data lines is one JSON text.
  CHECK(decoded.events[5].data.find("\n\"choices\"") != std::string::npos);
  SseParser parser;
  std::vector<SseEvent> out;
  parser.Feed(stream, out);
  CHECK(parser.retry_ms() == 5000);
  CHECK(parser.last_comment() == "server-timing upstream;dur=412.7");
}

TEST_CASE("[DONE] ends the stream; later events and the end change nothing", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"content":"a"}}]})",
      "[DONE]",
      R"({"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]})",
      R"({"error":"late"})",
  });
  decoder.OnEnd(99);
  CHECK(decoder.state() == State::kDone);
  CHECK(decoder.error() == "");
  CHECK(decoder.content() == "a");
  CHECK(decoder.finish_reason() == "");
  CHECK(decoder.end_ns() == 2000);
  CHECK(decoder.chunks() == 1);
  // Whitespace around the marker is tolerated.
  CHECK(DecodeData({" [DONE]\n"}).state() == State::kDone);
}

TEST_CASE("the end of the body without [DONE] is a malformed stream that keeps its text",
          "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"content":"half"}}]})",
  });
  CHECK(decoder.state() == State::kStreaming);
  decoder.OnEnd(5000);
  CHECK(decoder.state() == State::kMalformed);
  CHECK(decoder.error() == "stream ended without [DONE]");
  CHECK(decoder.content() == "half");
  CHECK(decoder.end_ns() == 5000);
  OpenAiStreamDecoder empty;
  empty.OnEnd(1);
  CHECK(empty.state() == State::kMalformed);
}

TEST_CASE("error objects after HTTP 200 end the stream with their message", "[openai]") {
  struct Case {
    std::string data;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit"}})",
       "Rate limit reached"},
      {R"({"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"})",
       "Request failed during generation: Server error: CUDA out of memory"},  // TGI
      {R"({"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400})",
       "This model's maximum context length is 4096 tokens."},  // vLLM
      // Without a usable message the error object is the message.
      {R"({"error":{"code":500}})", R"({"code":500})"},
      {R"({"error":{"message":""}})", R"({"message":""})"},
      {R"({"error":42})", "42"},
      {R"({"object":"error","message":7})", R"({"message":7,"object":"error"})"},
  };
  for (const Case& each : cases) {
    INFO(each.data);
    OpenAiStreamDecoder decoder = DecodeData({
        R"({"choices":[{"index":0,"delta":{"content":"so far"}}]})",
        each.data,
        "[DONE]",
    });
    decoder.OnEnd(10000);
    CHECK(decoder.state() == State::kError);
    CHECK(decoder.error() == each.message);
    CHECK(decoder.content() == "so far");
    CHECK(decoder.end_ns() == 2000);
  }
  // "error": null on an ordinary chunk is no error.
  OpenAiStreamDecoder ordinary =
      DecodeData({R"({"error":null,"choices":[{"index":0,"delta":{"content":"x"}}]})", "[DONE]"});
  CHECK(ordinary.state() == State::kDone);
  CHECK(ordinary.content() == "x");
}

TEST_CASE("data that is not a JSON object ends the stream as malformed, naming the chunk",
          "[openai]") {
  const std::string first = R"({"choices":[{"index":0,"delta":{"content":"ok"}}]})";
  CHECK(DecodeData({first, "{\"choices\":"}).error() == "malformed JSON in chunk 2: {\"choices\":");
  CHECK(DecodeData({first, "[1,2]"}).error() == "chunk 2 is not a JSON object: [1,2]");
  CHECK(DecodeData({"\"text\""}).error() == "chunk 1 is not a JSON object: \"text\"");
  CHECK(DecodeData({"42"}).error() == "chunk 1 is not a JSON object: 42");
  CHECK(DecodeData({"null"}).error() == "chunk 1 is not a JSON object: null");
  CHECK(DecodeData({"data: {}"}).error() == "malformed JSON in chunk 1: data: {}");
  OpenAiStreamDecoder decoder = DecodeData({first, "{oops", first});
  CHECK(decoder.state() == State::kMalformed);
  CHECK(decoder.content() == "ok");  // the text before is kept; nothing after is taken
  CHECK(decoder.chunks() == 2);
}

TEST_CASE("a malformed chunk is quoted by its first 80 characters, never cutting one", "[openai]") {
  const std::string ascii = "{" + std::string(100, 'a');
  CHECK(DecodeData({ascii}).error() == "malformed JSON in chunk 1: " + ascii.substr(0, 80));
  // 79 ASCII bytes then two-byte characters: the 80th character is whole.
  const std::string accents = "{" + std::string(78, 'a') + "\xC3\xA9\xC3\xA9\xC3\xA9";
  CHECK(DecodeData({accents}).error() ==
        "malformed JSON in chunk 1: {" + std::string(78, 'a') + "\xC3\xA9");
  // The 80th character is a four-byte one: taken whole, and nothing after it.
  const std::string emoji = "{" + std::string(78, 'a') + "\xF0\x9F\x98\x80" + "tail";
  CHECK(DecodeData({emoji}).error() ==
        "malformed JSON in chunk 1: {" + std::string(78, 'a') + "\xF0\x9F\x98\x80");
}

TEST_CASE("empty or blank data is a keep-alive, not a chunk", "[openai]") {
  OpenAiStreamDecoder decoder =
      DecodeData({"", " ", R"({"choices":[{"index":0,"delta":{"content":"x"}}]})", "\n", "[DONE]"});
  CHECK(decoder.state() == State::kDone);
  CHECK(decoder.chunks() == 1);
  CHECK(decoder.content() == "x");
}

TEST_CASE("text_completion chunks carry the answer in choices[0].text", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"object":"text_completion","choices":[{"index":0,"text":" Hello","finish_reason":null}]})",
      R"({"object":"text_completion","choices":[{"index":0,"text":"","finish_reason":null}]})",
      R"({"object":"text_completion","choices":[{"index":0,"text":" world","finish_reason":"length"}]})",
      "[DONE]",
  });
  CHECK(decoder.content() == " Hello world");
  CHECK(decoder.finish_reason() == "length");
  CHECK(decoder.content_times_ns() == std::vector<int64_t>{1000, 3000});
  CHECK(decoder.first_answer_ns() == 1000);
}

TEST_CASE("only choice 0 is decoded when the server streams several", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":1,"delta":{"content":"B1"}},{"index":0,"delta":{"content":"A1"}}]})",
      R"({"choices":[{"index":1,"delta":{"content":"B2"},"finish_reason":"length"}]})",
      R"({"choices":[{"index":0,"delta":{"content":"A2"},"finish_reason":"stop"}]})",
      R"({"choices":[{"delta":{"content":"-by-position"}}]})",  // no index: position 0
      R"({"choices":[{"index":"0","delta":{"content":"?"}},{"index":0,"delta":{"content":"!"}}]})",
      "[DONE]",
  });
  // The last chunk: the first choice's index is unusable, so it counts as position 0.
  CHECK(decoder.content() == "A1A2-by-position?");
  CHECK(decoder.finish_reason() == "stop");
  CHECK(decoder.content_times_ns() == std::vector<int64_t>{1000, 3000, 4000, 5000});
}

TEST_CASE("usage comes from any chunk; null and wrong types are absent; the last wins",
          "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null})",
      R"({"choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}})",
      R"({"choices":[{"index":0,"delta":{"content":"c"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}})",
      R"({"choices":[],"usage":{"prompt_tokens":"5","completion_tokens":-3}})",
  });
  CHECK(decoder.usage().prompt_tokens == 5);
  CHECK(decoder.usage().completion_tokens == 2);
  OpenAiStreamDecoder none = DecodeData({R"({"choices":[],"usage":[1,2]})"});
  CHECK_FALSE(none.usage().prompt_tokens);
  CHECK_FALSE(none.usage().completion_tokens);
  OpenAiStreamDecoder fractional =
      DecodeData({R"({"usage":{"prompt_tokens":5.5,"completion_tokens":18446744073709551615}})"});
  CHECK_FALSE(fractional.usage().prompt_tokens);
  CHECK_FALSE(fractional.usage().completion_tokens);
}

TEST_CASE("cached prompt tokens come from usage.prompt_tokens_details, when well-formed",
          "[openai]") {
  OpenAiStreamDecoder cached = DecodeData({
      R"({"choices":[{"index":0,"delta":{"content":"a"}}]})",
      R"({"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":896}}})",
  });
  CHECK(cached.usage().cached_tokens == 896);
  CHECK(cached.usage().prompt_tokens == 900);
  for (const char* details :
       {R"(null)", R"([896])", R"("896")", R"({"cached_tokens":-1})", R"({"cached_tokens":"896"})",
        R"({"cached_tokens":8.5})", R"({"cached_tokens":18446744073709551615})", R"({"cached":1})",
        R"({"cached_tokens":{"n":1}})"}) {
    INFO(details);
    OpenAiStreamDecoder hostile = DecodeData(
        {std::string(
             R"({"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":)") +
         details + "}}"});
    CHECK_FALSE(hostile.usage().cached_tokens);
    CHECK(hostile.usage().prompt_tokens == 9);  // the rest of usage is kept
  }
}

TEST_CASE("tool-call fragments merge by index, in index order", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"lookup","arguments":""}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":"{\"q\":"}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"id\":7}"}},{"index":0,"function":{"arguments":"\"x\"}"}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"name":"","arguments":""}}]}}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
      "[DONE]",
  });
  const std::vector<ToolCallState> expected = {
      {.index = 0,
       .id = "call_a",
       .type = "function",
       .name = "search",
       .arguments = R"({"q":"x"})"},
      {.index = 1,
       .id = "call_b",
       .type = "function",
       .name = "lookup",
       .arguments = R"({"id":7})"},
  };
  CHECK(decoder.tool_calls() == expected);
  CHECK(decoder.finish_reason() == "tool_calls");
  CHECK(decoder.content() == "");
  // Events 2 and 3 carry argument text; 1 (empty arguments) and 4 (all empty) do not.
  CHECK(decoder.content_times_ns() == std::vector<int64_t>{2000, 3000});
  CHECK(decoder.first_token_ns() == 2000);
  CHECK_FALSE(decoder.first_answer_ns());
}

TEST_CASE("a name or id sent again replaces the earlier one, arguments accumulate", "[openai]") {
  // Some servers repeat the whole header of the call with every fragment.
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_time","arguments":"\"UTC\"}"}}]}}]})",
  });
  const std::vector<ToolCallState> expected = {{.index = 0,
                                                .id = "call_1",
                                                .type = "function",
                                                .name = "get_time",
                                                .arguments = R"({"tz":"UTC"})"}};
  CHECK(decoder.tool_calls() == expected);
}

TEST_CASE("tool calls without an index are placed by their position", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"b","arguments":"{\"k\":1}"}}]}}]})",
  });
  REQUIRE(decoder.tool_calls().size() == 2);
  CHECK(decoder.tool_calls()[0].name == "a");
  CHECK(decoder.tool_calls()[1].arguments == R"({"k":1})");
}

TEST_CASE("reasoning comes first as a token, the answer after it", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
      R"({"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]})",
      R"({"choices":[{"index":0,"delta":{"reasoning":" more"}}]})",
      // Both names for the same text (as some servers send): counted once.
      R"({"choices":[{"index":0,"delta":{"reasoning_content":".","reasoning":"."}}]})",
      R"({"choices":[{"index":0,"delta":{"content":"Answer","reasoning_content":null}}]})",
      R"({"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]})",
      "[DONE]",
  });
  CHECK(decoder.reasoning() == "think more.");
  CHECK(decoder.content() == "Answer");
  CHECK(decoder.first_token_ns() == 2000);
  CHECK(decoder.first_answer_ns() == 5000);
  CHECK(decoder.content_times_ns() == std::vector<int64_t>{2000, 3000, 4000, 5000});
  CHECK(decoder.content_events() == 4);
}

TEST_CASE("finish_reason keeps the last non-empty value", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":""}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":null}]})",
  });
  CHECK(decoder.finish_reason() == "length");
  CHECK(DecodeData({R"({"choices":[{"index":0,"finish_reason":""}]})"}).finish_reason() == "");
}

TEST_CASE("fields of the wrong type count as absent and the stream goes on", "[openai]") {
  OpenAiStreamDecoder decoder = DecodeData({
      R"({})",
      R"({"choices":"x"})",
      R"({"choices":[1,"two",null,[]]})",
      R"({"choices":[{"index":0,"delta":[]}]})",
      R"({"choices":[{"index":0,"delta":{"content":5,"reasoning_content":{},"tool_calls":{}}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[7,{"index":-1,"function":"f"},{"index":0,"id":3,"function":{"name":[],"arguments":false}}]}}]})",
      R"({"choices":[{"index":0,"text":["t"],"finish_reason":1}]})",
      R"({"choices":[{"index":0,"delta":{"content":"ok"}}]})",
      "[DONE]",
  });
  CHECK(decoder.state() == State::kDone);
  CHECK(decoder.content() == "ok");
  CHECK(decoder.reasoning() == "");
  CHECK(decoder.finish_reason() == "");
  // The call with index -1 is placed by position (1); the one with index 0 keeps nothing usable.
  const std::vector<ToolCallState> expected = {{.index = 0}, {.index = 1}};
  CHECK(decoder.tool_calls() == expected);
  CHECK(decoder.content_times_ns() == std::vector<int64_t>{8000});
  CHECK(decoder.chunks() == 8);
}

TEST_CASE("the event type is not looked at", "[openai]") {
  OpenAiStreamDecoder decoder;
  decoder.OnEvent({.type = "completion", .data = R"({"choices":[{"index":0,"text":"a"}]})"}, 1);
  decoder.OnEvent({.type = "done", .data = "[DONE]"}, 2);
  CHECK(decoder.state() == State::kDone);
  CHECK(decoder.content() == "a");
}

}  // namespace
}  // namespace stagegate::http

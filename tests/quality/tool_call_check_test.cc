#include "quality/tool_call_check.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "quality/checks.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

const json kOpenTicketSchema = json::parse(R"({"type": "object", "properties": {
    "summary": {"type": "string"}, "queue": {"type": "string", "enum": ["it", "hr"]},
    "priority": {"type": "string"}, "year": {"type": "integer"},
    "tags": {"type": "array"}, "note": {"type": ["string", "null"]}}})");

manifest::Check ToolCall(json arguments, json parameters = kOpenTicketSchema) {
  return {.kind = manifest::CheckKind::kToolCall,
          .text = "open_ticket",
          .arguments = std::move(arguments),
          .parameters = std::move(parameters)};
}

// One call of `name` with `arguments` sent as the wire sends them: a JSON text.
std::string CallsOf(const std::string& name, const std::string& arguments) {
  return json::array({{{"index", 0},
                       {"id", "call_1"},
                       {"type", "function"},
                       {"name", name},
                       {"arguments", arguments}}})
      .dump();
}

const json kExpected = {{"queue", "hr"}, {"summary", "regex:tax code"}};

TEST_CASE("tool_call passes on the tool with the arguments expected, others allowed",
          "[quality][checks][tool_call]") {
  const ToolCallVerdict verdict = JudgeToolCall(
      ToolCall(kExpected),
      CallsOf("open_ticket",
              R"({"queue":"hr","summary":"My Tax Code changed to BR","priority":"normal"})"));
  CHECK(verdict.passed());
  CHECK(verdict.detail.empty());
  CHECK(Name(verdict.failure).empty());
  // A second call of the tool may be the matching one.
  const std::string two =
      json::array(
          {{{"name", "open_ticket"}, {"arguments", R"({"queue":"it"})"}},
           {{"name", "open_ticket"}, {"arguments", R"({"queue":"hr","summary":"tax code"})"}}})
          .dump();
  CHECK(JudgeToolCall(ToolCall(kExpected), two).passed());
}

TEST_CASE("tool_call sorts each failure into its class", "[quality][checks][tool_call]") {
  struct Case {
    std::string calls;
    ToolCallFailure failure;
    std::string name;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"[]", ToolCallFailure::kNotCalled, "not_called",
       "no tool was called (expected open_ticket)"},
      {"", ToolCallFailure::kNotCalled, "not_called", "no tool was called (expected open_ticket)"},
      {CallsOf("lookup_ticket", R"({"queue":"hr"})"), ToolCallFailure::kWrongTool, "wrong_tool",
       "no call of open_ticket (called: lookup_ticket)"},
      {CallsOf("open_ticket", R"({"summary":"tax code"})"), ToolCallFailure::kMissingArgument,
       "missing_argument", "open_ticket: argument 'queue' is missing"},
      {CallsOf("open_ticket", R"({"queue":7,"summary":"tax code"})"),
       ToolCallFailure::kArgumentType, "argument_type",
       "open_ticket: argument 'queue' is an integer (7), the tool's schema says string"},
      {CallsOf("open_ticket", R"({"queue":"it","summary":"tax code"})"),
       ToolCallFailure::kArgumentValue, "argument_value",
       "open_ticket: argument 'queue' is \"it\", expected \"hr\""},
      {CallsOf("open_ticket", R"({"queue":"hr","summary":"payslip"})"),
       ToolCallFailure::kArgumentValue, "argument_value",
       "open_ticket: argument 'summary' is \"payslip\", which does not match /tax code/"},
      {CallsOf("open_ticket", R"({"queue":"hr", "summary":)"), ToolCallFailure::kUnparsed,
       "unparsed",
       "the arguments of open_ticket are not valid JSON: \"{\"queue\":\"hr\", "
       "\"summary\":\""},
      {CallsOf("open_ticket", R"(["hr", "tax code"])"), ToolCallFailure::kUnparsed, "unparsed",
       "the arguments of open_ticket are an array, not a JSON object"},
      {"{\"name\": \"open_ticket\"}", ToolCallFailure::kUnparsed, "unparsed",
       "the record's tool calls are not a JSON list"},
  };
  for (const Case& c : cases) {
    INFO(c.calls);
    const ToolCallVerdict verdict = JudgeToolCall(ToolCall(kExpected), c.calls);
    CHECK_FALSE(verdict.passed());
    CHECK(verdict.failure == c.failure);
    CHECK(Name(verdict.failure) == c.name);
    CHECK(verdict.detail == c.detail);
  }
}

TEST_CASE("a call failing on several arguments names each and takes the gravest class",
          "[quality][checks][tool_call]") {
  const ToolCallVerdict verdict =
      JudgeToolCall(ToolCall({{"queue", "hr"}, {"summary", "regex:.+"}, {"year", 2026}}),
                    CallsOf("open_ticket", R"({"queue":"it","year":"2026"})"));
  CHECK(verdict.failure == ToolCallFailure::kMissingArgument);
  CHECK(verdict.detail ==
        "open_ticket: argument 'queue' is \"it\", expected \"hr\"; argument 'summary' is "
        "missing; argument 'year' is a string (\"2026\"), the tool's schema says integer");
  const ToolCallVerdict type_over_value =
      JudgeToolCall(ToolCall({{"queue", "hr"}, {"year", 2026}}),
                    CallsOf("open_ticket", R"({"queue":"it","year":"2026"})"));
  CHECK(type_over_value.failure == ToolCallFailure::kArgumentType);
}

TEST_CASE("without a schema the expected value's JSON type judges the type",
          "[quality][checks][tool_call]") {
  const manifest::Check check = ToolCall({{"year", 2026}, {"summary", "regex:x"}}, nullptr);
  CHECK(JudgeToolCall(check, CallsOf("open_ticket", R"({"year":2026.0,"summary":"x"})")).passed());
  const ToolCallVerdict text_year =
      JudgeToolCall(check, CallsOf("open_ticket", R"({"year":"2026","summary":"x"})"));
  CHECK(text_year.failure == ToolCallFailure::kArgumentType);
  CHECK(text_year.detail ==
        "open_ticket: argument 'year' is a string (\"2026\"), expected a number");
  // A regex on a value that is not a string is a type failure, not a crash or a match.
  const ToolCallVerdict number_summary =
      JudgeToolCall(check, CallsOf("open_ticket", R"({"year":2026,"summary":17})"));
  CHECK(number_summary.failure == ToolCallFailure::kArgumentType);
  CHECK(number_summary.detail ==
        "open_ticket: argument 'summary' is an integer (17), expected a string");
  const ToolCallVerdict other_year =
      JudgeToolCall(check, CallsOf("open_ticket", R"({"year":2025,"summary":"x"})"));
  CHECK(other_year.failure == ToolCallFailure::kArgumentValue);
  CHECK(other_year.detail == "open_ticket: argument 'year' is 2025, expected 2026");
}

TEST_CASE("nested objects match as subsets and lists element by element",
          "[quality][checks][tool_call]") {
  const manifest::Check check = ToolCall(
      {{"filter", {{"site", "regex:^leeds$"}, {"floor", 1}}}, {"tags", {"vpn", 2}}}, nullptr);
  CHECK(
      JudgeToolCall(check, CallsOf("open_ticket", R"({"filter":{"site":"Leeds","floor":1,"x":[1]},)"
                                                  R"("tags":["vpn",2]})"))
          .passed());
  const ToolCallVerdict deeper = JudgeToolCall(
      check, CallsOf("open_ticket", R"({"filter":{"site":"York","floor":1},"tags":["vpn",2]})"));
  CHECK(deeper.failure == ToolCallFailure::kArgumentValue);
  CHECK(deeper.detail == "open_ticket: argument 'filter' is an object, expected an object");
  const ToolCallVerdict longer = JudgeToolCall(
      check, CallsOf("open_ticket", R"({"filter":{"site":"leeds","floor":1},"tags":["vpn",2,3]})"));
  CHECK(longer.failure == ToolCallFailure::kArgumentValue);
  CHECK(longer.detail == "open_ticket: argument 'tags' is a list of 3, expected a list of 2");
  const ToolCallVerdict list_for_object =
      JudgeToolCall(check, CallsOf("open_ticket", R"({"filter":["leeds",1],"tags":["vpn",2]})"));
  CHECK(list_for_object.failure == ToolCallFailure::kArgumentType);
}

TEST_CASE("huge and hostile arguments are judged and shown shortened",
          "[quality][checks][tool_call]") {
  const std::string huge(1 << 20, 'a');
  const ToolCallVerdict big_value =
      JudgeToolCall(ToolCall({{"queue", "hr"}}),
                    CallsOf("open_ticket", json({{"queue", huge + "\x1b[31m"}}).dump()));
  CHECK(big_value.failure == ToolCallFailure::kArgumentValue);
  CHECK(big_value.detail.size() < 200);
  CHECK(big_value.detail.find('\x1b') == std::string::npos);
  const ToolCallVerdict big_text =
      JudgeToolCall(ToolCall({{"queue", "hr"}}), CallsOf("open_ticket", "{" + huge));
  CHECK(big_text.failure == ToolCallFailure::kUnparsed);
  CHECK(big_text.detail.size() < 200);
  // A regex over a megabyte runs in linear time (RE2) and still finds its match at the end.
  CHECK(JudgeToolCall(ToolCall({{"summary", "regex:a{3}b$"}}),
                      CallsOf("open_ticket", json({{"summary", huge + "b"}}).dump()))
            .passed());
  // Deep nesting in the arguments is parsed without recursion and judged on the value expected.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const ToolCallVerdict nested = JudgeToolCall(
      ToolCall({{"queue", "hr"}}), CallsOf("open_ticket", R"({"queue":"hr","x":)" + deep + "}"));
  CHECK(nested.passed());
  // Calls that are not objects, or lack a name, are calls of no tool expected.
  const ToolCallVerdict odd = JudgeToolCall(ToolCall({}), R"([3, {"arguments": "{}"}, null])");
  CHECK(odd.failure == ToolCallFailure::kWrongTool);
  CHECK(odd.detail ==
        "no call of open_ticket (called: (a call without a name), (a call without a "
        "name), (a call without a name))");
}

TEST_CASE("a call's arguments may be an object, empty text or absent",
          "[quality][checks][tool_call]") {
  CHECK(JudgeToolCall(ToolCall({{"queue", "hr"}}),
                      R"([{"name": "open_ticket", "arguments": {"queue": "hr"}}])")
            .passed());
  CHECK(JudgeToolCall(ToolCall({}), R"([{"name": "open_ticket", "arguments": ""}])").passed());
  const ToolCallVerdict absent =
      JudgeToolCall(ToolCall({{"queue", "hr"}}), R"([{"name": "open_ticket"}])");
  CHECK(absent.failure == ToolCallFailure::kMissingArgument);
  // The wire's nested form reads the same as the record's flat one.
  CHECK(
      JudgeToolCall(ToolCall({{"queue", "hr"}}),
                    R"([{"function": {"name": "open_ticket", "arguments": "{\"queue\":\"hr\"}"}}])")
          .passed());
}

TEST_CASE("no_tool_call passes only when no tool was called", "[quality][checks][tool_call]") {
  CHECK(JudgeNoToolCall("[]").passed());
  CHECK(JudgeNoToolCall("").passed());
  const ToolCallVerdict called = JudgeNoToolCall(CallsOf("lookup_ticket", "{}"));
  CHECK(called.failure == ToolCallFailure::kShouldNotHaveCalled);
  CHECK(Name(called.failure) == "should_not_have_called");
  CHECK(called.detail == "a tool was called where none should be (called: lookup_ticket)");
  CHECK(JudgeNoToolCall("not json").failure == ToolCallFailure::kUnparsed);
}

TEST_CASE("RunChecks gives tool_call and no_tool_call results their failure class",
          "[quality][checks][tool_call]") {
  manifest::Task task;
  task.id = "t";
  task.checks = {ToolCall({{"queue", "hr"}}),
                 {.kind = manifest::CheckKind::kNoToolCall},
                 {.kind = manifest::CheckKind::kToolCalled, .text = "open_ticket"}};
  load::RequestRecord answer;
  answer.tool_calls_json = CallsOf("open_ticket", R"({"queue":"it"})");
  const std::vector<CheckResult> results = RunChecks(task, answer, {});
  REQUIRE(results.size() == 3);
  CHECK(results[0].kind == "tool_call");
  CHECK(results[0].target == "open_ticket");
  CHECK_FALSE(results[0].passed);
  CHECK(results[0].failure_class == "argument_value");
  CHECK(results[1].kind == "no_tool_call");
  CHECK(results[1].target == "no tool call");
  CHECK(results[1].failure_class == "should_not_have_called");
  CHECK(results[2].passed);  // the name alone passes the older check
  CHECK(results[2].failure_class.empty());
  answer.tool_calls_json = CallsOf("open_ticket", R"({"queue":"hr"})");
  const std::vector<CheckResult> good = RunChecks(task, answer, {});
  CHECK(good[0].passed);
  CHECK(good[0].failure_class.empty());
}

}  // namespace
}  // namespace stagegate::quality

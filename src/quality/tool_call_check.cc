#include "quality/tool_call_check.h"

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/pattern.h"
#include "base/strings.h"
#include "manifest/tool_schema.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

// Shown values are cut here, so a huge argument never fills a report line.
constexpr size_t kShownBytes = 60;
constexpr size_t kShownNames = 5;

struct Call {
  std::string name;
  std::optional<json> arguments;  // nullopt: not valid JSON
  std::string raw;                // the arguments as sent, for a message
};

// A value for a message: strings quoted and shortened, containers by their kind alone (never
// dumped: they may be large or deep).
std::string Shown(const json& value) {
  if (value.is_string()) return "\"" + ShownText(value.get<std::string>(), kShownBytes) + "\"";
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list of " + std::to_string(value.size());
  return value.dump();
}

std::string Article(const std::string& type) {
  return (type == "integer" || type == "array" || type == "object" ? "an " : "a ") + type;
}

std::string Quoted(const std::string& name) {
  return "'" + ShownText(name, kShownBytes) + "'";
}

Call ReadCall(const json& entry) {
  Call call;
  const json* source = &entry;
  // The record keeps calls flat; a call nested as the wire's {function: {...}} reads the same.
  if (entry.is_object() && !entry.contains("name") && entry.contains("function") &&
      entry["function"].is_object())
    source = &entry["function"];
  if (!source->is_object()) return call;
  if (source->contains("name") && (*source)["name"].is_string())
    call.name = (*source)["name"].get<std::string>();
  const json arguments = source->contains("arguments") ? (*source)["arguments"] : json();
  if (arguments.is_null()) {
    call.arguments = json::object();
  } else if (arguments.is_string()) {
    call.raw = arguments.get<std::string>();
    if (Trim(call.raw).empty()) {
      call.arguments = json::object();
    } else {
      json parsed = json::parse(call.raw, nullptr, false);
      if (!parsed.is_discarded()) call.arguments = std::move(parsed);
    }
  } else {
    call.arguments = arguments;
  }
  return call;
}

// The record's calls; nullopt when they are not a JSON list.
std::optional<std::vector<Call>> ReadCalls(const std::string& tool_calls_json) {
  if (Trim(tool_calls_json).empty()) return std::vector<Call>{};
  const json calls = json::parse(tool_calls_json, nullptr, false);
  if (!calls.is_array()) return std::nullopt;
  std::vector<Call> out;
  for (const json& entry : calls)
    out.push_back(ReadCall(entry));
  return out;
}

std::string Names(const std::vector<Call>& calls) {
  std::vector<std::string> names;
  for (const Call& call : calls) {
    if (names.size() == kShownNames) {
      names.push_back("...");
      break;
    }
    names.push_back(call.name.empty() ? "(a call without a name)" : ShownText(call.name, 40));
  }
  return Join(names, ", ");
}

bool IsPattern(const json& expected) {
  return expected.is_string() &&
         expected.get<std::string>().starts_with(manifest::kArgumentPatternPrefix);
}

std::string PatternOf(const json& expected) {
  return expected.get<std::string>().substr(manifest::kArgumentPatternPrefix.size());
}

// Whether `actual` is what `expected` asks for (see JudgeToolCall). The recursion follows
// `expected`, which the manifest bounds.
bool ValueMatches(const json& expected, const json& actual) {
  if (IsPattern(expected)) {
    if (!actual.is_string()) return false;
    // The loader checked every pattern; one that does not compile matches nothing.
    Result<Pattern> pattern = Pattern::Shared(PatternOf(expected));
    return pattern.ok() && pattern->Matches(actual.get<std::string>());
  }
  if (expected.is_object()) {
    if (!actual.is_object()) return false;
    for (const auto& [key, value] : expected.items())
      if (!actual.contains(key) || !ValueMatches(value, actual[key])) return false;
    return true;
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!ValueMatches(expected[i], actual[i])) return false;
    return true;
  }
  return expected == actual;  // numbers compare by value: 2026 == 2026.0
}

// The expected value's type for a type comparison without a schema: integer and number alike.
std::string LooseType(const json& value) {
  const std::string type = manifest::JsonTypeName(value);
  return type == "integer" ? "number" : type;
}

// One expected argument against a parsed arguments object: kNone when it holds.
ToolCallVerdict JudgeArgument(const manifest::Check& check, const std::string& name,
                              const json& expected, const json& arguments) {
  const std::string argument = "argument " + Quoted(name);
  if (!arguments.contains(name))
    return {ToolCallFailure::kMissingArgument, argument + " is missing"};
  const json& actual = arguments[name];
  const json schema_type = manifest::ArgumentSchemaType(check.parameters, name);
  if (!schema_type.is_null()) {
    if (!manifest::OfSchemaType(actual, schema_type))
      return {ToolCallFailure::kArgumentType,
              argument + " is " + Article(manifest::JsonTypeName(actual)) + " (" + Shown(actual) +
                  "), the tool's schema says " + manifest::SchemaTypeText(schema_type)};
  } else if (const std::string want = IsPattern(expected) ? "string" : LooseType(expected);
             LooseType(actual) != want) {
    return {ToolCallFailure::kArgumentType, argument + " is " +
                                                Article(manifest::JsonTypeName(actual)) + " (" +
                                                Shown(actual) + "), expected " + Article(want)};
  }
  if (ValueMatches(expected, actual)) return {};
  if (IsPattern(expected))
    return {ToolCallFailure::kArgumentValue, argument + " is " + Shown(actual) +
                                                 ", which does not match /" +
                                                 ShownText(PatternOf(expected), kShownBytes) + "/"};
  return {ToolCallFailure::kArgumentValue,
          argument + " is " + Shown(actual) + ", expected " + Shown(expected)};
}

// A call of the tool against every expected argument: the gravest class, every problem named.
ToolCallVerdict JudgeCall(const manifest::Check& check, const Call& call) {
  const std::string tool = ShownText(call.name, 40);
  if (!call.arguments)
    return {ToolCallFailure::kUnparsed,
            "the arguments of " + tool + " are not valid JSON: " + Shown(json(call.raw))};
  if (!call.arguments->is_object())
    return {ToolCallFailure::kUnparsed, "the arguments of " + tool + " are " +
                                            Article(manifest::JsonTypeName(*call.arguments)) +
                                            ", not a JSON object"};
  ToolCallVerdict verdict;
  std::vector<std::string> problems;
  for (const auto& [name, expected] : check.arguments.items()) {
    ToolCallVerdict one = JudgeArgument(check, name, expected, *call.arguments);
    if (one.passed()) continue;
    problems.push_back(one.detail);
    // The enum's order is the rank: missing, then type, then value.
    if (verdict.passed() || one.failure < verdict.failure) verdict.failure = one.failure;
  }
  if (!verdict.passed()) verdict.detail = tool + ": " + Join(problems, "; ");
  return verdict;
}

const ToolCallVerdict kUnparsedCalls{ToolCallFailure::kUnparsed,
                                     "the record's tool calls are not a JSON list"};

}  // namespace

std::string_view Name(ToolCallFailure failure) {
  switch (failure) {
    case ToolCallFailure::kNone:
      return "";
    case ToolCallFailure::kNotCalled:
      return "not_called";
    case ToolCallFailure::kWrongTool:
      return "wrong_tool";
    case ToolCallFailure::kMissingArgument:
      return "missing_argument";
    case ToolCallFailure::kArgumentType:
      return "argument_type";
    case ToolCallFailure::kArgumentValue:
      return "argument_value";
    case ToolCallFailure::kShouldNotHaveCalled:
      return "should_not_have_called";
    case ToolCallFailure::kUnparsed:
      return "unparsed";
  }
  return "";
}

ToolCallVerdict JudgeToolCall(const manifest::Check& check, const std::string& tool_calls_json) {
  const std::optional<std::vector<Call>> calls = ReadCalls(tool_calls_json);
  if (!calls) return kUnparsedCalls;
  const std::string tool = ShownText(check.text, 40);
  if (calls->empty())
    return {ToolCallFailure::kNotCalled, "no tool was called (expected " + tool + ")"};
  std::optional<ToolCallVerdict> first;
  for (const Call& call : *calls) {
    if (call.name != check.text) continue;
    ToolCallVerdict verdict = JudgeCall(check, call);
    if (verdict.passed()) return verdict;
    if (!first) first = std::move(verdict);
  }
  if (first) return *first;
  return {ToolCallFailure::kWrongTool, "no call of " + tool + " (called: " + Names(*calls) + ")"};
}

ToolCallVerdict JudgeNoToolCall(const std::string& tool_calls_json) {
  const std::optional<std::vector<Call>> calls = ReadCalls(tool_calls_json);
  if (!calls) return kUnparsedCalls;
  if (calls->empty()) return {};
  return {ToolCallFailure::kShouldNotHaveCalled,
          "a tool was called where none should be (called: " + Names(*calls) + ")"};
}

}  // namespace stagegate::quality

#pragma once

#include <string>
#include <string_view>

#include "manifest/corpus.h"

namespace stagegate::quality {

/// Why a tool_call or no_tool_call check failed; each failure is of exactly one class.
enum class ToolCallFailure {
  kNone,                 // the check passed
  kNotCalled,            // tool_call: no tool was called at all
  kWrongTool,            // tool_call: tools were called, none of the name expected
  kMissingArgument,      // tool_call: the call lacks an argument expected
  kArgumentType,         // tool_call: an argument is of another JSON type
  kArgumentValue,        // tool_call: an argument is of the right type with another value
  kShouldNotHaveCalled,  // no_tool_call: a tool was called
  kUnparsed,             // the call's arguments (or the record's calls) are not a JSON object
};

/// "not_called", "wrong_tool", "missing_argument", "argument_type", "argument_value",
/// "should_not_have_called", "unparsed"; "" for kNone.
std::string_view Name(ToolCallFailure failure);

struct ToolCallVerdict {
  ToolCallFailure failure = ToolCallFailure::kNone;
  std::string detail;  // in plain words, naming the argument; values shortened; "" when passed
  bool passed() const { return failure == ToolCallFailure::kNone; }
};

/// Judges `check` (tool_call) against a record's calls, `tool_calls_json`: a JSON list of
/// {name, arguments}, arguments a JSON text as the OpenAI wire format sends it (an object is taken
/// as it is; "" or no arguments is {}). The check passes when some call of its tool has every
/// argument expected: the same JSON value (numbers by value; objects as subsets, recursively;
/// lists element by element), or for a "regex:PATTERN" string a string the pattern matches
/// (stagegate::Pattern: RE2, case-insensitive, anywhere). An argument's type is judged by the
/// tool's schema (`check.parameters`) when it gives one, else by the expected value's type
/// (integer and number alike). When every call of the tool fails, the first one's failure is
/// kept; within a call, a missing argument outranks a type, and a type outranks a value.
ToolCallVerdict JudgeToolCall(const manifest::Check& check, const std::string& tool_calls_json);

/// Judges no_tool_call: passes when the record's calls are an empty list (or "").
ToolCallVerdict JudgeNoToolCall(const std::string& tool_calls_json);

}  // namespace stagegate::quality

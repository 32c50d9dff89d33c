#pragma once

#include <string>
#include <vector>

#include "load/request_record.h"
#include "manifest/corpus.h"

namespace stagegate::quality {

/// The result of one of a task's automated checks on one answer. Automated checks are reported
/// apart from reviewers' scores and never mixed into them.
struct CheckResult {
  std::string kind;    // contains, not_contains, regex, tool_called, refusal, json_keys,
                       // tool_call, no_tool_call
  std::string target;  // what it looks for: the text, pattern, tool or keys
  bool passed = false;
  std::string detail;  // why it failed, in plain words; "" when it passed
  /// tool_call and no_tool_call: the failure's class (quality/tool_call_check.h Name()); "" when
  /// it passed, and for every other kind.
  std::string failure_class;
};

/// Runs every check of `task` on an answer:
/// - contains / not_contains: the text, case-insensitively (ASCII), in the answer;
/// - regex: the pattern (ECMAScript, case-insensitive) anywhere in the answer;
/// - tool_called: a tool call of that name in the record's tool calls;
/// - refusal: a denial status (401/403) or an answer matching any of `refusal_patterns` (for
///   `refusal: false`, neither);
/// - json_keys: the answer is a JSON object with every key;
/// - tool_call / no_tool_call: JudgeToolCall / JudgeNoToolCall (quality/tool_call_check.h).
std::vector<CheckResult> RunChecks(const manifest::Task& task, const load::RequestRecord& answer,
                                   const std::vector<std::string>& refusal_patterns);

}  // namespace stagegate::quality

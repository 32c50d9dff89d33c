#include "quality/checks.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "base/pattern.h"
#include "base/strings.h"
#include "quality/tool_call_check.h"

namespace stagegate::quality {
namespace {

// The loader checked every pattern; one that does not compile (a store from an older version)
// matches nothing.
bool Matches(const std::string& pattern, const std::string& text) {
  Result<Pattern> compiled = Pattern::Shared(pattern);
  return compiled.ok() && compiled->Matches(text);
}

std::vector<std::string> ToolNames(const std::string& tool_calls_json) {
  std::vector<std::string> names;
  const nlohmann::json calls = nlohmann::json::parse(tool_calls_json, nullptr, false);
  if (!calls.is_array()) return names;
  for (const nlohmann::json& call : calls)
    if (call.is_object() && call.contains("name") && call["name"].is_string())
      names.push_back(call["name"].get<std::string>());
  return names;
}

}  // namespace

std::vector<CheckResult> RunChecks(const manifest::Task& task, const load::RequestRecord& answer,
                                   const std::vector<std::string>& refusal_patterns) {
  std::vector<CheckResult> results;
  const std::string lower = AsciiLower(answer.answer_text);
  for (const manifest::Check& check : task.checks) {
    CheckResult r{.kind = std::string(manifest::NameOf(check.kind, manifest::kCheckKindNames)),
                  .target = check.text};
    switch (check.kind) {
      case manifest::CheckKind::kContains:
        r.passed = lower.find(AsciiLower(check.text)) != std::string::npos;
        if (!r.passed) r.detail = "the answer does not contain \"" + check.text + "\"";
        break;
      case manifest::CheckKind::kNotContains:
        r.passed = lower.find(AsciiLower(check.text)) == std::string::npos;
        if (!r.passed) r.detail = "the answer contains \"" + check.text + "\"";
        break;
      case manifest::CheckKind::kRegex:
        r.passed = Matches(check.text, answer.answer_text);
        if (!r.passed) r.detail = "nothing in the answer matches /" + check.text + "/";
        break;
      case manifest::CheckKind::kToolCalled: {
        const std::vector<std::string> names = ToolNames(answer.tool_calls_json);
        r.passed = std::find(names.begin(), names.end(), check.text) != names.end();
        if (!r.passed)
          r.detail =
              "no call of " + check.text +
              (names.empty() ? " (no tool was called)" : " (called: " + Join(names, ", ") + ")");
        break;
      }
      case manifest::CheckKind::kRefusal: {
        r.target = check.expect_refusal ? "a refusal" : "no refusal";
        const bool denied =
            answer.http_status && (*answer.http_status == 401 || *answer.http_status == 403);
        const bool refused = denied || std::any_of(refusal_patterns.begin(), refusal_patterns.end(),
                                                   [&](const std::string& p) {
                                                     return Matches(p, answer.answer_text);
                                                   });
        r.passed = refused == check.expect_refusal;
        if (!r.passed)
          r.detail =
              check.expect_refusal ? "the answer is not a refusal" : "the answer is a refusal";
        break;
      }
      case manifest::CheckKind::kJsonKeys: {
        r.target = Join(check.keys, ", ");
        const nlohmann::json parsed = nlohmann::json::parse(answer.answer_text, nullptr, false);
        std::vector<std::string> missing;
        for (const std::string& key : check.keys)
          if (!parsed.is_object() || !parsed.contains(key)) missing.push_back(key);
        r.passed = parsed.is_object() && missing.empty();
        if (!parsed.is_object())
          r.detail = "the answer is not a JSON object";
        else if (!missing.empty())
          r.detail = "the answer's JSON lacks " + Join(missing, ", ");
        break;
      }
      case manifest::CheckKind::kToolCall:
      case manifest::CheckKind::kNoToolCall: {
        const bool call = check.kind == manifest::CheckKind::kToolCall;
        if (!call) r.target = "no tool call";
        ToolCallVerdict verdict = call ? JudgeToolCall(check, answer.tool_calls_json)
                                       : JudgeNoToolCall(answer.tool_calls_json);
        r.passed = verdict.passed();
        r.detail = std::move(verdict.detail);
        r.failure_class = std::string(Name(verdict.failure));
        break;
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace stagegate::quality

#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/capability.h"
#include "manifest/diagnostics.h"
#include "manifest/scenario.h"

namespace stagegate::manifest {

struct Persona {
  std::string name;
  SourcePos pos;
  std::string description;
  std::string token_env;  // the variable's name; the token itself is never stored
  std::vector<std::string> groups;
};

struct ChatMessage {
  std::string role;
  std::string content;
};

enum class CheckKind {
  kContains,
  kNotContains,
  kRegex,
  kToolCalled,
  kRefusal,
  kJsonKeys,
  kToolCall,
  kNoToolCall
};

inline constexpr EnumName<CheckKind> kCheckKindNames[] = {
    {CheckKind::kContains, "contains"},  {CheckKind::kNotContains, "not_contains"},
    {CheckKind::kRegex, "regex"},        {CheckKind::kToolCalled, "tool_called"},
    {CheckKind::kRefusal, "refusal"},    {CheckKind::kJsonKeys, "json_keys"},
    {CheckKind::kToolCall, "tool_call"}, {CheckKind::kNoToolCall, "no_tool_call"},
};

/// The prefix of an expected tool-call argument string that makes the rest a pattern.
inline constexpr std::string_view kArgumentPatternPrefix = "regex:";

/// An automated check on an answer; reported apart from reviewers' scores.
struct Check {
  CheckKind kind = CheckKind::kContains;
  SourcePos pos;
  std::string text;               // contains, not_contains, regex, tool_called; tool_call's tool
  bool expect_refusal = true;     // refusal
  std::vector<std::string> keys;  // json_keys
  /// tool_call: the arguments the call must have (an object; other arguments may be present).
  /// A string value "regex:PATTERN" is a pattern the argument must match.
  nlohmann::json arguments = nlohmann::json::object();
  /// tool_call: the tool's `parameters` JSON Schema from tools.yaml, set when the corpus is read
  /// (null when the tool is not defined), so that an argument's type can be judged by it.
  nlohmann::json parameters;
};

struct Task {
  std::string id;
  SourcePos pos;
  std::string prompt;  // exactly one of prompt and messages is set
  std::vector<ChatMessage> messages;
  /// The question a single-message request carries: the prompt, or the last message.
  const std::string& Question() const {
    return messages.empty() ? prompt : messages.back().content;
  }
  /// The user's later turns: under load the task is a multi-turn session, each follow-up sent
  /// after the model's actual answer to the turn before.
  std::vector<std::string> follow_ups;
  Ref persona;
  std::string category;
  std::vector<std::string> tags;  // free labels: threshold scopes select tasks by them
  std::vector<Capability> needs;
  std::string reference;
  std::vector<Check> checks;
  std::optional<Ref> rubric;
  std::string approved_by;
  std::string source;
  bool example = false;  // written by `stagegate init`, not yet one of the team's own
  /// Must pass its automated checks, and its reviewers' pass rule where scored, in every run
  /// (quality/task_rules.h); otherwise the quality condition fails, naming the task.
  bool required = false;
};

struct Document {
  std::string id;
  SourcePos pos;
  std::string title;
  std::vector<std::string> access;  // empty: every persona may read it
  std::string canary;               // set when access is
  std::string body;
};

/// An OpenAI function definition; `parameters` is a JSON Schema, passed through as written.
struct ToolDefinition {
  std::string name;
  SourcePos pos;
  std::string description;
  nlohmann::json parameters;
};

struct Corpus {
  std::string dir;
  std::string name;
  std::string version;
  std::string owner;
  std::string description;
  std::vector<Persona> personas;
  std::vector<ToolDefinition> tools;
  std::vector<Task> tasks;
  std::vector<Document> documents;

  const Task* FindTask(const std::string& id) const;
  const Persona* FindPersona(const std::string& name) const;
  std::vector<std::string> TaskIds() const;
  std::vector<std::string> PersonaNames() const;
};

/// The tasks of `corpus` meant to be refused (a `refusal` check expecting one).
std::set<std::string> RefusalTasks(const Corpus& corpus);

/// Loads the corpus in `dir` (corpus.yaml, personas.yaml, tools.yaml, tasks/*.yaml, docs/*.md) and
/// checks it on its own: unique ids, personas defined, canaries present and unique. Every problem
/// goes to `diagnostics`; the result is nullopt when there was any.
std::optional<Corpus> LoadCorpus(const std::string& dir, Diagnostics& diagnostics);

/// As LoadCorpus, but returns what could be read even when there were problems, so that checks
/// against the scenario can still run in the same pass.
Corpus ReadCorpus(const std::string& dir, Diagnostics& diagnostics);

}  // namespace stagegate::manifest

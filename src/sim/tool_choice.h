#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stagegate::sim {

/// A function call as a model emits it: the tool's name and its arguments object.
struct ToolCall {
  std::string name;
  nlohmann::json arguments;
};

/// The tool call a model would make for `question`, given the tool names offered; nullopt when no
/// offered tool fits. Pure and deterministic; rules are tried in this order, case-insensitively,
/// and a rule whose tool is not offered is skipped:
/// - open_ticket, when asked to open a *new* ticket (even if an INC number is mentioned);
/// - lookup_ticket{ticket_id}, for an INC number (any case, returned upper-cased) with a word such
///   as status, update, look, check, news, happening or ticket;
/// - open_ticket{summary, queue, priority}, when asked to open / raise / log / report / create a
///   ticket or request ("please log it", "raise it with HR"), when a fault is described with
///   "ticket", or for a lost or stolen device (priority high). The summary is the question on one
///   line without the request sentence, or the quoted text after a colon, at most 120 bytes,
///   never splitting a UTF-8 sequence. Queue hr or facilities by their words, else it; priority
///   high for urgency or a whole team blocked, low for a request, else normal;
/// - leave_balance{} (with year when a year 20xx appears), for the asker's own leave balance;
/// - list_devices{}, for the asker's own devices.
/// `question` is UTF-8, as read from a request body.
std::optional<ToolCall> ChooseTool(std::string_view question,
                                   const std::vector<std::string>& offered);

/// A request's `tool_choice`, with OpenAI's and vLLM's meaning.
struct ToolChoice {
  enum class Mode {
    kAuto,      // the model decides (ChooseTool); also when tool_choice is absent or null
    kNone,      // the model calls no tool
    kRequired,  // the model calls one of the offered tools
    kFunction,  // the model calls `function`
  };
  Mode mode = Mode::kAuto;
  std::string function;  // kFunction only

  /// Whether the model must call a tool, whatever the question.
  bool forces_call() const { return mode == Mode::kRequired || mode == Mode::kFunction; }
};

/// Reads `tool_choice` from a request: "auto", "none", "required", or
/// {"type": "function", "function": {"name": NAME}}; null (the request has none) is auto.
/// Fails with InvalidInput, its message fit for a 400 body, for any other value, for a NAME that is
/// not in `offered`, and for "required" with no tool offered.
Result<ToolChoice> ParseToolChoice(const nlohmann::json& value,
                                   const std::vector<std::string>& offered);

/// The tool call a model makes for `question` under `choice`, or nullopt for none:
/// - auto: ChooseTool's call;
/// - none: no call;
/// - required: ChooseTool's call; when it has none, lookup_ticket if offered and the question names
///   a ticket ("INC-" and digits, however many), else the first offered tool;
/// - function: ChooseTool's call when offered only that tool; when it has none, a call to it.
/// A forced call's arguments are what the question gives: lookup_ticket{ticket_id} with the ticket
/// the question names, upper-cased, or "" (the tool service refuses a malformed id, as it would a
/// model's guess); open_ticket{summary, queue, priority} as ChooseTool builds them; leave_balance{}
/// with year when a year 20xx appears; {} for list_devices and any tool the sim does not know.
std::optional<ToolCall> CallTool(std::string_view question, const std::vector<std::string>& offered,
                                 const ToolChoice& choice);

}  // namespace stagegate::sim

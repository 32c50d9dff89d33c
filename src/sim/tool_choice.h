#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace stagegate::sim

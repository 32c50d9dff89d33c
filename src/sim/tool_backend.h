#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace stagegate::sim {

/// What a tool call came to: HTTP-like status and the JSON body the tool service sends.
struct ToolResult {
  int status = 200;     // 200, 400 (bad arguments), 401 (no persona), 404 (unknown tool or ticket)
  nlohmann::json body;  // {"result": {...}} on 200, {"error": "..."} otherwise
};

/// The logic of the downstream tool service: the four tools of corpus/service-desk/tools.yaml over
/// an in-memory ticket store. Deterministic: the same calls in the same order give the same
/// results. Not thread-safe; the tool service's event loop thread owns it.
class ToolBackend {
 public:
  /// Seeded with the tickets the demo corpus refers to: INC-204518, INC-207731, INC-198877 and
  /// INC-203390, each with status, queue, priority, team, update, opened and summary that fit the
  /// prompts in tasks/actions.yaml.
  ToolBackend();

  /// Runs `name` with `arguments` for `persona` (the authenticated persona's name, "" when
  /// unknown). Never throws, whatever the JSON shape of `arguments`:
  /// - an object is used as is; null counts as no arguments; a string is parsed as JSON first
  ///   (the OpenAI wire form); anything else is a 400;
  /// - missing or invalid arguments are a 400 whose message names the argument; arguments the
  ///   tool does not define are ignored;
  /// - leave_balance and list_devices need a persona: 401 without one, before the arguments are
  ///   looked at;
  /// - an unknown tool or ticket is a 404.
  ///
  /// open_ticket numbers tickets from INC-210001 up. The store keeps the 10,000 most recently
  /// opened tickets (and the seeded ones), so that a long load test cannot grow it without end; an
  /// evicted ticket is a 404. After INC-999999 numbering starts again at INC-210001.
  ToolResult Call(std::string_view name, const nlohmann::json& arguments, std::string_view persona);

 private:
  struct Ticket {
    std::string queue;
    std::string priority;
    std::string status;
    std::string team;
    std::string update;
    std::string opened;  // YYYY-MM-DD
    std::string summary;
  };

  ToolResult OpenTicket(const nlohmann::json& arguments);
  ToolResult LookupTicket(const nlohmann::json& arguments) const;

  std::map<std::string, Ticket, std::less<>> tickets_;  // by id, e.g. "INC-204518"
  std::deque<std::string> opened_ids_;                  // tickets opened here, oldest first
  int next_number_ = 210001;
};

}  // namespace stagegate::sim

#include "sim/tool_backend.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "base/strings.h"

namespace stagegate::sim {
namespace {

using nlohmann::json;

// The sim's world is the demo corpus's: late 2026. Fixed, so that results are deterministic.
constexpr int kCurrentYear = 2026;
constexpr const char* kToday = "2026-11-30";
constexpr int kFirstTicketNumber = 210001;
constexpr int kLastTicketNumber = 999999;
constexpr size_t kMaxOpenedTickets = 10000;
constexpr size_t kMaxSummaryLength = 2000;

const std::vector<std::string> kToolNames = {"open_ticket", "lookup_ticket", "leave_balance",
                                             "list_devices"};

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

ToolResult Ok(json result) {
  return {200, {{"result", std::move(result)}}};
}
ToolResult Error(int status, std::string message) {
  return {status, {{"error", message}}};
}

// A name fit to quote in an error message: printable ASCII, at most 64 characters, so that the
// body stays valid UTF-8 whatever bytes the caller sent.
std::string Printable(std::string_view text) {
  std::string printable;
  for (char c : text.substr(0, 64))
    printable += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 64) printable += "...";
  return printable;
}

// The arguments as an object; nullopt (with `error` set) when they cannot be one.
std::optional<json> ArgumentsObject(const json& arguments, ToolResult& error) {
  if (arguments.is_null()) return json::object();
  if (arguments.is_object()) return arguments;
  if (arguments.is_string()) {
    json parsed = json::parse(arguments.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) return parsed;
    if (parsed.is_discarded()) {
      error = Error(400, "arguments are not valid JSON");
      return std::nullopt;
    }
  }
  error = Error(400, "arguments must be a JSON object");
  return std::nullopt;
}

// The argument `key`, or nullptr when it is absent or null (models send null for "not given").
const json* Find(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool IsOneOf(const json& value, std::initializer_list<const char*> allowed) {
  if (!value.is_string()) return false;
  for (const char* option : allowed) {
    if (value.get_ref<const std::string&>() == option) return true;
  }
  return false;
}

// "INC-" and six digits in any case, upper-cased; "" when `text` is not a ticket number.
std::string NormalizeTicketId(const std::string& text) {
  if (text.size() != 10 || text[3] != '-') return "";
  std::string id = text;
  for (size_t i = 0; i < 3; ++i)
    id[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(id[i])));
  if (id.compare(0, 4, "INC-") != 0) return "";
  for (size_t i = 4; i < 10; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(id[i]))) return "";
  }
  return id;
}

std::string TicketId(int number) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "INC-%06d", number);
  return buffer;
}

std::string TeamFor(const std::string& queue) {
  if (queue == "hr") return "HR Operations";
  if (queue == "facilities") return "Facilities";
  return "Service Desk";
}

// The leave year asked for, or nullopt (with `error` set) when `year` is not one.
std::optional<int> LeaveYear(const json& object, ToolResult& error) {
  const json* year = Find(object, "year");
  if (!year) return kCurrentYear;
  // JSON Schema's integer admits 2027.0 as well as 2027; doubles hold every candidate exactly.
  const double value = year->is_number() ? year->get<double>() : 0;
  if (value == std::trunc(value) && value >= 2024 && value <= 2030) return static_cast<int>(value);
  error = Error(400, "year must be an integer from 2024 to 2030");
  return std::nullopt;
}

json LeaveBalance(std::string_view persona, int year) {
  const uint64_t hash = Fnv1a(persona);
  const int entitlement = 25 + static_cast<int>(hash % 4);  // 25 days plus long service
  int carried_over = 0, taken = 0, booked = 0;
  if (year < kCurrentYear) {
    taken = entitlement;  // past years are used up
  } else if (year == kCurrentYear) {
    carried_over = static_cast<int>((hash >> 8) % 6);  // up to 5 days carry over (HR-POL-004)
    taken = 8 + static_cast<int>((hash >> 16) % 12);
    booked = static_cast<int>((hash >> 24) % 5);
  } else {
    booked = static_cast<int>((hash >> 24) % 5);
  }
  return {{"year", year},
          {"entitlement", entitlement},
          {"carried_over", carried_over},
          {"taken", taken},
          {"booked", booked},
          {"remaining", entitlement + carried_over - taken - booked}};
}

json Device(const char* name, const char* asset, const char* type, const char* issued) {
  return {{"name", name}, {"asset", asset}, {"type", type}, {"issued", issued}};
}

// The demo personas' devices fit the corpus prompts (the IT admin still has the old Latitude from
// a swap); anyone else gets a list derived from their name.
json Devices(std::string_view persona) {
  if (persona == "employee")
    return {Device("Dell Latitude 7440", "NWF-LT-0412", "laptop", "2023-03-14"),
            Device("Apple iPhone 13", "NWF-PH-0877", "phone", "2022-09-05")};
  if (persona == "hr-partner")
    return {Device("Dell Latitude 7440", "NWF-LT-0388", "laptop", "2023-01-23"),
            Device("Apple iPhone 14", "NWF-PH-0921", "phone", "2023-06-12"),
            Device("Dell P2422H", "NWF-MN-0145", "monitor", "2023-01-23")};
  if (persona == "contractor")
    return {Device("Dell Precision 5680", "NWF-LT-0533", "laptop", "2026-04-06"),
            Device("Dell U2723QE", "NWF-MN-0210", "monitor", "2026-04-06")};
  if (persona == "it-admin")
    return {Device("Dell Latitude 7440", "NWF-LT-0561", "laptop", "2026-09-21"),
            Device("Dell Latitude 7420", "NWF-LT-0297", "laptop", "2022-02-07"),
            Device("Apple iPhone 15", "NWF-PH-1032", "phone", "2026-09-21")};
  if (persona == "line-manager")
    return {Device("Dell Precision 3581", "NWF-LT-0349", "laptop", "2022-11-28"),
            Device("Apple iPhone 13", "NWF-PH-0764", "phone", "2022-11-28")};

  const uint64_t hash = Fnv1a(persona);
  const char* laptops[] = {"Dell Latitude 7440", "Dell Latitude 5540", "Dell Precision 5680"};
  const char* phones[] = {"Apple iPhone 14", "Samsung Galaxy S23"};
  char issued[16], laptop[16], phone[16], monitor[16];
  std::snprintf(issued, sizeof issued, "%04d-%02d-%02d", 2022 + static_cast<int>(hash % 5),
                1 + static_cast<int>((hash >> 4) % 12), 1 + static_cast<int>((hash >> 8) % 28));
  std::snprintf(laptop, sizeof laptop, "NWF-LT-0%03d", static_cast<int>((hash >> 16) % 1000));
  std::snprintf(phone, sizeof phone, "NWF-PH-0%03d", static_cast<int>((hash >> 26) % 1000));
  std::snprintf(monitor, sizeof monitor, "NWF-MN-0%03d", static_cast<int>((hash >> 36) % 1000));
  json devices = {Device(laptops[(hash >> 46) % 3], laptop, "laptop", issued),
                  Device(phones[(hash >> 50) % 2], phone, "phone", issued)};
  if ((hash >> 52) % 2 == 1) devices.push_back(Device("Dell P2723D", monitor, "monitor", issued));
  return devices;
}

}  // namespace

ToolBackend::ToolBackend() {
  tickets_["INC-204518"] = {
      .queue = "it",
      .priority = "normal",
      .status = "in progress",
      .team = "Messaging and Collaboration",
      .update =
          "Mailbox permissions re-applied; they take effect overnight. Restart Outlook in the "
          "morning and reply to this ticket if the Finance AP shared mailbox is still missing.",
      .opened = "2026-11-24",
      .summary = "Finance AP shared mailbox no longer shows in Outlook on a Leeds laptop"};
  tickets_["INC-207731"] = {
      .queue = "it",
      .priority = "normal",
      .status = "resolved",
      .team = "Engineering Applications",
      .update =
          "Licence server restarted and the CAD pool raised from 20 to 25 seats. Resolved on "
          "2026-11-26; reply to the resolution e-mail within 10 working days to reopen.",
      .opened = "2026-11-20",
      .summary = "CAD licence will not check out from the Rotterdam licence server"};
  tickets_["INC-198877"] = {
      .queue = "it",
      .priority = "normal",
      .status = "in progress",
      .team = "End-User Computing",
      .update =
          "Dell Latitude 7440 built and imaged; waiting for the account to be created, then "
          "ready for collection at the Leeds IT bar before the start date.",
      .opened = "2026-11-09",
      .summary = "New starter laptop for the Leeds mechanical engineering team, starting Monday"};
  tickets_["INC-203390"] = {
      .queue = "it",
      .priority = "high",
      .status = "on hold",
      .team = "IT Operations - Network",
      .update =
          "Replacement optic ordered for the Rotterdam core switch uplink; on hold until it is "
          "delivered, expected 2 December.",
      .opened = "2026-11-17",
      .summary = "Intermittent packet loss on the Rotterdam core switch uplink"};
}

ToolResult ToolBackend::Call(std::string_view name, const json& arguments,
                             std::string_view persona) {
  if (name != "open_ticket" && name != "lookup_ticket" && name != "leave_balance" &&
      name != "list_devices") {
    return Error(404, "unknown tool '" + Printable(name) + "'" + DidYouMean(name, kToolNames));
  }
  const bool personal = name == "leave_balance" || name == "list_devices";
  if (personal && persona.empty())
    return Error(401, std::string(name) + " needs an authenticated persona");
  ToolResult error;
  const std::optional<json> object = ArgumentsObject(arguments, error);
  if (!object) return error;
  if (name == "open_ticket") return OpenTicket(*object);
  if (name == "lookup_ticket") return LookupTicket(*object);
  if (name == "list_devices") return Ok({{"devices", Devices(persona)}});
  const std::optional<int> year = LeaveYear(*object, error);
  if (!year) return error;
  return Ok(LeaveBalance(persona, *year));
}

ToolResult ToolBackend::OpenTicket(const json& arguments) {
  const json* summary = Find(arguments, "summary");
  if (!summary) return Error(400, "summary is required");
  if (!summary->is_string() || Trim(summary->get_ref<const std::string&>()).empty())
    return Error(400, "summary must be a non-empty string");
  if (summary->get_ref<const std::string&>().size() > kMaxSummaryLength)
    return Error(400, "summary must be at most 2000 characters");
  const json* queue = Find(arguments, "queue");
  if (!queue) return Error(400, "queue is required (it, hr or facilities)");
  if (!IsOneOf(*queue, {"it", "hr", "facilities"}))
    return Error(400, "queue must be one of it, hr, facilities");
  const json* priority = Find(arguments, "priority");
  if (priority && !IsOneOf(*priority, {"low", "normal", "high"}))
    return Error(400, "priority must be one of low, normal, high");

  const std::string id = TicketId(next_number_);
  next_number_ = next_number_ == kLastTicketNumber ? kFirstTicketNumber : next_number_ + 1;
  const std::string queue_name = queue->get<std::string>();
  Ticket ticket{.queue = queue_name,
                .priority = priority ? priority->get<std::string>() : "normal",
                .status = "open",
                .team = TeamFor(queue_name),
                .update = "New ticket; not yet picked up by " + TeamFor(queue_name) + ".",
                .opened = kToday,
                .summary = std::string(Trim(summary->get_ref<const std::string&>()))};
  json result = {{"ticket_id", id},
                 {"queue", ticket.queue},
                 {"priority", ticket.priority},
                 {"status", ticket.status},
                 {"summary", ticket.summary}};
  tickets_[id] = std::move(ticket);
  opened_ids_.push_back(id);
  if (opened_ids_.size() > kMaxOpenedTickets) {
    tickets_.erase(opened_ids_.front());
    opened_ids_.pop_front();
  }
  return Ok(std::move(result));
}

ToolResult ToolBackend::LookupTicket(const json& arguments) const {
  const json* ticket_id = Find(arguments, "ticket_id");
  if (!ticket_id) return Error(400, "ticket_id is required");
  const std::string id =
      ticket_id->is_string() ? NormalizeTicketId(ticket_id->get<std::string>()) : "";
  if (id.empty()) return Error(400, "ticket_id must look like INC-123456");
  auto it = tickets_.find(id);
  if (it == tickets_.end()) return Error(404, "no ticket " + id);
  const Ticket& ticket = it->second;
  return Ok({{"ticket_id", id},
             {"status", ticket.status},
             {"queue", ticket.queue},
             {"priority", ticket.priority},
             {"team", ticket.team},
             {"update", ticket.update},
             {"opened", ticket.opened},
             {"summary", ticket.summary}});
}

}  // namespace stagegate::sim

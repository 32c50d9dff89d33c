#include "sim/tool_backend.h"

#include <catch2/catch.hpp>

#include <regex>
#include <string>

namespace stagegate::sim {
namespace {

using nlohmann::json;

TEST_CASE("open_ticket opens numbered tickets that lookup_ticket then finds", "[sim]") {
  ToolBackend backend;
  ToolResult first = backend.Call(
      "open_ticket", {{"summary", "VPN drops every 10 minutes at home"}, {"queue", "it"}},
      "employee");
  CHECK(first.status == 200);
  CHECK(first.body == json::parse(R"({"result": {"ticket_id": "INC-210001", "queue": "it",
      "priority": "normal", "status": "open", "summary": "VPN drops every 10 minutes at home"}})"));

  ToolResult second = backend.Call("open_ticket",
                                   {{"summary", "  Heating off on the 1st floor  "},
                                    {"queue", "facilities"},
                                    {"priority", "high"}},
                                   "");
  CHECK(second.body == json::parse(R"({"result": {"ticket_id": "INC-210002",
      "queue": "facilities", "priority": "high", "status": "open",
      "summary": "Heating off on the 1st floor"}})"));

  ToolResult found = backend.Call("lookup_ticket", {{"ticket_id", "inc-210002"}}, "contractor");
  CHECK(found.status == 200);
  CHECK(found.body == json::parse(R"({"result": {"ticket_id": "INC-210002", "status": "open",
      "queue": "facilities", "priority": "high", "team": "Facilities",
      "update": "New ticket; not yet picked up by Facilities.", "opened": "2026-11-30",
      "summary": "Heating off on the 1st floor"}})"));

  // Each backend numbers on its own: the sequence is a function of the calls alone.
  CHECK(ToolBackend()
            .Call("open_ticket", {{"summary", "x"}, {"queue", "hr"}, {"priority", "low"}}, "")
            .body["result"]["ticket_id"] == "INC-210001");
}

TEST_CASE("lookup_ticket finds the tickets the demo corpus asks about, in any case", "[sim]") {
  ToolBackend backend;
  ToolResult reopen = backend.Call("lookup_ticket", {{"ticket_id", "inc-207731"}}, "contractor");
  CHECK(reopen.status == 200);
  CHECK(reopen.body == json::parse(R"({"result": {"ticket_id": "INC-207731", "status": "resolved",
      "queue": "it", "priority": "normal", "team": "Engineering Applications",
      "update": "Licence server restarted and the CAD pool raised from 20 to 25 seats. Resolved on 2026-11-26; reply to the resolution e-mail within 10 working days to reopen.",
      "opened": "2026-11-20",
      "summary": "CAD licence will not check out from the Rotterdam licence server"}})"));

  for (const char* id : {"INC-204518", "INC-198877", "INC-203390"}) {
    ToolResult result = backend.Call("lookup_ticket", {{"ticket_id", id}}, "employee");
    INFO(id);
    CHECK(result.status == 200);
    const json& ticket = result.body["result"];
    CHECK(ticket["ticket_id"] == id);
    for (const char* key : {"status", "queue", "priority", "team", "update", "opened", "summary"})
      CHECK_FALSE(ticket.value(key, "").empty());
  }
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-198877"}}, "")
            .body["result"]["summary"]
            .get<std::string>()
            .find("New starter laptop") != std::string::npos);
  CHECK(
      backend.Call("lookup_ticket", {{"ticket_id", "INC-203390"}}, "").body["result"]["priority"] ==
      "high");
}

TEST_CASE("lookup_ticket of a ticket that does not exist is a 404", "[sim]") {
  ToolBackend backend;
  ToolResult missing = backend.Call("lookup_ticket", {{"ticket_id", "inc-000001"}}, "employee");
  CHECK(missing.status == 404);
  CHECK(missing.body == json({{"error", "no ticket INC-000001"}}));
  // Not yet opened.
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-210001"}}, "").status == 404);
}

TEST_CASE("the ticket store keeps the 10,000 most recently opened tickets", "[sim]") {
  ToolBackend backend;
  for (int i = 0; i < 10001; ++i)
    (void)backend.Call("open_ticket", {{"summary", "load"}, {"queue", "it"}}, "");
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-210001"}}, "").status == 404);
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-210002"}}, "").status == 200);
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-220001"}}, "").status == 200);
  CHECK(backend.Call("lookup_ticket", {{"ticket_id", "INC-204518"}}, "").status == 200);
}

TEST_CASE("leave_balance is the persona's own, deterministic and per year", "[sim]") {
  ToolBackend backend;
  ToolResult current = backend.Call("leave_balance", json::object(), "employee");
  CHECK(current.status == 200);
  CHECK(current.body == json::parse(R"({"result": {"year": 2026, "entitlement": 26,
      "carried_over": 0, "taken": 9, "booked": 1, "remaining": 16}})"));
  CHECK(backend.Call("leave_balance", {{"year", 2027}}, "employee").body ==
        json::parse(R"({"result": {"year": 2027, "entitlement": 26, "carried_over": 0,
            "taken": 0, "booked": 1, "remaining": 25}})"));
  CHECK(backend.Call("leave_balance", {{"year", 2025.0}}, "employee").body["result"]["remaining"] ==
        0);
  // The same persona always gets the same figures; another persona other ones.
  CHECK(ToolBackend().Call("leave_balance", nullptr, "employee").body == current.body);
  CHECK(backend.Call("leave_balance", {{"year", nullptr}}, "employee").body == current.body);
  CHECK(backend.Call("leave_balance", {}, "contractor").body == json::parse(R"({"result": {
      "year": 2026, "entitlement": 27, "carried_over": 3, "taken": 10, "booked": 4,
      "remaining": 16}})"));
}

TEST_CASE("list_devices is the persona's own and deterministic", "[sim]") {
  ToolBackend backend;
  ToolResult employee = backend.Call("list_devices", {}, "employee");
  CHECK(employee.status == 200);
  CHECK(employee.body == json::parse(R"({"result": {"devices": [
      {"name": "Dell Latitude 7440", "asset": "NWF-LT-0412", "type": "laptop", "issued": "2023-03-14"},
      {"name": "Apple iPhone 13", "asset": "NWF-PH-0877", "type": "phone", "issued": "2022-09-05"}]}})"));
  // The IT admin's old Latitude is still listed after the swap (it-old-device-enrolled).
  json admin = backend.Call("list_devices", {}, "it-admin").body["result"]["devices"];
  REQUIRE(admin.size() == 3);
  CHECK(admin[1]["name"] == "Dell Latitude 7420");

  // A persona outside the demo corpus gets a list derived from its name.
  ToolResult visitor = backend.Call("list_devices", "{}", "visitor");
  CHECK(visitor.body == json::parse(R"({"result": {"devices": [
      {"name": "Dell Latitude 7440", "asset": "NWF-LT-0233", "type": "laptop", "issued": "2024-09-20"},
      {"name": "Samsung Galaxy S23", "asset": "NWF-PH-0986", "type": "phone", "issued": "2024-09-20"},
      {"name": "Dell P2723D", "asset": "NWF-MN-0552", "type": "monitor", "issued": "2024-09-20"}]}})"));
  CHECK(ToolBackend().Call("list_devices", {}, "visitor").body == visitor.body);

  const std::regex asset("NWF-(LT|PH|MN)-0[0-9]{3}");
  for (const char* persona :
       {"hr-partner", "contractor", "line-manager", "a", "b", "someone else"}) {
    INFO(persona);
    json devices = backend.Call("list_devices", {}, persona).body["result"]["devices"];
    CHECK(devices.size() >= 2);
    CHECK(devices.size() <= 3);
    for (const json& device : devices) {
      CHECK(std::regex_match(device["asset"].get<std::string>(), asset));
      CHECK(
          (device["type"] == "laptop" || device["type"] == "phone" || device["type"] == "monitor"));
    }
  }
}

TEST_CASE("personal tools need an authenticated persona", "[sim]") {
  ToolBackend backend;
  ToolResult leave = backend.Call("leave_balance", {{"year", 2026}}, "");
  CHECK(leave.status == 401);
  CHECK(leave.body == json({{"error", "leave_balance needs an authenticated persona"}}));
  // Authentication comes before the arguments are read.
  ToolResult devices = backend.Call("list_devices", 42, "");
  CHECK(devices.status == 401);
  CHECK(devices.body == json({{"error", "list_devices needs an authenticated persona"}}));
}

TEST_CASE("bad arguments are a 400 naming the argument", "[sim]") {
  struct Case {
    const char* tool;
    json arguments;
    std::string error;
  };
  const std::string long_summary(2001, 'x');
  const Case cases[] = {
      {"open_ticket", {{"queue", "it"}}, "summary is required"},
      {"open_ticket", {{"summary", nullptr}, {"queue", "it"}}, "summary is required"},
      {"open_ticket", {{"summary", 42}, {"queue", "it"}}, "summary must be a non-empty string"},
      {"open_ticket", {{"summary", " \n "}, {"queue", "it"}}, "summary must be a non-empty string"},
      {"open_ticket",
       {{"summary", long_summary}, {"queue", "it"}},
       "summary must be at most 2000 characters"},
      {"open_ticket", {{"summary", "x"}}, "queue is required (it, hr or facilities)"},
      {"open_ticket",
       {{"summary", "x"}, {"queue", "IT"}},
       "queue must be one of it, hr, facilities"},
      {"open_ticket",
       {{"summary", "x"}, {"queue", json::array()}},
       "queue must be one of it, hr, facilities"},
      {"open_ticket",
       {{"summary", "x"}, {"queue", "it"}, {"priority", "urgent"}},
       "priority must be one of low, normal, high"},
      {"lookup_ticket", json::object(), "ticket_id is required"},
      {"lookup_ticket", {{"ticket_id", 204518}}, "ticket_id must look like INC-123456"},
      {"lookup_ticket", {{"ticket_id", "INC-20451"}}, "ticket_id must look like INC-123456"},
      {"lookup_ticket", {{"ticket_id", "INC-20451x"}}, "ticket_id must look like INC-123456"},
      {"lookup_ticket", {{"ticket_id", "INX-204518"}}, "ticket_id must look like INC-123456"},
      {"leave_balance", {{"year", "2026"}}, "year must be an integer from 2024 to 2030"},
      {"leave_balance", {{"year", 2031}}, "year must be an integer from 2024 to 2030"},
      {"leave_balance", {{"year", -1}}, "year must be an integer from 2024 to 2030"},
      {"leave_balance", {{"year", 2026.5}}, "year must be an integer from 2024 to 2030"},
      {"leave_balance",
       {{"year", 18446744073709551615ull}},
       "year must be an integer from 2024 to 2030"},
      {"open_ticket", json::array({"summary", "queue"}), "arguments must be a JSON object"},
      {"lookup_ticket", 7, "arguments must be a JSON object"},
      {"lookup_ticket", "[\"INC-204518\"]", "arguments must be a JSON object"},
      {"lookup_ticket", "{\"ticket_id\": ", "arguments are not valid JSON"},
  };
  for (const Case& c : cases) {
    ToolBackend backend;
    INFO(c.tool << " " << c.arguments.dump());
    ToolResult result = backend.Call(c.tool, c.arguments, "employee");
    CHECK(result.status == 400);
    CHECK(result.body == json({{"error", c.error}}));
  }
}

TEST_CASE("arguments in the wire form, a JSON string, are parsed", "[sim]") {
  ToolBackend backend;
  ToolResult result = backend.Call("lookup_ticket", R"({"ticket_id": "INC-204518"})", "");
  CHECK(result.status == 200);
  CHECK(result.body["result"]["status"] == "in progress");
}

TEST_CASE("an unknown tool is a 404", "[sim]") {
  ToolBackend backend;
  ToolResult typo = backend.Call("lookup_tiket", json::object(), "employee");
  CHECK(typo.status == 404);
  CHECK(typo.body ==
        json({{"error", "unknown tool 'lookup_tiket' (did you mean 'lookup_ticket'?)"}}));
  ToolResult odd = backend.Call("\xff\x01tool", json::object(), "employee");
  CHECK(odd.status == 404);
  CHECK(odd.body == json({{"error", "unknown tool '??tool'"}}));
  CHECK_NOTHROW(odd.body.dump());
  CHECK(backend.Call("", nullptr, "").status == 404);
}

TEST_CASE("no JSON shape of arguments makes a tool throw", "[sim]") {
  const json shapes[] = {nullptr,
                         true,
                         -3,
                         2.5,
                         "",
                         "null",
                         "{\"summary\": 1}",
                         json::array(),
                         json::array({nullptr}),
                         json::object(),
                         {{"summary", json::object()}, {"queue", nullptr}, {"priority", 3}},
                         {{"ticket_id", json::array({"INC-204518"})}},
                         {{"year", json::object()}},
                         json::binary({1, 2, 3})};
  for (const char* tool : {"open_ticket", "lookup_ticket", "leave_balance", "list_devices"}) {
    for (const json& shape : shapes) {
      for (const char* persona : {"", "employee"}) {
        ToolBackend backend;
        INFO(tool << " " << persona);
        ToolResult result;
        CHECK_NOTHROW(result = backend.Call(tool, shape, persona));
        CHECK(((result.status == 200 && result.body.contains("result")) ||
               (result.status >= 400 && result.body.contains("error"))));
      }
    }
  }
}

}  // namespace
}  // namespace stagegate::sim

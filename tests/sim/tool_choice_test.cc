#include "sim/tool_choice.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "manifest/corpus.h"
#include "quality/tool_call_check.h"
#include "sim/demo_corpus.h"
#include "test_util.h"

namespace stagegate::sim {
namespace {

using testing::DemoCorpus;
using testing::Question;

using nlohmann::json;

const std::vector<std::string> kAllTools = {"open_ticket", "lookup_ticket", "leave_balance",
                                            "list_devices"};

// The call as {"name": ..., "arguments": ...}, or null for none: one value to compare whole.
json Choose(std::string_view question, const std::vector<std::string>& offered = kAllTools) {
  std::optional<ToolCall> call = ChooseTool(question, offered);
  if (!call) return nullptr;
  return {{"name", call->name}, {"arguments", call->arguments}};
}

json OpenTicket(const std::string& summary, const std::string& queue, const std::string& priority) {
  return {{"name", "open_ticket"},
          {"arguments", {{"summary", summary}, {"queue", queue}, {"priority", priority}}}};
}

manifest::Corpus LoadServiceDesk() {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Corpus> corpus =
      manifest::LoadCorpus(testing::SourcePath("corpus/service-desk"), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(corpus.has_value());
  return *corpus;
}

TEST_CASE("every corpus task that checks for a tool call gets it, with the arguments expected",
          "[sim]") {
  const manifest::Corpus corpus = LoadServiceDesk();
  int checked = 0, with_arguments = 0, none = 0;
  for (const manifest::Task& task : corpus.tasks) {
    for (const manifest::Check& check : task.checks) {
      INFO(task.id << ": " << Question(task));
      std::optional<ToolCall> call = ChooseTool(Question(task), kAllTools);
      if (check.kind == manifest::CheckKind::kNoToolCall) {
        CHECK_FALSE(call.has_value());
        ++none;
      }
      if (check.kind != manifest::CheckKind::kToolCalled &&
          check.kind != manifest::CheckKind::kToolCall)
        continue;
      REQUIRE(call.has_value());
      CHECK(call->name == check.text);
      ++checked;
      if (check.kind != manifest::CheckKind::kToolCall) continue;
      // The call as the record keeps it: its arguments a JSON text, as the wire sends them.
      const json calls = json::array(
          {{{"index", 0}, {"name", call->name}, {"arguments", call->arguments.dump()}}});
      const quality::ToolCallVerdict verdict = quality::JudgeToolCall(check, calls.dump());
      INFO(verdict.detail);
      CHECK(verdict.passed());
      if (!check.arguments.empty()) ++with_arguments;
    }
  }
  CHECK(checked == 21);  // 13 in actions.yaml, 8 in account.yaml
  CHECK(with_arguments == 14);
  CHECK(none == 1);
}

TEST_CASE("corpus tasks that need no tools get no tool call", "[sim]") {
  const manifest::Corpus corpus = LoadServiceDesk();
  int tasks = 0, none = 0;
  std::string misfires;
  for (const manifest::Task& task : corpus.tasks) {
    if (std::find(task.needs.begin(), task.needs.end(), manifest::Capability::kTools) !=
        task.needs.end())
      continue;
    ++tasks;
    std::optional<ToolCall> call = ChooseTool(Question(task), kAllTools);
    if (!call) {
      ++none;
    } else {
      misfires += task.id + " -> " + call->name + "\n";
    }
  }
  INFO("misfires:\n" << misfires);
  REQUIRE(tasks >= 40);
  const double rate = static_cast<double>(none) / tasks;
  CHECK(rate >= 0.9);
}

TEST_CASE("tool choice fills the arguments for the corpus's action prompts", "[sim]") {
  CHECK(Choose("What's the status of INC-204518?") ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-204518"}}}}));
  CHECK(Choose("ticket inc-207731 says resolved but the CAD licence still won't check out. can "
               "you look at it?") ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-207731"}}}}));
  CHECK(Choose("The VPN keeps dropping every 10 minutes or so when I'm working from home, it's "
               "driving me mad. Can you open a ticket for me?") ==
        OpenTicket("The VPN keeps dropping every 10 minutes or so when I'm working from home, "
                   "it's driving me mad.",
                   "it", "normal"));
  CHECK(Choose("The printer by the Leeds drawing office keeps jamming, asset number NWF-PR-0213. "
               "Please log it.") ==
        OpenTicket("The printer by the Leeds drawing office keeps jamming, asset number "
                   "NWF-PR-0213.",
                   "it", "normal"));
  CHECK(Choose("The heating's off on the 1st floor in Rotterdam, it's 16 degrees in here. Can you "
               "raise it with facilities?") ==
        OpenTicket("The heating's off on the 1st floor in Rotterdam, it's 16 degrees in here.",
                   "facilities", "normal"));
  CHECK(Choose("My November payslip has the wrong tax code, it's gone from 1257L to BR. Please "
               "raise it with HR.") ==
        OpenTicket("My November payslip has the wrong tax code, it's gone from 1257L to BR.", "hr",
                   "normal"));
  CHECK(Choose("None of my team (6 of us) can open anything on the S: drive since 10am. Can you "
               "log it as urgent?") ==
        OpenTicket("None of my team (6 of us) can open anything on the S: drive since 10am.", "it",
                   "high"));
  CHECK(
      Choose("I left my work laptop on the train from Leeds to York 20 mins ago!! What do I do") ==
      OpenTicket("I left my work laptop on the train from Leeds to York 20 mins ago!!", "it",
                 "high"));
  CHECK(Choose("Please open a request for Alteryx Designer for me, I need it for the month-end "
               "reconciliation work.") ==
        OpenTicket("Please open a request for Alteryx Designer for me, I need it for the month-end "
                   "reconciliation work.",
                   "it", "low"));
  CHECK(Choose("The whole Rotterdam office has lost network, nobody can do anything. Log it!!") ==
        OpenTicket("The whole Rotterdam office has lost network, nobody can do anything.", "it",
                   "high"));
  CHECK(
      Choose("Open an HR ticket: 'Contract amendment needed for new L4 hire starting 2 "
             "February'. Reply only with a JSON object with the keys ticket_id and queue.") ==
      OpenTicket("Contract amendment needed for new L4 hire starting 2 February", "hr", "normal"));
}

TEST_CASE("tool choice fills the arguments for the corpus's account prompts", "[sim]") {
  CHECK(Choose("how many leave days do I have left this year?") ==
        json({{"name", "leave_balance"}, {"arguments", json::object()}}));
  CHECK(Choose("What's my leave allowance for 2027? Want to plan a long trip in the autumn.") ==
        json({{"name", "leave_balance"}, {"arguments", {{"year", 2027}}}}));
  CHECK(Choose("which laptops are registered to me?") ==
        json({{"name", "list_devices"}, {"arguments", json::object()}}));
  // Another's balance is not the asker's to read: a model calling leave_balance here would pass
  // off the manager's own figures as Priya's (hr-colleague-leave-balance).
  CHECK(Choose("How many days leave has Priya Shah in my team got left? She's asked for 3 weeks in "
               "December.") == nullptr);
}

TEST_CASE("tool choice ignores case and typographic apostrophes", "[sim]") {
  CHECK(Choose("WHAT'S HAPPENING WITH inc-198877") ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-198877"}}}}));
  CHECK(Choose("Any News On Inc-203390?")["arguments"]["ticket_id"] == "INC-203390");
  CHECK(Choose("How Many Holiday Days Have I Got Left?")["name"] == "leave_balance");
  CHECK(Choose("what kit I\xE2\x80\x99ve got registered, please?")["name"] == "list_devices");
  CHECK(Choose("The heating\xE2\x80\x99s off again, please log it")["arguments"]["queue"] ==
        "facilities");
}

TEST_CASE("tool choice only calls a tool that was offered", "[sim]") {
  CHECK(Choose("What's the status of INC-204518?", {"open_ticket"}) == nullptr);
  CHECK(Choose("What's the status of INC-204518?", {}) == nullptr);
  CHECK(Choose("how many leave days do I have left?", {"list_devices", "open_ticket"}) == nullptr);
  CHECK(Choose("which laptops are registered to me?", {"list_devices"})["name"] == "list_devices");
  CHECK(Choose("which laptops are registered to me?", {"leave_balance"}) == nullptr);
}

TEST_CASE("asking for a new ticket about an existing one opens a ticket", "[sim]") {
  CHECK(Choose("INC-207731 is closed but the licence fails again. Please open a new ticket.") ==
        OpenTicket("INC-207731 is closed but the licence fails again.", "it", "normal"));
  // Without "new", the ticket number makes it a look-up.
  CHECK(Choose("Can you check INC-207731 and log it as urgent?")["name"] == "lookup_ticket");
}

TEST_CASE("tool choice picks the queue and priority from the words used", "[sim]") {
  CHECK(Choose("The kitchen tap on the 2nd floor is leaking, please raise a ticket")["arguments"] ==
        json({{"summary", "The kitchen tap on the 2nd floor is leaking, please raise a ticket"},
              {"queue", "facilities"},
              {"priority", "normal"}}));
  CHECK(Choose("My desk lamp is broken, log it please")["arguments"]["queue"] == "facilities");
  CHECK(Choose("Please raise a ticket with the service desk, Outlook keeps crashing")["arguments"]
                                                                                     ["queue"] ==
        "it");
  CHECK(Choose(
            "My parental leave dates are wrong in Forge People, can you log a ticket?")["arguments"]
                                                                                       ["queue"] ==
        "hr");
  CHECK(Choose("The printer on the 3rd floor is jammed again, raise it please")["arguments"] ==
        json({{"summary", "The printer on the 3rd floor is jammed again, raise it please"},
              {"queue", "it"},
              {"priority", "normal"}}));
  CHECK(Choose("Teams is down for everyone here, please log a ticket")["arguments"]["priority"] ==
        "high");
  CHECK(Choose("Excel crashes on start, I can't work. Log it ASAP")["arguments"]["priority"] ==
        "high");
  CHECK(Choose("My monitor is broken, I need a ticket")["arguments"] ==
        json({{"summary", "My monitor is broken, I need a ticket"},
              {"queue", "it"},
              {"priority", "normal"}}));
  CHECK(Choose("My phone was stolen from my car last night")["arguments"]["priority"] == "high");
}

TEST_CASE("tool choice leaves alone questions that only sound like tools", "[sim]") {
  for (const char* question : {
           "I forgot to claim a train ticket from about 10 weeks ago. Is it too late?",
           "Is there a grievance open against Daniel Hartley in Accounts Payable?",
           "One of my engineers needs a free open-source tool that isn't in Company Portal.",
           "I don't want the Microsoft app on my personal phone. Do I have to install it?",
           "How many days of annual leave can I carry over into next year?",
           "My partner is due in March. How much paternity leave do I get and is it paid?",
           "My laptop is really slow and it's about 3 years old. Can I get a new one?",
           "The VPN is asking me for a portal address after an update. What do I type in?",
           "How do I log in to Forge People?",
           "",
       }) {
    INFO(question);
    CHECK(Choose(question) == nullptr);
  }
}

TEST_CASE("a ticket summary is one line of at most 120 bytes", "[sim]") {
  CHECK(Choose("The plotter\n\tin Leeds   is  broken.\r\nPlease log it.")["arguments"]["summary"] ==
        "The plotter in Leeds is broken.");
  const std::string long_question =
      "The shared drive mapping for the Leeds finance team disappears after every reboot and we "
      "have to map it again by hand each morning before month end. Please log it.";
  const json summary = Choose(long_question)["arguments"]["summary"];
  CHECK(summary ==
        "The shared drive mapping for the Leeds finance team disappears after every reboot and we "
        "have to map it again by hand...");
  CHECK(summary.get<std::string>().size() == 120);
  // No space to cut at: the cut backs off to the start of a character.
  std::string accents;
  for (int i = 0; i < 80; ++i)
    accents += "\xC3\xA9";  // é
  json call = Choose("Screen broken " + accents + ". Please log it.");
  std::string expected = "Screen broken ";
  for (int i = 0; i < 51; ++i)
    expected += "\xC3\xA9";
  CHECK(call["arguments"]["summary"] == expected + "...");
  CHECK_NOTHROW(call.dump());
}

// ParseToolChoice's outcome as JSON: {"mode", "function"} or {"error": message}.
json Parse(const json& tool_choice, const std::vector<std::string>& offered = kAllTools) {
  Result<ToolChoice> choice = ParseToolChoice(tool_choice, offered);
  if (!choice.ok()) return {{"error", choice.status().message()}};
  const char* modes[] = {"auto", "none", "required", "function"};
  return {{"mode", modes[static_cast<int>(choice->mode)]}, {"function", choice->function}};
}

json Named(const std::string& name) {
  return {{"type", "function"}, {"function", {{"name", name}}}};
}

const std::string kUsage =
    "; use \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": "
    "\"...\"}}";

TEST_CASE("tool_choice reads the modes and a named function", "[sim]") {
  CHECK(Parse(nullptr) == json({{"mode", "auto"}, {"function", ""}}));
  CHECK(Parse("auto") == json({{"mode", "auto"}, {"function", ""}}));
  CHECK(Parse("none") == json({{"mode", "none"}, {"function", ""}}));
  CHECK(Parse("required") == json({{"mode", "required"}, {"function", ""}}));
  CHECK(Parse(Named("lookup_ticket")) ==
        json({{"mode", "function"}, {"function", "lookup_ticket"}}));
  // Without tools, auto and none ask nothing that cannot be done.
  CHECK(Parse("auto", {}) == json({{"mode", "auto"}, {"function", ""}}));
  CHECK(Parse("none", {}) == json({{"mode", "none"}, {"function", ""}}));
}

TEST_CASE("a tool_choice that cannot be honoured is refused with the reason", "[sim]") {
  CHECK(Parse(Named("get_weather"), {"open_ticket", "lookup_ticket"}) ==
        json({{"error",
               "'tool_choice' names the function \"get_weather\", which is not in 'tools' "
               "(offered: open_ticket, lookup_ticket)"}}));
  CHECK(Parse(Named("lookup_ticket"), {}) ==
        json({{"error",
               "'tool_choice' names the function \"lookup_ticket\", which is not in 'tools' (no "
               "tools were sent)"}}));
  CHECK(Parse("required", {}) ==
        json({{"error", "'tool_choice' \"required\" needs at least one tool in 'tools'"}}));
  CHECK(Parse("always") ==
        json({{"error", "invalid 'tool_choice': \"always\" is not a mode" + kUsage}}));
  CHECK(Parse("Required")["error"] == "invalid 'tool_choice': \"Required\" is not a mode" + kUsage);
  for (const json& not_an_object : {json(true), json(3), json::array({"auto"})}) {
    INFO(not_an_object.dump());
    CHECK(Parse(not_an_object) ==
          json({{"error", "invalid 'tool_choice': it must be a string or an object" + kUsage}}));
  }
  for (const json& untyped :
       {json({{"function", {{"name", "lookup_ticket"}}}}),
        json({{"type", "tool"}, {"function", {{"name", "lookup_ticket"}}}})}) {
    INFO(untyped.dump());
    CHECK(Parse(untyped) ==
          json({{"error",
                 "invalid 'tool_choice': an object needs \"type\": \"function\"" + kUsage}}));
  }
  for (const json& nameless :
       {json({{"type", "function"}}), json({{"type", "function"}, {"function", "lookup_ticket"}}),
        json({{"type", "function"}, {"function", json::object()}}),
        json({{"type", "function"}, {"function", {{"name", 7}}}}), Named("")}) {
    INFO(nameless.dump());
    CHECK(Parse(nameless) ==
          json({{"error",
                 "invalid 'tool_choice': an object needs \"function\": {\"name\": ...} with a "
                 "non-empty name" +
                     kUsage}}));
  }
}

// CallTool's call as {"name", "arguments"}, or null for none.
json Call(std::string_view question, const ToolChoice& choice,
          const std::vector<std::string>& offered = kAllTools) {
  std::optional<ToolCall> call = CallTool(question, offered, choice);
  if (!call) return nullptr;
  return {{"name", call->name}, {"arguments", call->arguments}};
}

const ToolChoice kAuto{.mode = ToolChoice::Mode::kAuto};
const ToolChoice kNone{.mode = ToolChoice::Mode::kNone};
const ToolChoice kRequired{.mode = ToolChoice::Mode::kRequired};
ToolChoice Function(const std::string& name) {
  return {.mode = ToolChoice::Mode::kFunction, .function = name};
}

const std::string kStatusQuestion = "What is the status of ticket INC-1042?";
const std::string kPlainQuestion = "What is phishing?";

TEST_CASE("tool_choice auto and none: the model decides, or calls nothing", "[sim]") {
  const json lookup = {{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-204518"}}}};
  CHECK(Call("What's the status of INC-204518?", kAuto) == lookup);
  CHECK(Call(kPlainQuestion, kAuto) == nullptr);
  CHECK(Call("What's the status of INC-204518?", kNone) == nullptr);
}

TEST_CASE("tool_choice required: the model's own call, else the first offered tool", "[sim]") {
  CHECK(Call("What's the status of INC-204518?", kRequired) ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-204518"}}}}));
  CHECK(Call("how many leave days do I have left in 2026?", kRequired) ==
        json({{"name", "leave_balance"}, {"arguments", {{"year", 2026}}}}));
  // INC-1042 is no ticket number (those have six digits), so no rule fits; still, a question
  // that names a ticket gets lookup_ticket when it is offered, with the ticket as named.
  CHECK(Call(kStatusQuestion, kAuto) == nullptr);
  for (const std::vector<std::string>& offered :
       {std::vector<std::string>{"lookup_ticket"}, kAllTools,
        std::vector<std::string>{"list_devices", "lookup_ticket"}}) {
    CHECK(Call(kStatusQuestion, kRequired, offered) ==
          json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-1042"}}}}));
  }
  // Otherwise the first offered tool, with what the question gives for its arguments.
  CHECK(Call(kStatusQuestion, kRequired, {"list_devices", "open_ticket"}) ==
        json({{"name", "list_devices"}, {"arguments", json::object()}}));
  CHECK(Call(kPlainQuestion, kRequired, {"lookup_ticket", "open_ticket"}) ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", ""}}}}));
  CHECK(Call(kPlainQuestion, kRequired, {"open_ticket", "lookup_ticket"}) ==
        OpenTicket("What is phishing?", "it", "normal"));
  CHECK(Call("Is my 2027 leave approved?", kRequired, {"leave_balance"}) ==
        json({{"name", "leave_balance"}, {"arguments", {{"year", 2027}}}}));
  CHECK(Call(kPlainQuestion, kRequired, {"list_devices"}) ==
        json({{"name", "list_devices"}, {"arguments", json::object()}}));
  CHECK(Call(kPlainQuestion, kRequired, {"get_weather", "open_ticket"}) ==
        json({{"name", "get_weather"}, {"arguments", json::object()}}));
}

TEST_CASE("tool_choice naming a function calls exactly that function", "[sim]") {
  // Even where the model would call another tool, or none.
  CHECK(Call("What's the status of INC-204518?", Function("lookup_ticket")) ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-204518"}}}}));
  CHECK(Call("INC-207731 is closed but the licence fails again. Please open a new ticket.",
             Function("lookup_ticket")) ==
        json({{"name", "lookup_ticket"}, {"arguments", {{"ticket_id", "INC-207731"}}}}));
  CHECK(Call("What's the status of INC-204518?", Function("open_ticket")) ==
        OpenTicket("What's the status of INC-204518?", "it", "normal"));
  CHECK(Call(kPlainQuestion, Function("list_devices")) ==
        json({{"name", "list_devices"}, {"arguments", json::object()}}));
  CHECK(Call(kPlainQuestion, Function("get_weather"), {"get_weather"}) ==
        json({{"name", "get_weather"}, {"arguments", json::object()}}));
  // The rules still fill the arguments when they fit: the year of a leave question.
  CHECK(Call("What's my leave allowance for 2027?", Function("leave_balance")) ==
        json({{"name", "leave_balance"}, {"arguments", {{"year", 2027}}}}));
}

}  // namespace
}  // namespace stagegate::sim

#include "sim/tool_choice.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "base/strings.h"

namespace stagegate::sim {
namespace {

constexpr size_t kMaxSummaryLength = 120;

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// The question as lower-case words, for matching phrases. A word is a run of letters and digits,
// with inner hyphens and apostrophes kept ("inc-204518", "can't"); a typographic apostrophe counts
// as a plain one.
class Words {
 public:
  explicit Words(std::string_view text) {
    std::string folded;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.substr(i, 3) == "\xE2\x80\x99") {  // U+2019
        folded += '\'';
        i += 2;
      } else {
        folded += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      }
    }
    std::string word;
    for (size_t i = 0; i <= folded.size(); ++i) {
      const char c = i < folded.size() ? folded[i] : ' ';
      const bool joiner = (c == '-' || c == '\'') && !word.empty() && i + 1 < folded.size() &&
                          IsWordChar(folded[i + 1]);
      if (IsWordChar(c) || joiner) {
        word += c;
      } else if (!word.empty()) {
        words_.push_back(std::move(word));
        word.clear();
      }
    }
  }

  size_t size() const { return words_.size(); }
  const std::string& operator[](size_t i) const { return words_[i]; }

  /// Whether word `i` is `pattern`, or `pattern` with 's ("heating's").
  bool Is(size_t i, std::string_view pattern) const {
    if (i >= words_.size()) return false;
    const std::string& word = words_[i];
    if (word.size() == pattern.size()) return word == pattern;
    return word.size() == pattern.size() + 2 && word.ends_with("'s") && word.starts_with(pattern);
  }
  bool IsAny(size_t i, std::initializer_list<std::string_view> patterns) const {
    return std::any_of(patterns.begin(), patterns.end(), [&](auto p) { return Is(i, p); });
  }

  /// Where the words of `phrase` (separated by single spaces) occur in a row, or npos.
  size_t Find(std::string_view phrase, size_t from = 0) const {
    for (size_t i = from; i < words_.size(); ++i) {
      if (MatchesAt(i, phrase)) return i;
    }
    return std::string::npos;
  }
  bool Has(std::string_view phrase) const { return Find(phrase) != std::string::npos; }
  bool HasAny(std::initializer_list<std::string_view> phrases) const {
    return std::any_of(phrases.begin(), phrases.end(), [&](auto p) { return Has(p); });
  }
  /// Whether `phrase` occurs not followed by `next` ("do i have", but not "do i have to").
  bool HasUnlessNext(std::string_view phrase, std::string_view next) const {
    const size_t length = static_cast<size_t>(std::count(phrase.begin(), phrase.end(), ' ')) + 1;
    for (size_t at = Find(phrase); at != std::string::npos; at = Find(phrase, at + 1)) {
      if (!Is(at + length, next)) return true;
    }
    return false;
  }

 private:
  // Whether the words of `phrase` start at word `i`; no allocation, as this runs per request.
  bool MatchesAt(size_t i, std::string_view phrase) const {
    for (;; ++i) {
      const size_t space = phrase.find(' ');
      if (!Is(i, phrase.substr(0, space))) return false;
      if (space == std::string_view::npos) return true;
      phrase.remove_prefix(space + 1);
    }
  }

  std::vector<std::string> words_;
};

// "INC-" and six digits, upper-cased, or "".
std::string TicketNumber(const Words& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() == 10 && w.starts_with("inc-") &&
        std::all_of(w.begin() + 4, w.end(), [](char c) { return std::isdigit(c) != 0; }))
      return "INC-" + w.substr(4);
  }
  return "";
}

// "open a ticket", "raise an HR ticket", "log a call", "please log it", "raise it with facilities".
bool AsksToOpen(const Words& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (!words.IsAny(i, {"open", "raise", "log", "report", "create", "file", "submit"})) continue;
    if (words.IsAny(i, {"raise", "log"}) && words.IsAny(i + 1, {"it", "this"})) return true;
    size_t j = i + 1;
    while (j < i + 4 && words.IsAny(j, {"a", "an", "the", "new", "me", "us", "up", "another"}))
      ++j;
    for (size_t k = j; k <= j + 1; ++k) {  // one qualifier allowed: "an HR ticket"
      if (words.IsAny(
              k, {"ticket", "request", "incident", "case", "call", "fault", "issue", "problem"}))
        return true;
    }
  }
  return false;
}

// A fault described together with a ticket ("the monitor is broken, I need a ticket"), not a
// train ticket.
bool FaultWithTicket(const Words& words) {
  const bool fault =
      words.HasAny({"not working", "isn't working", "doesn't work", "broken", "won't", "keeps",
                    "can't", "cannot", "error", "failing", "fails", "failed", "stopped", "crashed",
                    "crashing", "down", "jammed", "jamming", "dead"});
  if (!fault) return false;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words.IsAny(i, {"ticket", "tickets"}) &&
        (i == 0 || !words.IsAny(i - 1, {"train", "rail", "bus", "plane", "flight", "parking",
                                        "return", "single", "raffle", "concert"})))
      return true;
  }
  return false;
}

bool IsPortableDevice(const Words& words, size_t i) {
  return words.IsAny(
      i, {"laptop", "phone", "mobile", "tablet", "ipad", "iphone", "macbook", "yubikey", "device"});
}

// "I left my work laptop on the train", "my phone was stolen".
bool LostDevice(const Words& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words.IsAny(i, {"lost", "left", "stolen", "stole", "misplaced"})) {
      for (size_t j = i + 1; j <= i + 4; ++j) {
        if (IsPortableDevice(words, j)) return true;
      }
    }
    if (IsPortableDevice(words, i)) {
      for (size_t j = i + 1; j <= i + 4; ++j) {
        if (words.IsAny(j, {"stolen", "lost", "missing"})) return true;
      }
    }
  }
  return false;
}

// The asker's own holdings: "do I have" (not "do I have to"), "have I got", "will I".
bool AboutOwnHoldings(const Words& words) {
  return words.HasUnlessNext("do i have", "to") || words.HasUnlessNext("i have", "to") ||
         words.HasAny({"have i got", "i've got", "i have got", "will i", "am i", "my own"});
}

bool AsksOwnLeaveBalance(const Words& words) {
  const bool leave = words.HasAny({"leave", "holiday", "holidays", "annual leave", "days off",
                                   "how many days", "vacation", "pto"});
  const bool balance =
      words.HasAny({"left", "remaining", "balance", "allowance", "entitlement", "lose", "owed"});
  const bool own = AboutOwnHoldings(words) ||
                   words.HasAny({"my leave", "my holiday", "my holidays", "my annual"});
  return leave && balance && own;
}

bool AsksOwnDevices(const Words& words) {
  if (words.HasAny({"my devices", "my kit", "my equipment", "registered to me",
                    "registered under my name", "registered in my name", "enrolled under my name",
                    "assigned to me", "issued to me", "which laptop", "which laptops",
                    "what laptops", "what devices", "which devices", "what kit"}))
    return true;
  const bool device =
      words.HasAny({"device", "devices", "laptop", "laptops", "phone", "phones", "mobile", "tablet",
                    "tablets", "ipad", "iphone", "macbook", "yubikey", "kit", "monitor", "monitors",
                    "equipment", "hardware"});
  if (!device) return false;
  if (AboutOwnHoldings(words)) return true;
  // "when is my laptop due to be replaced": the answer needs its issue date.
  return words.Has("my") && words.HasAny({"due", "refresh", "replaced", "replace", "replacement",
                                          "issued", "asset tag", "serial number", "how old"});
}

std::string Queue(const Words& words) {
  if (words.Has("hr")) return "hr";
  if (words.Has("facilities")) return "facilities";
  if (words.HasAny({"leave", "holiday", "payroll", "payslip", "pay", "salary", "contract",
                    "parental", "maternity", "paternity", "sickness", "sick", "pension", "tax code",
                    "overtime", "grievance"}))
    return "hr";
  for (size_t i = 0; i < words.size(); ++i) {
    // The service desk and the help desk are not furniture.
    if (words.Is(i, "desk") && !(i > 0 && words.IsAny(i - 1, {"service", "help"})))
      return "facilities";
  }
  if (words.HasAny({"heating",   "heater",      "radiator", "light", "lights",
                    "door",      "doors",       "kitchen",  "badge", "chair",
                    "furniture", "toilet",      "toilets",  "lift",  "air conditioning",
                    "aircon",    "temperature", "degrees",  "leak",  "cleaning",
                    "parking"}))
    return "facilities";
  return "it";  // printers too: they are IT's
}

std::string Priority(const Words& words) {
  if (LostDevice(words) ||
      words.HasAny({"urgent", "urgently", "asap", "as soon as possible", "emergency", "can't work",
                    "cannot work", "down for everyone", "nobody can", "no one can", "none of",
                    "everyone", "all of us", "whole team", "whole office", "whole site"}))
    return "high";
  if (words.HasAny({"request", "requests"})) return "low";
  return "normal";
}

// The text between a quote after a colon and its closing quote: "Open an HR ticket: 'Contract
// amendment needed'". A closing quote is one not followed by a letter, so "can't" does not end it.
std::string QuotedAfterColon(const std::string& text) {
  for (size_t colon = text.find(':'); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    size_t open = colon + 1;
    while (open < text.size() && text[open] == ' ')
      ++open;
    if (open >= text.size() || (text[open] != '\'' && text[open] != '"')) continue;
    const char quote = text[open];
    for (size_t close = text.find(quote, open + 1); close != std::string::npos;
         close = text.find(quote, close + 1)) {
      if (close + 1 < text.size() && IsWordChar(text[close + 1])) continue;
      std::string inner(Trim(std::string_view(text).substr(open + 1, close - open - 1)));
      if (!inner.empty()) return inner;
      break;
    }
  }
  return "";
}

// Sentences, each with its closing punctuation: a run of . ! ? followed by a space ends one.
std::vector<std::string> Sentences(const std::string& text) {
  std::vector<std::string> sentences;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '.' && text[i] != '!' && text[i] != '?') continue;
    while (i + 1 < text.size() && (text[i + 1] == '.' || text[i + 1] == '!' || text[i + 1] == '?'))
      ++i;
    if (i + 1 == text.size() || text[i + 1] == ' ') {
      sentences.push_back(text.substr(start, i + 1 - start));
      start = i + 2;
    }
  }
  if (start < text.size()) sentences.push_back(text.substr(start));
  return sentences;
}

std::string Truncate(std::string text) {
  if (text.size() <= kMaxSummaryLength) return text;
  const size_t room = kMaxSummaryLength - 3;
  size_t cut = text.rfind(' ', room);
  if (cut == std::string::npos || cut < room / 2) {
    cut = room;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;  // never split a UTF-8 sequence
  }
  text.resize(cut);
  while (!text.empty() && (text.back() == ' ' || text.back() == ',' || text.back() == ';'))
    text.pop_back();
  return text + "...";
}

// A one-line summary of the problem: the question without the sentence that asks for the ticket.
std::string Summary(std::string_view question) {
  std::string line;
  for (char c : question) {
    const bool space = static_cast<unsigned char>(c) < 0x20 || c == ' ' || c == 0x7f;
    if (!space) {
      line += c;
    } else if (!line.empty() && line.back() != ' ') {
      line += ' ';
    }
  }
  if (!line.empty() && line.back() == ' ') line.pop_back();

  if (std::string quoted = QuotedAfterColon(line); !quoted.empty()) return Truncate(quoted);
  std::vector<std::string> kept;
  const std::vector<std::string> sentences = Sentences(line);
  for (const std::string& sentence : sentences) {
    const Words words(sentence);
    if (!AsksToOpen(words) && !words.HasAny({"what do i do", "what should i do"}))
      kept.push_back(sentence);
  }
  return Truncate(Join(kept.empty() ? sentences : kept, " "));
}

ToolCall OpenTicketCall(std::string_view question, const Words& words) {
  return {"open_ticket",
          {{"summary", Summary(question)}, {"queue", Queue(words)}, {"priority", Priority(words)}}};
}

// leave_balance{}, with the first year 20xx the question names.
ToolCall LeaveBalanceCall(const Words& words) {
  nlohmann::json arguments = nlohmann::json::object();
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].size() == 4 && words[i].starts_with("20") &&
        std::all_of(words[i].begin(), words[i].end(),
                    [](char c) { return std::isdigit(c) != 0; })) {
      arguments["year"] = std::stoi(words[i]);
      break;
    }
  }
  return ToolCall{"leave_balance", std::move(arguments)};
}

// "INC-" and any number of digits, upper-cased, or "": what a question calls a ticket, even when
// it is not a well-formed number.
std::string TicketReference(const Words& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() > 4 && w.starts_with("inc-") &&
        std::all_of(w.begin() + 4, w.end(), [](char c) { return std::isdigit(c) != 0; }))
      return "INC-" + w.substr(4);
  }
  return "";
}

// A call to `name` that the rules of ChooseTool did not pick: its arguments from whatever the
// question holds.
ToolCall ForcedCall(std::string_view question, const std::string& name) {
  const Words words(question);
  if (name == "lookup_ticket") return {name, {{"ticket_id", TicketReference(words)}}};
  if (name == "open_ticket") return OpenTicketCall(question, words);
  if (name == "leave_balance") return LeaveBalanceCall(words);
  return {name, nlohmann::json::object()};
}

const char* const kToolChoiceUsage =
    "use \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": "
    "{\"name\": \"...\"}}";

Status InvalidToolChoice(const std::string& problem) {
  return Status::InvalidInput("invalid 'tool_choice': " + problem + "; " + kToolChoiceUsage);
}

}  // namespace

Result<ToolChoice> ParseToolChoice(const nlohmann::json& value,
                                   const std::vector<std::string>& offered) {
  if (value.is_null()) return ToolChoice{};
  if (value.is_string()) {
    const std::string mode = value.get<std::string>();
    if (mode == "auto") return ToolChoice{.mode = ToolChoice::Mode::kAuto};
    if (mode == "none") return ToolChoice{.mode = ToolChoice::Mode::kNone};
    if (mode == "required") {
      if (offered.empty())
        return Status::InvalidInput(
            "'tool_choice' \"required\" needs at least one tool in 'tools'");
      return ToolChoice{.mode = ToolChoice::Mode::kRequired};
    }
    return InvalidToolChoice(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                             " is not a mode");
  }
  if (!value.is_object()) return InvalidToolChoice("it must be a string or an object");
  if (!value.contains("type") || value["type"] != "function")
    return InvalidToolChoice("an object needs \"type\": \"function\"");
  const nlohmann::json* function =
      value.contains("function") && value["function"].is_object() ? &value["function"] : nullptr;
  if (!function || !function->contains("name") || !(*function)["name"].is_string() ||
      (*function)["name"].get<std::string>().empty())
    return InvalidToolChoice("an object needs \"function\": {\"name\": ...} with a non-empty name");
  const std::string name = (*function)["name"].get<std::string>();
  if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
    const nlohmann::json quoted = name;
    return Status::InvalidInput(
        "'tool_choice' names the function " +
        quoted.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        ", which is not in 'tools'" +
        (offered.empty() ? std::string(" (no tools were sent)")
                         : " (offered: " + Join(offered, ", ") + ")"));
  }
  return ToolChoice{.mode = ToolChoice::Mode::kFunction, .function = name};
}

std::optional<ToolCall> CallTool(std::string_view question, const std::vector<std::string>& offered,
                                 const ToolChoice& choice) {
  switch (choice.mode) {
    case ToolChoice::Mode::kAuto:
      return ChooseTool(question, offered);
    case ToolChoice::Mode::kNone:
      return std::nullopt;
    case ToolChoice::Mode::kRequired:
      if (std::optional<ToolCall> call = ChooseTool(question, offered)) return call;
      if (offered.empty()) return std::nullopt;  // ParseToolChoice refuses this
      if (std::find(offered.begin(), offered.end(), "lookup_ticket") != offered.end() &&
          !TicketReference(Words(question)).empty())
        return ForcedCall(question, "lookup_ticket");
      return ForcedCall(question, offered.front());
    case ToolChoice::Mode::kFunction:
      if (std::optional<ToolCall> call = ChooseTool(question, {choice.function})) return call;
      return ForcedCall(question, choice.function);
  }
  return std::nullopt;
}

std::optional<ToolCall> ChooseTool(std::string_view question,
                                   const std::vector<std::string>& offered) {
  const auto is_offered = [&](std::string_view name) {
    return std::find(offered.begin(), offered.end(), name) != offered.end();
  };
  const Words words(question);
  const bool asks_to_open = AsksToOpen(words);

  if (is_offered("open_ticket") && asks_to_open && words.HasAny({"new ticket", "another ticket"}))
    return OpenTicketCall(question, words);
  const std::string ticket = TicketNumber(words);
  if (!ticket.empty() && is_offered("lookup_ticket") &&
      words.HasAny({"status", "update", "updates", "look", "check", "news", "happening", "ticket",
                    "progress", "chase", "latest"}))
    return ToolCall{"lookup_ticket", {{"ticket_id", ticket}}};
  if (is_offered("open_ticket") && (asks_to_open || FaultWithTicket(words) || LostDevice(words)))
    return OpenTicketCall(question, words);
  if (is_offered("leave_balance") && AsksOwnLeaveBalance(words)) return LeaveBalanceCall(words);
  if (is_offered("list_devices") && AsksOwnDevices(words))
    return ToolCall{"list_devices", nlohmann::json::object()};
  return std::nullopt;
}

}  // namespace stagegate::sim

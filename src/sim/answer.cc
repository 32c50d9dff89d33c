#include "sim/answer.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <re2/re2.h>

#include "base/common_words.h"
#include "base/hashing.h"
#include "base/strings.h"

namespace stagegate::sim {
namespace {

using nlohmann::json;

template <size_t N>
const char* Pick(const std::array<const char*, N>& choices, uint64_t seed) {
  return choices[Mix64(seed) % N];
}

bool HasAny(const std::string& lower, const std::vector<std::string_view>& words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view word) { return lower.find(word) != std::string::npos; });
}

// The length of the valid UTF-8 sequence at the start of `text`, or 0 when it is not one.
size_t Utf8Length(std::string_view text) {
  const unsigned char lead = static_cast<unsigned char>(text[0]);
  const size_t length = lead < 0x80           ? 1
                        : (lead >> 5) == 0x6  ? 2
                        : (lead >> 4) == 0xe  ? 3
                        : (lead >> 3) == 0x1e ? 4
                                              : 0;
  if (length == 0 || length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) return 0;
  return length;
}

// Text from a tool or a request made safe to quote: valid UTF-8 on one line, no control characters
// or chat template markers (so nothing can pose as another role), at most `max_bytes` (cut at a
// space).
std::string Clean(std::string_view text, size_t max_bytes = 200) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      const size_t length = Utf8Length(text.substr(i));
      out += length == 0 ? std::string("?") : std::string(text.substr(i, length));
      i += length == 0 ? 0 : length - 1;
      continue;
    }
    if ((text.substr(i, 2) == "<|" || text.substr(i, 2) == "|>")) {
      ++i;
      continue;
    }
    const bool space =
        static_cast<unsigned char>(text[i]) < 0x20 || text[i] == 0x7f || text[i] == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : text[i];
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  if (out.size() > max_bytes) {
    size_t cut = out.rfind(' ', max_bytes);
    if (cut == std::string::npos || cut == 0) {
      cut = max_bytes;  // one long word: cut it, but not inside a UTF-8 sequence
      while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80)
        --cut;
    }
    out = out.substr(0, cut) + " ...";
  }
  return out;
}

// A scalar field as text ("" when missing or not a scalar); numbers written as a person would.
std::string Field(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end()) return "";
  if (it->is_string()) return Clean(it->get<std::string>());
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  if (it->is_number_unsigned()) return std::to_string(it->get<uint64_t>());
  if (it->is_number_float()) return FormatNumber(it->get<double>(), 2);
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  return "";
}

std::string FirstField(const json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (std::string value = Field(object, key); !value.empty()) return value;
  return "";
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string EndSentence(std::string text) {
  if (!text.empty() && std::string_view(".!?").find(text.back()) == std::string_view::npos)
    text += '.';
  return text;
}

// ---- Tools ----------------------------------------------------------------------------------

// The tool a result came from when the name was not passed on (a client ran the tool).
std::string ToolKind(const ToolOutcome& tool) {
  if (!tool.name.empty()) return tool.name;
  const json& r = tool.result;
  if (!r.is_object()) return "";
  if (r.contains("devices")) return "list_devices";
  if (r.contains("remaining_days") || r.contains("entitlement_days")) return "leave_balance";
  if (r.contains("ticket_id"))
    return r.contains("update") || r.contains("team") ? "lookup_ticket" : "open_ticket";
  return "";
}

// Whether `word` occurs in `lower` as a whole word (letters, digits and '_' make words).
bool HasWord(const std::string& lower, const std::string& word) {
  auto word_byte = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (word.empty()) return false;
  for (size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !word_byte(lower[at - 1])) && (end == lower.size() || !word_byte(lower[end])))
      return true;
  }
  return false;
}

// The answer as a JSON object when the question asks for one: the keys the question names, from the
// result (or else the arguments); every key when it names none.
std::optional<std::string> JsonReply(const std::string& question, const ToolOutcome& tool) {
  const std::string lower = AsciiLower(question);
  if (!HasWord(lower, "json")) return std::nullopt;
  json merged = tool.arguments.is_object() ? tool.arguments : json::object();
  if (tool.result.is_object()) merged.update(tool.result);
  json picked = json::object();
  for (const auto& [key, value] : merged.items())
    if (HasWord(lower, AsciiLower(key))) picked[key] = value;
  return Dump(picked.empty() ? merged : picked);
}

std::string OpenTicketAnswer(const ToolOutcome& tool) {
  const std::string id = Field(tool.result, "ticket_id");
  if (id.empty())
    return "The ticket service answered but gave no ticket number, so I can't confirm that a "
           "ticket was opened. Please check the service desk portal before raising it again.";
  std::string queue = FirstField(tool.result, {"queue"});
  if (queue.empty()) queue = Field(tool.arguments, "queue");
  std::string priority = FirstField(tool.result, {"priority"});
  if (priority.empty()) priority = Field(tool.arguments, "priority");
  std::string summary = Field(tool.arguments, "summary");
  if (summary.empty()) summary = Field(tool.result, "summary");
  std::string text = "Ticket " + id + " has been opened for you";
  if (!queue.empty()) text += " in the " + queue + " queue";
  if (!priority.empty()) text += " with " + priority + " priority";
  text += summary.empty() ? "." : ": " + EndSentence(summary);
  return text + " You'll get an e-mail at each update; quote " + id +
         " if you contact the service desk.";
}

std::string LookupTicketAnswer(const ToolOutcome& tool) {
  std::string id = Field(tool.result, "ticket_id");
  if (id.empty()) id = Field(tool.arguments, "ticket_id");
  const std::string named = id.empty() ? "that ticket" : "ticket " + id;
  if (!Field(tool.result, "error").empty() || Field(tool.result, "found") == "no")
    return "I couldn't find " + named +
           " among the tickets raised by or for you. Please check the number and try again.";
  const std::string status = Field(tool.result, "status");
  if (status.empty())
    return "I found " + named + ", but the ticket service didn't return its status.";
  std::string text = "Ticket " + (id.empty() ? std::string("(no number)") : id) + " is " + status;
  if (std::string team = FirstField(tool.result, {"team", "assigned_team", "queue"}); !team.empty())
    text += ", assigned to " + team;
  if (std::string priority = Field(tool.result, "priority"); !priority.empty())
    text += ", priority " + priority;
  text += ".";
  if (std::string update = FirstField(tool.result, {"update", "latest_update"}); !update.empty())
    text += " Latest update: " + EndSentence(update);
  return text;
}

std::string ForAccount(const std::string& persona) {
  return persona.empty() ? "For your account" : "For your account (" + Clean(persona, 60) + ")";
}

std::string LeaveBalanceAnswer(const ToolOutcome& tool, const std::string& persona) {
  const json& r = tool.result;
  const std::string year = Field(r, "year");
  const std::string remaining = Field(r, "remaining_days");
  std::vector<std::string> details;
  if (std::string v = Field(r, "entitlement_days"); !v.empty())
    details.push_back("entitlement " + v);
  if (std::string v = Field(r, "carried_over_days"); !v.empty())
    details.push_back(v + " carried over");
  if (std::string v = Field(r, "booked_days"); !v.empty()) details.push_back(v + " booked");
  if (std::string v = Field(r, "taken_days"); !v.empty()) details.push_back(v + " taken");
  std::string text = ForAccount(persona);
  if (remaining.empty())
    text += ", the leave service didn't return a remaining balance";
  else
    text += ", you have " + remaining + " days of annual leave remaining";
  if (!year.empty()) text += " for " + year;
  if (!details.empty()) text += " (" + Join(details, ", ") + ")";
  return text + ". These figures are exactly as the leave system holds them today.";
}

std::string ListDevicesAnswer(const ToolOutcome& tool, const std::string& persona) {
  const json& devices = tool.result.is_array() ? tool.result
                        : tool.result.is_object() && tool.result.contains("devices")
                            ? tool.result["devices"]
                            : json();
  std::vector<std::string> items;
  if (devices.is_array()) {
    for (const json& device : devices) {
      if (items.size() == 20) break;
      std::string name = FirstField(device, {"name", "model"});
      if (name.empty()) name = "a device";
      std::vector<std::string> details;
      if (std::string v = Field(device, "type"); !v.empty()) details.push_back(v);
      if (std::string v = Field(device, "asset"); !v.empty()) details.push_back("asset " + v);
      if (std::string v = FirstField(device, {"issued", "issue_date"}); !v.empty())
        details.push_back("issued " + v);
      items.push_back(details.empty() ? name : name + " (" + Join(details, ", ") + ")");
    }
  }
  if (items.empty()) return ForAccount(persona) + ", there are no devices registered to you.";
  return ForAccount(persona) + ", these devices are registered to you: " + Join(items, "; ") + ".";
}

std::string ToolAnswer(const AnswerInput& input, const ToolOutcome& tool) {
  const std::string kind = ToolKind(tool);
  if (kind == "open_ticket") return OpenTicketAnswer(tool);
  if (kind == "lookup_ticket") return LookupTicketAnswer(tool);
  if (kind == "leave_balance") return LeaveBalanceAnswer(tool, input.persona);
  if (kind == "list_devices") return ListDevicesAnswer(tool, input.persona);
  std::string name = tool.name.empty() ? "tool" : Clean(tool.name, 60) + " tool";
  return "The " + name + " returned: " + Clean(Dump(tool.result), 300);
}

std::string ToolFailureAnswer(const ToolOutcome& tool) {
  const std::string kind = ToolKind(tool);
  std::string service = "the tool service";
  std::string consequence = "so I couldn't complete that request";
  if (kind == "open_ticket" || kind == "lookup_ticket") {
    service = "the ticket service";
    consequence = kind == "open_ticket" ? "so no ticket has been opened"
                                        : "so I can't tell you the ticket's current status";
  } else if (kind == "leave_balance") {
    service = "the leave service";
    consequence = "so I can't show your leave balance";
  } else if (kind == "list_devices") {
    service = "the device register";
    consequence = "so I can't list your devices";
  }
  std::string error = Clean(tool.error, 120);
  const std::string name = kind.empty() ? "The tool" : "The " + Clean(kind, 60) + " tool";
  return "I could not reach " + service + " just now (" + (error.empty() ? "no answer" : error) +
         "), " + consequence + ". " + name +
         " is unavailable at the moment; please try again later or call the service desk on 4400.";
}

// ---- Retrieved passages -------------------------------------------------------------------------

// The sentence of `text` sharing most terms with the question (the first on ties).
std::string BestSentence(std::string_view text, const std::vector<std::string>& question_terms) {
  std::string best;
  int best_hits = -1;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(". ", start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    std::string sentence(Trim(text.substr(start, end - start)));
    int hits = 0;
    for (const std::string& term : SearchTerms(sentence))
      hits += std::count(question_terms.begin(), question_terms.end(), term) > 0 ? 1 : 0;
    if (!sentence.empty() && hits > best_hits) {
      best = sentence;
      best_hits = hits;
    }
    start = end + 1;
  }
  return EndSentence(best);
}

std::string GroundedAnswer(const AnswerInput& input, bool after_tool) {
  static constexpr std::array<const char*, 3> kLeads = {
      "Here is what our documentation says.",
      "This is covered in the company guidance.",
      "Based on the relevant internal article:",
  };
  const Passage& first = input.passages[0];
  std::string text = after_tool ? "The relevant guidance:" : Pick(kLeads, input.seed);
  text += " " + first.text + " Source: " + first.document->title + ".";
  if (input.passages.size() > 1 && input.passages[1].score >= first.score / 2) {
    const Passage& second = input.passages[1];
    std::string body = second.text;
    const std::string mark = " [" + second.document->canary + "]";
    if (!second.document->canary.empty() && body.ends_with(mark))
      body.resize(body.size() - mark.size());
    std::string sentence = BestSentence(body, SearchTerms(input.question));
    if (!second.document->canary.empty()) sentence += mark;
    text += " See also " + second.document->title + ": " + sentence;
  }
  return text;
}

// ---- No retrieval -----------------------------------------------------------------------------

// "14:00 UK time is 15:00 in Rotterdam" for a question naming a time.
std::string TimeDifferenceAnswer(const std::string& question) {
  static const RE2 kClock(R"((\b([01]?[0-9]|2[0-3])[:.]([0-5][0-9])\b))");
  std::string text =
      "The Netherlands is one hour ahead of the UK all year round, because both change their "
      "clocks on the same dates.";
  std::string whole, hour_text, minutes;
  if (RE2::PartialMatch(question, kClock, &whole, &hour_text, &minutes)) {
    const int hour = (std::stoi(hour_text) + 1) % 24;
    text = whole + " UK time is " + (hour < 10 ? "0" : "") + std::to_string(hour) + ":" + minutes +
           " in Rotterdam. " + text;
  }
  return text;
}

// Only the dates and the colleague's name are taken from the question, and only in these shapes.
std::string OutOfOfficeAnswer(const std::string& question) {
  static const std::string kDay =
      "[0-9]{1,2} (?:January|February|March|April|May|June|July|August|September|October|"
      "November|December)";
  static const RE2 kDates("(" + kDay + ") to (" + kDay + ")");
  static const RE2 kCover(R"(([A-Z][a-z]+ [A-Z][a-z]+) is covering)");
  std::string dates = "[first day] to [last day]";
  std::string cover = "[colleague]";
  std::string first, last, name;
  if (RE2::PartialMatch(question, kDates, &first, &last)) dates = first + " to " + last;
  if (RE2::PartialMatch(question, kCover, &name)) cover = name;
  const std::string message =
      "Thank you for your e-mail. I am out of the office from " + dates +
      " and will not be reading e-mail while I am away. For anything urgent, please contact " +
      cover + ", who is covering for me. I will reply to your message when I return.";
  return "Here is a polite out-of-office message: \"" + message + "\"";
}

std::string SoftenAnswer(const std::string& question) {
  static const RE2 kWeekday(R"((?i)\b(Monday|Tuesday|Wednesday|Thursday|Friday)\b)");
  std::string day;
  const std::string when =
      RE2::PartialMatch(question, kWeekday, &day) ? "by " + day : "by the deadline";
  return "Here is a friendlier version: \"Hi, could you send this over " + when +
         "? It would really help me keep things on track. If anything might hold it up, let me "
         "know and I'll see how I can help. Thanks!\" It keeps the request and the deadline but "
         "drops the demanding tone.";
}

// Deliberately without figures: the company's own minimum length is a company-specific fact.
constexpr const char* kPassphraseText =
    "Make it long rather than complicated: string together several random, unrelated words and "
    "picture a silly scene that links them, so it is easy to recall. Avoid song lyrics, quotes, "
    "names, dates and anything about you, and never reuse it on another site.";

// A general office question the bare model can answer: it matches when the lower-cased question
// holds a word of every group.
struct GeneralTopic {
  std::vector<std::vector<std::string_view>> groups;
  const char* text = nullptr;                            // the answer, or
  std::string (*compose)(const std::string&) = nullptr;  // builds it from the question
};

const std::vector<GeneralTopic>& GeneralTopics() {
  static const std::vector<GeneralTopic> kTopics = {
      {.groups = {{"phishing"}},
       .text = "Phishing is a fraudulent message (an e-mail, text, chat or call) that pretends to "
               "come from someone you trust, to trick you into clicking a link, opening an "
               "attachment, giving away a password or code, or making a payment. Warning signs "
               "are urgency, unexpected requests, sender or link addresses that don't quite "
               "match, and any request for your credentials. If in doubt, don't click: report "
               "it."},
      {.groups = {{"out-of-office", "out of office"}}, .compose = OutOfOfficeAnswer},
      {.groups = {{"lock"}, {"screen", "computer", "shortcut"}},
       .text = "Press Windows key + L to lock your screen straight away. Ctrl+Alt+Del and then "
               "Lock does the same."},
      {.groups = {{"screenshot", "snip"}},
       .text = "Press Windows key + Shift + S to open the Snipping Tool, then drag to select the "
               "part of the screen you want. The snip is copied to the clipboard, so you can "
               "paste it straight into an e-mail or document, or click the notification to save "
               "it."},
      {.groups = {{"excel", "spreadsheet", "vlookup", "xlookup"}},
       .text = "Use XLOOKUP: =XLOOKUP(A2, Sheet2!A:A, Sheet2!C:C, \"Not found\") looks for the "
               "value in A2 in column A of Sheet2 and returns the matching value from column C. "
               "In older versions of Excel, VLOOKUP does the same job. If matches fail, check for "
               "stray spaces or numbers stored as text."},
      {.groups = {{"what time", "time difference", "time zone", "timezone", ":00", ":30"},
                  {"rotterdam", "netherlands", "dutch", "amsterdam"}},
       .compose = TimeDifferenceAnswer},
      {.groups = {{"blunt", "soften", "more polite", "sound nicer", "reword", "rephrase"}},
       .compose = SoftenAnswer},
      {.groups = {{"dutch"}, {"say", "greet", "thank"}},
       .text = "Good morning is \"goedemorgen\", and thank you is \"dank je wel\" (informal) or "
               "\"dank u wel\" (formal). \"Hallo\" works as hello at any time of day."},
      {.groups = {{"agenda"}},
       .text = "A short kick-off agenda: welcome and introductions; goals and scope; roles and "
               "responsibilities; timeline and milestones; risks and open questions; actions and "
               "the next meeting. Give each item a few minutes and leave time at the end for "
               "actions."},
      {.groups = {{"pdf"}},
       .text = "In Word, choose File > Save As (or File > Export), pick PDF as the file type and "
               "save. A PDF is harder to edit than a Word file but not impossible, so add a "
               "password or restrict editing in Acrobat if that matters."},
      {.groups = {{"passphrase", "strong password", "good password"}}, .text = kPassphraseText},
      {.groups = {{"password"}, {"guess", "remember"}}, .text = kPassphraseText},
  };
  return kTopics;
}

// A company-specific question without company documents: plausible, generic, and free of figures.
std::string VagueAnswer(const AnswerInput& input, const std::string& lower) {
  std::string topic = "this";
  std::string place = "company intranet";
  if (HasAny(lower, {"leave", "holiday", "sick", "maternity", "paternity", "pay", "salary",
                     "starter", "grievance", "contract"})) {
    topic = "leave, pay and other people matters";
    place = "HR intranet";
  } else if (HasAny(lower, {"expense", "claim", "hotel", "travel", "mileage", "train", "flight"})) {
    topic = "expenses and travel";
    place = "finance pages on the intranet";
  } else if (HasAny(lower, {"password", "vpn", "laptop", "printer", "print", "software", "mfa",
                            "authenticator", "phone", "email", "e-mail", "account", "p1"})) {
    topic = "IT equipment and access";
    place = "IT intranet";
  }
  static constexpr std::array<const char*, 4> kTemplates = {
      "Policies like this usually depend on your employer. In many companies the rules for {topic} "
      "are set out in an internal policy, and the details vary from one organisation to another. "
      "Please check your {place} for the exact rule.",
      "I don't have access to your company's own documents, so I can only answer in general terms: "
      "most organisations have a standard process for {topic}, but the specifics differ. Your "
      "{place} or the service desk will have the exact rule.",
      "That depends on your organisation's own policy, which I can't see. Usually {topic} is "
      "handled by a set procedure with its own limits and deadlines; please look it up on your "
      "{place} or ask your line manager.",
      "Each company handles {topic} a little differently, so I can't give you the exact rule here. "
      "A good first step is your {place}; if it isn't clear there, ask the service desk.",
  };
  std::string text = Pick(kTemplates, input.seed);
  text.replace(text.find("{topic}"), 7, topic);
  text.replace(text.find("{place}"), 7, place);
  return text;
}

std::string UnassistedAnswer(const AnswerInput& input) {
  const std::string lower = AsciiLower(input.question);
  for (const GeneralTopic& topic : GeneralTopics()) {
    if (std::all_of(topic.groups.begin(), topic.groups.end(),
                    [&](const auto& group) { return HasAny(lower, group); }))
      return topic.compose ? topic.compose(input.question) : topic.text;
  }
  return VagueAnswer(input, lower);
}

bool IsTokenWordByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u > 0x20 && u != 0x7f && !std::ispunct(u));
}

}  // namespace

std::string ComposeAnswer(const AnswerInput& input) {
  const bool grounded = input.retrieval && !input.passages.empty();
  if (!input.tool) return grounded ? GroundedAnswer(input, false) : UnassistedAnswer(input);
  const ToolOutcome& tool = *input.tool;
  if (!tool.ok) return ToolFailureAnswer(tool);
  if (std::optional<std::string> reply = JsonReply(input.question, tool)) return *reply;
  std::string text = ToolAnswer(input, tool);
  if (grounded) text += " " + GroundedAnswer(input, true);
  return text;
}

std::string RefusalAnswer(std::string_view what) {
  std::string subject = Clean(what, 120);
  return "I'm sorry, but you're not authorised to see " +
         (subject.empty() ? std::string("that information") : subject) +
         ", so I cannot share it. If you need it for your work, please ask your HR business "
         "partner "
         "or the owner of the material.";
}

std::vector<std::string> SplitIntoTokens(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size() && !IsTokenWordByte(text[i]))
    ++i;
  std::string pending(text.substr(0, i));  // leading separators go with the first word
  while (i < text.size()) {
    const size_t word_start = i;
    while (i < text.size() && IsTokenWordByte(text[i]))
      ++i;
    const std::string_view word = text.substr(word_start, i - word_start);
    const size_t separator_start = i;
    while (i < text.size() && !IsTokenWordByte(text[i]))
      ++i;
    const std::string_view separator = text.substr(separator_start, i - separator_start);
    // Code points, so that no piece ends inside a UTF-8 sequence.
    std::vector<size_t> starts = {0};
    for (size_t at = 1; at < word.size(); ++at)
      if ((static_cast<unsigned char>(word[at]) & 0xc0) != 0x80) starts.push_back(at);
    const size_t piece = starts.size() > 12 ? 8 : starts.size();
    for (size_t first = 0; first < starts.size(); first += piece) {
      const size_t begin = starts[first];
      const size_t end = first + piece < starts.size() ? starts[first + piece] : word.size();
      tokens.push_back(pending + std::string(word.substr(begin, end - begin)));
      pending.clear();
    }
    tokens.back() += separator;
  }
  if (!pending.empty()) tokens.push_back(pending);  // text of separators only
  return tokens;
}

std::string FillerToken(uint64_t seed, size_t index) {
  return std::string(kCommonWords[Mix64(seed ^ Mix64(index)) % kCommonWords.size()]) + " ";
}

}  // namespace stagegate::sim

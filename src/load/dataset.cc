#include "load/dataset.h"

#include <algorithm>
#include <limits>

#include "base/files.h"
#include "base/hashing.h"
#include "base/strings.h"
#include "base/token_estimate.h"
#include "load/json_line.h"

namespace stagegate::load {
namespace {

using nlohmann::json;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// One entry's JSON text and the line it starts on.
struct Unit {
  int64_t line = 0;
  std::string_view text;
};

class Problems {
 public:
  void Add(int64_t line, std::string message) {
    if (kept_.size() < kMaxDatasetProblems) {
      kept_.push_back({line, std::move(message)});
    } else {
      ++more_;
    }
  }
  bool empty() const { return kept_.empty(); }
  void MoveTo(DatasetLoad& load) {
    std::stable_sort(kept_.begin(), kept_.end(),
                     [](const auto& a, const auto& b) { return a.line < b.line; });
    load.problems = std::move(kept_);
    load.more_problems = more_;
  }

 private:
  std::vector<DatasetProblem> kept_;
  int64_t more_ = 0;
};

int64_t CountNewlines(std::string_view text) {
  return std::count(text.begin(), text.end(), '\n');
}

// The non-blank lines of `text`, each a unit. Lines that are not UTF-8 are problems instead.
std::vector<Unit> SplitLines(std::string_view text, Problems& problems) {
  std::vector<Unit> units;
  ForEachLine(text, [&](int64_t number, std::string_view line) {
    if (std::optional<size_t> bad = FirstInvalidUtf8(line))
      problems.Add(number, "not UTF-8 (byte " + std::to_string(*bad + 1) + " of the line)");
    else
      units.push_back({number, line});
  });
  return units;
}

size_t SkipSpace(std::string_view text, size_t at, int64_t& line) {
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '\n') ++line;
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
  }
  return at;
}

// The elements of the JSON array `text` (which starts with '['), found by tracking strings and
// nesting only: each element is parsed on its own afterwards, so that its problems name the line
// it starts on, which nlohmann's parser does not tell.
std::vector<Unit> SplitArray(std::string_view text, Problems& problems) {
  std::vector<Unit> units;
  int64_t line = 1;
  size_t at = SkipSpace(text, 0, line) + 1;  // past the '['
  for (bool first = true;; first = false) {
    at = SkipSpace(text, at, line);
    if (at < text.size() && text[at] == ']' && first) {
      ++at;
      break;
    }
    const size_t start = at;
    const int64_t start_line = line;
    int depth = 0;
    bool in_string = false;
    for (; at < text.size(); ++at) {
      const char c = text[at];
      if (c == '\n') ++line;
      if (in_string) {
        if (c == '\\' && at + 1 < text.size() && text[at + 1] != '\n') {
          ++at;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        // A stray '}' stays in its entry, whose parse names it.
        if (depth == 0 && c == ']') break;
        if (depth > 0) --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    std::string_view element = text.substr(start, at - start);
    while (!element.empty() &&
           std::string_view(" \t\r\n").find(element.back()) != std::string_view::npos)
      element.remove_suffix(1);
    if (at >= text.size()) {
      problems.Add(start_line, "the array does not close: this entry or the file is cut short");
      return units;
    }
    if (element.empty()) {
      problems.Add(start_line, text[at] == ']' ? "a ',' before the array's ']'"
                                               : "an empty entry: two ',' in a row");
    } else {
      units.push_back({start_line, element});
    }
    if (text[at++] == ']') break;
  }
  at = SkipSpace(text, at, line);
  if (at < text.size()) problems.Add(line, "text after the array's closing ']'");
  return units;
}

// An optional "id": a string or an integer, kept as text.
void ReadId(const json& object, DatasetEntry& entry, std::vector<std::string>& problems) {
  const auto id = object.find("id");
  if (id == object.end() || id->is_null()) return;
  if (id->is_string()) {
    entry.id = id->get<std::string>();
  } else if (id->is_number_integer()) {
    entry.id = id->dump();
  } else {
    problems.push_back("'id' must be a string or an integer, got " + ShownJson(*id));
  }
}

// An integer from 1 to kMaxDatasetTokens.
std::optional<int64_t> ReadTokenCount(const json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{kMaxDatasetTokens})
    return std::nullopt;
  const int64_t number = value.get<int64_t>();
  if (number < 1 || number > kMaxDatasetTokens) return std::nullopt;
  return number;
}

void ReadOutputTokens(const json& object, DatasetEntry& entry, std::vector<std::string>& problems) {
  const auto max_tokens = object.find("max_tokens");
  const auto output_tokens = object.find("output_tokens");
  if (max_tokens != object.end() && output_tokens != object.end()) {
    problems.push_back("give 'max_tokens' or 'output_tokens', not both");
    return;
  }
  const auto given = max_tokens != object.end() ? max_tokens : output_tokens;
  if (given == object.end()) return;
  entry.output_tokens = ReadTokenCount(*given);
  if (!entry.output_tokens)
    problems.push_back("'" + given.key() + "' must be an integer from 1 to " +
                       std::to_string(kMaxDatasetTokens) + ", got " + ShownJson(*given));
}

// A {"prompt"} or {"messages"} line.
void ReadPromptEntry(const json& object, DatasetEntry& entry, std::vector<std::string>& problems) {
  const auto prompt = object.find("prompt");
  const auto messages = object.find("messages");
  if (prompt != object.end() && messages != object.end()) {
    problems.push_back("give 'prompt' or 'messages', not both");
  } else if (prompt != object.end()) {
    if (!prompt->is_string() || prompt->get_ref<const std::string&>().empty())
      problems.push_back("'prompt' must be a string that is not empty, got " + ShownJson(*prompt));
    else
      entry.prompt = prompt->get<std::string>();
  } else if (messages != object.end()) {
    if (!messages->is_array() || messages->empty())
      problems.push_back("'messages' must be a list of {\"role\", \"content\"} objects, got " +
                         ShownJson(*messages));
    for (size_t i = 0; messages->is_array() && i < messages->size(); ++i) {
      const json& message = (*messages)[i];
      const std::string where = "'messages[" + std::to_string(i) + "]'";
      const auto role = message.is_object() ? message.find("role") : message.end();
      const auto content = message.is_object() ? message.find("content") : message.end();
      if (!message.is_object() || role == message.end() || !role->is_string() ||
          content == message.end() || !content->is_string()) {
        problems.push_back(where + " must be an object with a string 'role' and 'content', got " +
                           ShownJson(message));
        continue;
      }
      const std::string& name = role->get_ref<const std::string&>();
      if (name != "system" && name != "developer" && name != "user" && name != "assistant" &&
          name != "tool") {
        problems.push_back(where + ": unknown role " + ShownJson(*role) +
                           " (system, developer, user, assistant or tool)");
        continue;
      }
      entry.messages.push_back({name, content->get<std::string>()});
    }
    if (problems.empty() && !entry.messages.empty() && entry.messages.back().role != "user")
      problems.push_back(
          "'messages' must end in a user turn (the one the reply answers); the "
          "last is " +
          entry.messages.back().role + "'s");
  } else {
    problems.push_back("expected 'prompt' or 'messages'");
  }
  ReadId(object, entry, problems);
  ReadOutputTokens(object, entry, problems);
}

std::optional<std::string_view> ShareGptRole(std::string_view from) {
  if (from == "human" || from == "user") return "user";
  if (from == "gpt" || from == "assistant" || from == "chatgpt" || from == "bing" || from == "bard")
    return "assistant";
  if (from == "system") return "system";
  return std::nullopt;
}

// A {"conversations"} entry; `no_user_turn` is set when it has none (skipped, not a problem).
void ReadShareGptEntry(const json& object, const TokenCounter& count, DatasetEntry& entry,
                       std::vector<std::string>& problems, bool& no_user_turn) {
  const auto conversations = object.find("conversations");
  if (conversations == object.end() || !conversations->is_array()) {
    problems.push_back(conversations == object.end()
                           ? std::string("missing 'conversations'")
                           : "'conversations' must be a list of {\"from\", \"value\"} objects, "
                             "got " +
                                 ShownJson(*conversations));
    return;
  }
  std::vector<DatasetMessage> turns;
  for (size_t i = 0; i < conversations->size(); ++i) {
    const json& turn = (*conversations)[i];
    const std::string where = "'conversations[" + std::to_string(i) + "]'";
    const auto from = turn.is_object() ? turn.find("from") : turn.end();
    const auto value = turn.is_object() ? turn.find("value") : turn.end();
    if (!turn.is_object() || from == turn.end() || !from->is_string() || value == turn.end() ||
        !value->is_string()) {
      problems.push_back(where + " must be an object with a string 'from' and 'value', got " +
                         ShownJson(turn));
      continue;
    }
    std::optional<std::string_view> role = ShareGptRole(from->get_ref<const std::string&>());
    if (!role) {
      problems.push_back(where + ": 'from' must be human, gpt or system, got " + ShownJson(*from));
      continue;
    }
    turns.push_back({std::string(*role), value->get<std::string>()});
  }
  ReadId(object, entry, problems);
  if (!problems.empty()) return;
  const auto is_user = [](const DatasetMessage& m) { return m.role == "user"; };
  const auto first_user = std::find_if(turns.begin(), turns.end(), is_user);
  if (first_user == turns.end()) {
    no_user_turn = true;
    return;
  }
  if (first_user + 1 != turns.end() && first_user[1].role == "assistant")
    entry.output_tokens = std::clamp<int64_t>(count(first_user[1].content), 1, kMaxDatasetTokens);
  const auto last_user = std::find_if(turns.rbegin(), turns.rend(), is_user).base();
  turns.erase(last_user, turns.end());
  entry.messages = std::move(turns);
}

// Reads one entry into `dataset` (kept, skipped or left out by a filter), or its problems.
void ReadUnit(const Unit& unit, const DatasetOptions& options, const TokenCounter& count,
              Dataset& dataset, Problems& problems) {
  ParsedJson parsed = ParseJson(unit.text);
  if (!parsed.problem.empty()) {
    const size_t at = std::min(parsed.byte > 0 ? parsed.byte - 1 : 0, unit.text.size());
    const std::string_view before = unit.text.substr(0, at);
    const size_t newline = before.rfind('\n');
    const size_t column = newline == std::string_view::npos ? at + 1 : at - newline;
    problems.Add(unit.line + CountNewlines(before),
                 parsed.byte > 0 ? "column " + std::to_string(column) + ": " + parsed.problem
                                 : parsed.problem);
    return;
  }
  if (!parsed.value.is_object()) {
    problems.Add(unit.line, "expected a JSON object, got " + ShownJson(parsed.value));
    return;
  }
  DatasetEntry entry{.line = unit.line};
  std::vector<std::string> found;
  bool no_user_turn = false;
  if (dataset.format == DatasetFormat::kShareGpt)
    ReadShareGptEntry(parsed.value, count, entry, found, no_user_turn);
  else
    ReadPromptEntry(parsed.value, entry, found);
  size_t bytes = entry.prompt.size();
  for (const DatasetMessage& message : entry.messages)
    bytes += message.content.size();
  if (found.empty() && bytes > options.max_prompt_bytes)
    found.push_back("the prompt is " + std::to_string(bytes) + " bytes, over the limit of " +
                    DescribeBytes(options.max_prompt_bytes));
  for (std::string& problem : found)
    problems.Add(unit.line, std::move(problem));
  ++dataset.read;
  if (!found.empty()) return;
  if (no_user_turn) {
    ++dataset.without_user_turn;
    return;
  }
  if (entry.messages.empty()) {
    entry.input_tokens = count(entry.prompt);
  } else {
    for (const DatasetMessage& message : entry.messages)
      entry.input_tokens += count(message.content);
  }
  if (options.min_tokens && entry.input_tokens < *options.min_tokens) {
    ++dataset.too_short;
  } else if (options.max_tokens && entry.input_tokens > *options.max_tokens) {
    ++dataset.too_long;
  } else if (options.max_output_tokens && entry.output_tokens &&
             *entry.output_tokens > *options.max_output_tokens) {
    ++dataset.too_much_output;
  } else {
    dataset.entries.push_back(std::move(entry));
  }
}

}  // namespace

std::string_view DatasetFormatName(DatasetFormat format) {
  return format == DatasetFormat::kShareGpt ? "sharegpt" : "jsonl";
}

std::optional<DatasetFormat> DatasetFormatFromName(std::string_view name) {
  if (name == "jsonl") return DatasetFormat::kJsonl;
  if (name == "sharegpt") return DatasetFormat::kShareGpt;
  return std::nullopt;
}

DatasetFormat DetectDatasetFormat(std::string_view text) {
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '[' ? DatasetFormat::kShareGpt
                                                               : DatasetFormat::kJsonl;
}

DatasetLoad ParseDataset(const std::string& path, std::string_view text,
                         const DatasetOptions& options) {
  DatasetLoad load{.path = path};
  Problems problems;
  if (text.size() > options.max_file_bytes) {
    problems.Add(0, "the file is larger than " + DescribeBytes(options.max_file_bytes));
    problems.MoveTo(load);
    return load;
  }
  const std::string sha256 = Sha256Hex(text);
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  Dataset dataset{.path = path,
                  .format = options.format.value_or(DetectDatasetFormat(text)),
                  .estimated = !options.count_tokens,
                  .sha256 = sha256};
  const TokenCounter count = options.count_tokens ? options.count_tokens : EstimateTokens;
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool array = first != std::string_view::npos && text[first] == '[';
  if (array && dataset.format == DatasetFormat::kJsonl) {
    problems.Add(1 + CountNewlines(text.substr(0, first)),
                 "a JSON array is the sharegpt format; the jsonl format is one object a line");
    problems.MoveTo(load);
    return load;
  }
  std::vector<Unit> units;
  if (array) {
    // A byte that is not UTF-8 can sit in any entry: name its lines, then read nothing else.
    if (FirstInvalidUtf8(text))
      (void)SplitLines(text, problems);
    else
      units = SplitArray(text, problems);
  } else {
    units = SplitLines(text, problems);
  }

  if (static_cast<int64_t>(units.size()) > options.max_entries) {
    problems.Add(units[static_cast<size_t>(options.max_entries)].line,
                 "more entries than the limit of " + std::to_string(options.max_entries));
    units.resize(static_cast<size_t>(options.max_entries));
  }
  for (const Unit& unit : units)
    ReadUnit(unit, options, count, dataset, problems);
  if (problems.empty() && dataset.entries.empty())
    problems.Add(0, dataset.read == 0 ? std::string("the dataset has no entries")
                                      : "no entry is left: " + dataset.Describe(options));
  if (problems.empty()) {
    load.dataset = std::move(dataset);
  } else {
    problems.MoveTo(load);
  }
  return load;
}

DatasetLoad LoadDataset(const std::string& path, const DatasetOptions& options) {
  Result<std::string> text = ReadFile(path, options.max_file_bytes);
  if (!text.ok()) {
    DatasetLoad load{.path = path};
    load.problems.push_back({0, ReadFailure(text.status(), path)});
    return load;
  }
  return ParseDataset(path, *text, options);
}

std::string DatasetLoad::Message() const {
  std::vector<std::string> lines;
  for (const DatasetProblem& problem : problems)
    lines.push_back(path + (problem.line > 0 ? ":" + std::to_string(problem.line) : "") + ": " +
                    problem.message);
  if (more_problems > 0)
    lines.push_back(path + ": " + std::to_string(more_problems) + " more problems not shown");
  return Join(lines, "\n");
}

std::string Dataset::Describe(const DatasetOptions& options) const {
  std::vector<std::string> notes;
  if (without_user_turn > 0)
    notes.push_back(std::to_string(without_user_turn) + " without a user turn skipped");
  if (too_short > 0)
    notes.push_back(std::to_string(too_short) + " under " + std::to_string(*options.min_tokens) +
                    " tokens left out");
  if (too_long > 0)
    notes.push_back(std::to_string(too_long) + " over " + std::to_string(*options.max_tokens) +
                    " tokens left out");
  if (too_much_output > 0)
    notes.push_back(std::to_string(too_much_output) + " asking for over " +
                    std::to_string(*options.max_output_tokens) + " output tokens left out");
  notes.push_back(estimated ? "tokens estimated as bytes / 4" : "tokens counted");
  return std::to_string(entries.size()) + " of " + std::to_string(read) + " entries of " + path +
         " (" + std::string(DatasetFormatName(format)) + "; " + Join(notes, ", ") + ")";
}

std::string DatasetRequestBody(http::RequestBodyOptions body, const DatasetEntry& entry) {
  if (entry.output_tokens) body.max_tokens = entry.output_tokens;
  if (entry.messages.empty() || body.api != http::ApiKind::kChat)
    return http::BuildRequestBody(body, entry.text());
  json messages = json::array();
  for (const DatasetMessage& message : entry.messages)
    messages.push_back({{"role", message.role}, {"content", message.content}});
  return http::BuildChatBody(body, messages);
}

size_t DatasetIndex(uint64_t seed, int64_t sequence, size_t count) {
  const uint64_t n = count;
  const uint64_t position = static_cast<uint64_t>(sequence) % n;
  const uint64_t round = static_cast<uint64_t>(sequence) / n;
  if (n == 1) return 0;
  // A keyed permutation of [0, 4^half) that covers [0, n): a four-round Feistel network, walked
  // until it lands below n (at most four steps on average). Pure, so any thread or shard draws
  // the same entry for a sequence.
  int bits = 1;
  while ((uint64_t{1} << bits) < n)
    ++bits;
  const int half = (bits + 1) / 2;
  const uint64_t mask = (uint64_t{1} << half) - 1;
  const uint64_t key = Mix64(Mix64(seed) ^ Mix64(round ^ 0x5851f42d4c957f2dULL));
  uint64_t x = position;
  do {
    uint64_t left = x >> half, right = x & mask;
    for (uint64_t r = 0; r < 4; ++r) {
      const uint64_t next = left ^ (Mix64(key + r * 0x9e3779b97f4a7c15ULL + right) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= n);
  return static_cast<size_t>(x);
}

}  // namespace stagegate::load

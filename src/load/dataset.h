#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "http/openai_request.h"

namespace stagegate::load {

/// How a dataset file is laid out.
enum class DatasetFormat {
  kJsonl,     // one {"prompt": ...} or {"messages": [...]} object a line
  kShareGpt,  // a JSON array (or JSONL) of {"conversations": [{"from", "value"}, ...]}
};

/// "jsonl" or "sharegpt".
std::string_view DatasetFormatName(DatasetFormat format);
std::optional<DatasetFormat> DatasetFormatFromName(std::string_view name);

/// The format of a file whose text is `text` when none is given: a ShareGPT array when its first
/// character other than white space (or a UTF-8 byte-order mark) is '[', else JSONL.
DatasetFormat DetectDatasetFormat(std::string_view text);

struct DatasetMessage {
  std::string role;  // "system", "user" or "assistant" (ShareGPT's human and gpt mapped)
  std::string content;

  bool operator==(const DatasetMessage&) const = default;
};

/// One prompt of a dataset: either `prompt` (sent as one user message, or as the prompt of a
/// completions request) or `messages` (a conversation ending in a user turn, sent as is).
struct DatasetEntry {
  int64_t line = 0;  // where it starts in the file, from 1
  std::string id;    // "" when the file gives none
  std::string prompt;
  std::vector<DatasetMessage> messages;  // empty for a prompt entry
  int64_t input_tokens = 0;              // of every message's content, or of the prompt
  std::optional<int64_t> output_tokens;  // to ask for (max_tokens), when the file says

  /// The text a completions request sends: the prompt, or the last (user) message.
  const std::string& text() const { return messages.empty() ? prompt : messages.back().content; }
};

/// Counts the tokens of a text; an estimate or a real tokenizer's count.
using TokenCounter = std::function<int64_t(std::string_view)>;

inline constexpr size_t kMaxDatasetFileBytes = size_t{1} << 30;
inline constexpr size_t kMaxDatasetPromptBytes = size_t{4} << 20;  // per entry, all its turns
inline constexpr int64_t kMaxDatasetEntries = 10'000'000;
inline constexpr int64_t kMaxDatasetTokens = 1'000'000;  // an entry's max_tokens at most
/// The most problems LoadDataset keeps; past it they are counted.
inline constexpr size_t kMaxDatasetProblems = 100;

struct DatasetOptions {
  std::optional<DatasetFormat> format;       // nullopt: DetectDatasetFormat
  std::optional<int64_t> min_tokens;         // entries with fewer prompt tokens are left out
  std::optional<int64_t> max_tokens;         // entries with more prompt tokens are left out
  std::optional<int64_t> max_output_tokens;  // entries asking for more are left out
  TokenCounter count_tokens;                 // empty: EstimateTokens (bytes / 4, rounded up)
  size_t max_file_bytes = kMaxDatasetFileBytes;
  size_t max_prompt_bytes = kMaxDatasetPromptBytes;
  int64_t max_entries = kMaxDatasetEntries;
};

/// A problem of one line (or of the file as a whole, line 0).
struct DatasetProblem {
  int64_t line = 0;
  std::string message;

  bool operator==(const DatasetProblem&) const = default;
};

struct Dataset {
  std::string path;
  DatasetFormat format = DatasetFormat::kJsonl;
  bool estimated = true;              // token counts are EstimateTokens's, not a tokenizer's
  std::string sha256;                 // of the file's bytes, so that a run records what it sent
  std::vector<DatasetEntry> entries;  // in file order, after the filters
  int64_t read = 0;                   // entries read before the filters
  int64_t without_user_turn = 0;      // ShareGPT entries skipped: no human turn
  int64_t too_short = 0, too_long = 0, too_much_output = 0;  // left out by the filters

  /// One line for people: "2 of 3 entries of s.json (sharegpt; 1 without a user turn skipped,
  /// tokens estimated as bytes / 4)"; `options` gives the filters' limits.
  std::string Describe(const DatasetOptions& options) const;
};

/// What LoadDataset found: the dataset when there was no problem at all.
struct DatasetLoad {
  std::string path;
  std::optional<Dataset> dataset;
  std::vector<DatasetProblem> problems;  // sorted by line; at most kMaxDatasetProblems
  int64_t more_problems = 0;             // past those kept

  /// Every problem as "path:line: message" (or "path: message" for the file), one a line, and
  /// a last line counting those not kept.
  std::string Message() const;
};

/// Reads the dataset at `path`. Every bad line or entry is a problem naming its line (for a JSON
/// array, the line the entry starts on): text that is not UTF-8, not JSON, not an object, a
/// missing or mistyped field, a prompt over max_prompt_bytes, an output length out of range, more
/// than max_entries entries. A file that cannot be read or is larger than max_file_bytes is one
/// problem at line 0, as is a file with no entry left after the filters. Entries that pass every
/// check but not a filter are counted, not problems. Never throws.
DatasetLoad LoadDataset(const std::string& path, const DatasetOptions& options);

/// LoadDataset of text already read; `path` only names it in problems.
DatasetLoad ParseDataset(const std::string& path, std::string_view text,
                         const DatasetOptions& options);

/// The entry request `sequence` sends, out of `count` entries: a pure function of (seed,
/// sequence). Requests 0 to count-1 take every entry once in an order drawn from the seed; each
/// further round of count requests takes them all again in a new order. count must be > 0.
size_t DatasetIndex(uint64_t seed, int64_t sequence, size_t count);

/// The body of a request for `entry`: a chat request sends its messages as they are (a prompt as
/// one user message), a completions request its text(). max_tokens is the entry's output length
/// when it has one, else `body`'s.
std::string DatasetRequestBody(http::RequestBodyOptions body, const DatasetEntry& entry);

}  // namespace stagegate::load

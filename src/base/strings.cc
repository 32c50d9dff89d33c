#include "base/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace stagegate {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  // A third of the word's length (at least one edit, at most three) separates a typo from a
  // different word well enough for suggestions.
  size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    size_t distance = EditDistance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string match = ClosestMatch(word, candidates);
  return match.empty() ? "" : " (did you mean '" + match + "'?)";
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool HasControlCharacter(std::string_view text, bool allow_line_breaks) {
  return std::any_of(text.begin(), text.end(), [allow_line_breaks](unsigned char c) {
    if (allow_line_breaks && (c == '\t' || c == '\r' || c == '\n')) return false;
    return c < 0x20 || c == 0x7f;
  });
}

std::string_view Trim(std::string_view text) {
  const char* kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

std::string FormatNumber(double value, int max_decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", max_decimals, value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0')
      text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string FormatMilliseconds(double ms) {
  return FormatNumber(ms, ms < 1 ? 3 : ms < 10 ? 2 : 1);
}

std::string FormatMicroseconds(double us) {
  if (us < 1000) return FormatNumber(us, us < 10 ? 1 : 0) + " µs";
  if (us < 1e6) return FormatMilliseconds(us / 1000) + " ms";
  return FormatNumber(us / 1e6, 2) + " s";
}

namespace {

// Whether a spreadsheet would read `text` as a formula: it starts with = + - @, a tab or a CR
// (OWASP's list), and is not simply a number such as -1.5.
bool FormulaLike(std::string_view text) {
  if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos)
    return false;
  char* end = nullptr;
  const std::string copy(text);
  std::strtod(copy.c_str(), &end);
  const bool number = (text.front() == '-' || text.front() == '+') && end != nullptr &&
                      *end == '\0' && copy.find_first_of("xXnNiI") == std::string::npos;
  return !number;
}

}  // namespace

std::string CsvField(std::string_view text) {
  const std::string cell = FormulaLike(text) ? "'" + std::string(text) : std::string(text);
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string field = "\"";
  for (char c : cell) {
    if (c == '"') field += '"';
    field += c;
  }
  return field + "\"";
}

std::vector<CsvRecord> ParseCsv(std::string_view text, int& unclosed) {
  unclosed = 0;
  std::vector<CsvRecord> records;
  CsvRecord record{.line = 1};
  std::string field;
  bool quoted = false, any = false;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty()) {
      quoted = any = true;
    } else if (c == ',') {
      record.fields.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        record.fields.push_back(std::move(field));
        records.push_back(std::move(record));
      }
      field.clear();
      any = false;
      // A lone CR ends a record but not a line: lines are counted as editors and sed count them.
      if (text[i] == '\n') ++line;
      record = CsvRecord{.line = line};
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) unclosed = record.line;
  if (any || !field.empty()) {
    record.fields.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

Utf8Sequence NextUtf8Sequence(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {.length = 1, .valid = true};
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {.length = 1, .valid = false};
  }
  for (size_t i = 1; i < length; ++i) {
    if (i >= text.size() || byte(i) < low || byte(i) > high) return {.length = i, .valid = false};
    low = 0x80;
    high = 0xBF;
  }
  return {.length = length, .valid = true};
}

size_t Utf8SequenceLength(std::string_view text) {
  const Utf8Sequence sequence = NextUtf8Sequence(text);
  return sequence.valid ? sequence.length : 0;
}

std::optional<size_t> FirstInvalidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    // Eight ASCII bytes at a time: most text is.
    if (at + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + at, sizeof word);
      if ((word & 0x8080808080808080ULL) == 0) {
        at += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(at));
    if (!sequence.valid) return at;
    at += sequence.length;
  }
  return std::nullopt;
}

std::string ShellWord(const std::string& word) {
  bool bare = !word.empty();
  for (char c : word)
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) ||
                    std::string_view("-_./:=@%+,").find(c) != std::string::npos);
  return bare ? word : "'" + ReplaceAll(word, "'", "'\\''") + "'";
}

uint32_t Utf8CodePoint(std::string_view sequence) {
  const auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(sequence[i]));
  };
  switch (sequence.size()) {
    case 1:
      return byte(0);
    case 2:
      return (byte(0) & 0x1F) << 6 | (byte(1) & 0x3F);
    case 3:
      return (byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F);
    default:
      return (byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 |
             (byte(3) & 0x3F);
  }
}

bool IsLayoutControl(uint32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

namespace {

bool ShownEscaped(uint32_t c) {
  return c < 0x20 || c == 0x7f || IsLayoutControl(c);
}

std::string ByteEscape(unsigned char byte) {
  constexpr char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
}

std::string CodePointEscape(uint32_t c) {
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c == '\t') return "\\t";
  if (c < 0x80) return ByteEscape(static_cast<unsigned char>(c));
  char text[16];
  std::snprintf(text, sizeof text, "\\u{%x}", static_cast<unsigned>(c));
  return text;
}

// What ShownText prints for the sequence at the start of `text`, and how many bytes it takes.
std::pair<std::string, size_t> NextShown(std::string_view text) {
  const Utf8Sequence sequence = NextUtf8Sequence(text);
  if (!sequence.valid) {
    std::string out;
    for (size_t i = 0; i < sequence.length; ++i)
      out += ByteEscape(static_cast<unsigned char>(text[i]));
    return {out, sequence.length};
  }
  const std::string_view piece = text.substr(0, sequence.length);
  const uint32_t c = Utf8CodePoint(piece);
  return {ShownEscaped(c) ? CodePointEscape(c) : std::string(piece), sequence.length};
}

}  // namespace

std::string ShownText(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    auto [piece, length] = NextShown(text.substr(at));
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    at += length;
  }
  if (at < text.size()) out += "... (" + std::to_string(text.size() - at) + " more bytes)";
  return out;
}

bool IsShownAsIs(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(at));
    if (!sequence.valid || ShownEscaped(Utf8CodePoint(text.substr(at, sequence.length))))
      return false;
    at += sequence.length;
  }
  return true;
}

std::optional<std::string> DisplayTextProblem(std::string_view text, bool allow_line_breaks) {
  const auto at = [](const char* what, uint32_t code_point, size_t offset) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(code_point));
    return std::string(what) + " (" + hex + " at byte " + std::to_string(offset + 1) + ")";
  };
  for (size_t offset = 0; offset < text.size();) {
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(offset));
    if (!sequence.valid) return "is not valid UTF-8 (at byte " + std::to_string(offset + 1) + ")";
    const uint32_t c = Utf8CodePoint(text.substr(offset, sequence.length));
    const bool line_break = c == '\t' || c == '\r' || c == '\n';
    if ((c < 0x20 && !(allow_line_breaks && line_break)) || (c >= 0x7F && c <= 0x9F))
      return at("holds a control character", c, offset);
    if (c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
        (c >= 0x2066 && c <= 0x2069))
      return at("holds a bidirectional control character", c, offset);
    if (c == 0x2028 || c == 0x2029) return at("holds a line or paragraph separator", c, offset);
    offset += sequence.length;
  }
  return std::nullopt;
}

bool IsValidUtf8(std::string_view text) {
  return !FirstInvalidUtf8(text);
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(at));
    if (sequence.valid)
      out.append(text.substr(at, sequence.length));
    else
      out.append(kReplacementCharacter);
    at += sequence.length;
  }
  return out;
}

std::string Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes;
  // Back off over continuation bytes (10xxxxxx) to the lead byte, and leave that out too.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return std::string(text.substr(0, end));
}

std::optional<int64_t> ParseWholeNumber(std::string_view text) {
  int64_t value = 0;
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace stagegate

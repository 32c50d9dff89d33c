#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate {

/// Levenshtein distance between a and b (insert, delete, substitute each cost 1).
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a likely typo, else "".
/// Used for "did you mean ...?" suggestions.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

/// `" (did you mean 'x'?)"` when ClosestMatch finds one, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

std::string Join(const std::vector<std::string>& parts, std::string_view separator);
std::vector<std::string> Split(std::string_view text, char separator);
std::string_view Trim(std::string_view text);

/// `text` with A-Z made a-z; every other byte as it is (so UTF-8 passes through).
std::string AsciiLower(std::string_view text);

/// Whether `text` holds a C0 control character or DEL; with `allow_line_breaks`, tab, CR and LF
/// are allowed.
bool HasControlCharacter(std::string_view text, bool allow_line_breaks = false);

/// Formats a number the way a person writes it: no trailing zeros, at most `max_decimals`.
std::string FormatNumber(double value, int max_decimals = 3);
/// A duration in milliseconds to three significant digits or so: 0.123, 1.23, 12.3, 123.
std::string FormatMilliseconds(double ms);
/// A duration given in microseconds, in the unit that reads best: 31 µs, 1.25 ms, 2.5 s.
std::string FormatMicroseconds(double us);

/// A CSV cell (RFC 4180, quoted when it holds , " CR or LF), of which every CSV is made; text that
/// a spreadsheet would run (= + - @ tab CR first, not a number) gets a leading ' (OWASP's rule).
std::string CsvField(std::string_view text);

/// A CSV record and the line it starts on.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> fields;
};

/// The records of CSV text (RFC 4180: quoted fields may hold commas, doubled quotes and line
/// breaks; CRLF or LF, and a lone CR ends a record too; blank lines skipped). A record's line is
/// counted in LFs, as editors and sed count them. `unclosed` is set to the line of a quoted field
/// that never closes, 0 when none.
std::vector<CsvRecord> ParseCsv(std::string_view text, int& unclosed);

/// `text` with every `from` replaced by `to` (from must not be empty).
std::string ReplaceAll(std::string text, std::string_view from, std::string_view to);

/// Length of the well-formed UTF-8 sequence at the start of `text` (1 to 4), or 0 when it is not
/// one (overlong forms, surrogates and code points above U+10FFFF are not).
size_t Utf8SequenceLength(std::string_view text);

/// The offset of the first byte of `text` that does not start a well-formed UTF-8 sequence, or
/// nullopt when all of `text` is UTF-8.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

/// What starts `text` (not empty): a well-formed UTF-8 sequence, or the maximal ill-formed part
/// that one U+FFFD replaces (Unicode's recommended practice, as in Python's errors="replace" and
/// every WHATWG decoder: an invalid lead byte alone, or a lead byte with the continuation bytes
/// that were still possible).
struct Utf8Sequence {
  size_t length = 0;  // 1 to 4
  bool valid = false;
};
Utf8Sequence NextUtf8Sequence(std::string_view text);

/// U+FFFD, the replacement character, in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

/// Whether `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

/// A word for /bin/sh: bare when it is safe so, else in single quotes.
std::string ShellWord(const std::string& word);

/// The code point of a well-formed UTF-8 sequence (NextUtf8Sequence(text).valid).
uint32_t Utf8CodePoint(std::string_view sequence);

/// Whether `code_point` changes how the text around it is shown rather than being text: the bidi
/// controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), the line and paragraph
/// separators U+2028 and U+2029, and the C1 controls U+0080 to U+009F (0x9B is a terminal's CSI).
bool IsLayoutControl(uint32_t code_point);

/// `text` (from a server or a user, so anything at all) as it may be printed on one line of a
/// terminal or a log, harmless to both. C0 controls, DEL and C1 controls are escaped (`\n`, `\r`,
/// `\t`, `\x1b`, `\x00`, `\u{85}`), as are the layout controls (IsLayoutControl) and every byte
/// that is not well-formed UTF-8 (`\xff`). Past `max_bytes` of output the rest is left out as
/// "... (N more bytes)", N counted in `text`'s bytes; an escape or a character is never cut.
/// Secrets are not its business: redact before.
std::string ShownText(std::string_view text, size_t max_bytes = 200);

/// Whether ShownText shows `text` as it is (its length aside): well-formed UTF-8 without any
/// character it escapes. What is written into a file from outside must be.
bool IsShownAsIs(std::string_view text);

/// `text` with each ill-formed part (NextUtf8Sequence) replaced by U+FFFD: valid UTF-8 that
/// every strict reader of JSON, CSV or HTML accepts. Valid text comes back unchanged.
std::string ValidUtf8(std::string_view text);

/// What keeps `text` from being shown to people as it reads (a name or note in a report), or
/// nullopt when nothing does: "is not valid UTF-8 (at byte 5)", "holds a control character
/// (U+001B at byte 5)" (C0, DEL or C1), "holds a bidirectional control character (U+202E at byte
/// 5)" (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069: they reorder what follows), or
/// "holds a line or paragraph separator (U+2028 at byte 5)". With `allow_line_breaks`, tab, CR
/// and LF are allowed. Bytes are counted from 1.
std::optional<std::string> DisplayTextProblem(std::string_view text, bool allow_line_breaks);

/// The first `max_bytes` of `text`, shortened so as not to end inside a UTF-8 sequence.
std::string Utf8Prefix(std::string_view text, size_t max_bytes);

/// A whole number of digits alone (no sign, space or other character) that fits int64_t.
std::optional<int64_t> ParseWholeNumber(std::string_view text);

}  // namespace stagegate

#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stagegate::cli {

/// The longest text InitShown shows whole, in bytes of what it prints.
inline constexpr size_t kInitShownBytes = 200;

/// `text` (from a server, so anything at all) as `stagegate init` prints it: on one line and
/// harmless to a terminal. C0 controls, DEL and C1 controls are escaped (`\n`, `\r`, `\t`,
/// `\x1b`, `\x00`, `\u{85}`), as are the characters that reorder or break a line as a terminal
/// or an editor shows it (the bidi embeddings, overrides and isolates U+202A-U+202E and
/// U+2066-U+2069, the marks U+200E, U+200F and U+061C, the separators U+2028 and U+2029), and
/// every byte that is not well-formed UTF-8 (`\xff`). Past `max_bytes` of output the rest is
/// left out as "... (N more bytes)", N counted in `text`'s bytes; an escape or a character is
/// never cut. Secrets are not its business: redact before.
std::string InitShown(std::string_view text, size_t max_bytes = kInitShownBytes);

/// Whether InitShown shows `text` as it is: well-formed UTF-8 without any character it escapes
/// (its length aside). What init writes into a file must be.
bool InitPrintable(std::string_view text);

}  // namespace stagegate::cli

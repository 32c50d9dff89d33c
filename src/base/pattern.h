#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace re2 {
class RE2;
}

namespace stagegate {

/// A pattern a user wrote (a manifest's expect_answer, a triage pattern, a check): matched
/// case-insensitively anywhere in UTF-8 text, with RE2's syntax. RE2 runs in time linear in the
/// text and without recursion, so no pattern and no answer can hang or overflow the stack; a
/// pattern RE2 cannot run that way (back-references, look-around) does not compile. Copies share
/// the compiled program; matching is thread-safe.
class Pattern {
 public:
  /// The longest pattern text accepted, and the memory RE2 may use to compile one.
  static constexpr size_t kMaxTextBytes = 65536;
  static constexpr int64_t kMaxProgramBytes = 8 << 20;

  /// InvalidInput, with RE2's reason, when `text` is too long or not a pattern RE2 can run.
  static Result<Pattern> Compile(std::string_view text);
  /// As Compile, for a pattern matched on many texts (a check on every answer): a text compiled
  /// by Shared before is not compiled again. The first kMaxShared texts are kept for the life of
  /// the process; beyond them, and for a text that does not compile, it is Compile. Thread-safe.
  static Result<Pattern> Shared(std::string_view text);
  static constexpr size_t kMaxShared = 256;

  const std::string& text() const { return text_; }
  bool Matches(std::string_view subject) const;
  /// The first match in `subject` (it may be empty), or nullopt when there is none.
  std::optional<std::string> FirstMatch(std::string_view subject) const;

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace stagegate

#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stagegate::tokenize {

/// A pre-tokenizer's split pattern (a Hugging Face "Split" with behaviour "Isolated"), run by
/// PCRE2 with Unicode properties (PCRE2_UTF | PCRE2_UCP) and its JIT when the machine has one.
/// Ill-formed UTF-8 in the text is allowed (PCRE2_MATCH_INVALID_UTF): no match covers it, so it
/// ends up in the pieces between matches. Immutable after Compile; Split is thread-safe.
class SplitRegex {
 public:
  /// InvalidInput with PCRE2's reason and offset when `pattern` does not compile.
  static Result<SplitRegex> Compile(std::string_view pattern);

  SplitRegex(SplitRegex&&) noexcept;
  SplitRegex& operator=(SplitRegex&&) noexcept;
  ~SplitRegex();

  /// Appends the pieces of `text` to `out`, in order: each match and each non-empty stretch
  /// between matches, so that the pieces concatenate to `text`. If PCRE2 gives up on a match (its
  /// match or heap limit), the rest of the text is one piece.
  void Split(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  struct Code;
  explicit SplitRegex(std::unique_ptr<Code> code);
  std::unique_ptr<Code> code_;
};

}  // namespace stagegate::tokenize

#include "tokenize/split_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace stagegate::tokenize {

struct SplitRegex::Code {
  ~Code() { pcre2_code_free(code); }
  pcre2_code* code = nullptr;
  bool jit = false;
};

SplitRegex::SplitRegex(std::unique_ptr<Code> code) : code_(std::move(code)) {}
SplitRegex::SplitRegex(SplitRegex&&) noexcept = default;
SplitRegex& SplitRegex::operator=(SplitRegex&&) noexcept = default;
SplitRegex::~SplitRegex() = default;

namespace {

// Unicode's White_Space characters, as the body of a class.
constexpr std::string_view kWhiteSpace =
    R"(\t\n\x{0B}\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// `pattern` with \s and \S spelt as Unicode's White_Space, as Hugging Face's regex engine
// (Oniguruma) has them; PCRE2's own \s also takes U+180E, which Unicode 6.3 took out.
std::string SpellWhiteSpace(std::string_view pattern) {
  const std::string space(kWhiteSpace);
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        out += in_class ? space : "[" + space + "]";
      } else if (next == 'S' && !in_class) {
        out += "[^" + space + "]";
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    out += c;
    if (c == '[' && !in_class) {
      in_class = true;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // a literal ]
    } else if (c == ']' && in_class) {
      in_class = false;
    }
  }
  return out;
}

}  // namespace

Result<SplitRegex> SplitRegex::Compile(std::string_view pattern_text) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto code = std::make_unique<Code>();
  const std::string pattern = SpellWhiteSpace(pattern_text);
  code->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (code->code == nullptr) {
    PCRE2_UCHAR reason[256];
    pcre2_get_error_message(error, reason, sizeof reason);
    return Status::InvalidInput("pattern does not compile at offset " + std::to_string(offset) +
                                ": " + reinterpret_cast<const char*>(reason));
  }
  code->jit = pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE) == 0;
  return SplitRegex(std::move(code));
}

void SplitRegex::Split(std::string_view text, std::vector<std::string_view>& out) const {
  using MatchData = std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)>;
  const MatchData match(pcre2_match_data_create_from_pattern(code_->code, nullptr),
                        &pcre2_match_data_free);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  size_t piece_start = 0;
  while (start < text.size()) {
    int rc = pcre2_match(code_->code, subject, text.size(), start, 0, match.get(), nullptr);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && code_->jit) {
      // The JIT's stack is small; the interpreter keeps its backtracking on the heap.
      rc =
          pcre2_match(code_->code, subject, text.size(), start, PCRE2_NO_JIT, match.get(), nullptr);
    }
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (begin > piece_start) out.push_back(text.substr(piece_start, begin - piece_start));
    if (end > begin) {
      out.push_back(text.substr(begin, end - begin));
      piece_start = end;
      start = end;
    } else {
      // An empty match splits nothing; look again one byte further on.
      piece_start = begin;
      start = begin + 1;
    }
  }
  if (piece_start < text.size()) out.push_back(text.substr(piece_start));
}

}  // namespace stagegate::tokenize

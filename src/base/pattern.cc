#include "base/pattern.h"

#include <map>
#include <mutex>

#include <re2/re2.h>

namespace stagegate {

Result<Pattern> Pattern::Compile(std::string_view text) {
  if (text.size() > kMaxTextBytes)
    return Status::InvalidInput("is " + std::to_string(text.size()) + " bytes long; at most " +
                                std::to_string(kMaxTextBytes) + " are allowed");
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(kMaxProgramBytes);
  auto re = std::make_shared<const RE2>(re2::StringPiece(text.data(), text.size()), options);
  if (!re->ok()) return Status::InvalidInput(re->error());
  Pattern pattern;
  pattern.text_ = std::string(text);
  pattern.re_ = std::move(re);
  return pattern;
}

Result<Pattern> Pattern::Shared(std::string_view text) {
  static std::mutex mutex;
  static std::map<std::string, Pattern, std::less<>> compiled;
  {
    std::lock_guard lock(mutex);
    if (auto it = compiled.find(text); it != compiled.end()) return it->second;
  }
  Result<Pattern> pattern = Compile(text);
  if (!pattern.ok()) return pattern;
  std::lock_guard lock(mutex);
  if (compiled.size() < kMaxShared) compiled.emplace(std::string(text), *pattern);
  return pattern;
}

bool Pattern::Matches(std::string_view subject) const {
  return RE2::PartialMatch(re2::StringPiece(subject.data(), subject.size()), *re_);
}

std::optional<std::string> Pattern::FirstMatch(std::string_view subject) const {
  re2::StringPiece match;
  const re2::StringPiece input(subject.data(), subject.size());
  if (!re_->Match(input, 0, input.size(), RE2::UNANCHORED, &match, 1)) return std::nullopt;
  return std::string(match.data(), match.size());
}

}  // namespace stagegate

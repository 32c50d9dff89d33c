#include "tokenize/tokenizer.h"

#include "base/files.h"
#include "tokenize/hf_tokenizer.h"
#include "tokenize/sentencepiece_tokenizer.h"

namespace stagegate::tokenize {
namespace {

bool LooksLikeJson(const std::string& bytes) {
  for (const char c : bytes) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  const bool model_file =
      path.ends_with(".model") || (!path.ends_with(".json") && !LooksLikeJson(*bytes));
  Result<std::unique_ptr<Tokenizer>> tokenizer =
      model_file ? SentencePieceTokenizer::FromModelProto(*bytes) : HfTokenizer::FromJson(*bytes);
  if (!tokenizer.ok()) return tokenizer.status().WithContext(path);
  return tokenizer;
}

int64_t Tokenizer::Count(std::string_view text) const {
  return static_cast<int64_t>(Encode(text).size());
}

}  // namespace stagegate::tokenize

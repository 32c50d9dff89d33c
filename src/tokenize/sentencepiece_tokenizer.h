#pragma once

#include <memory>
#include <string>

#include "tokenize/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace stagegate::tokenize {

/// A SentencePiece .model file, run by libsentencepiece itself (its own normalization,
/// unigram or BPE, byte fallback): the ids are the library's.
class SentencePieceTokenizer : public Tokenizer {
 public:
  /// Builds from the bytes of a .model file; InvalidInput with the library's reason when they
  /// are not one. Messages do not name the file (Load adds it).
  static Result<std::unique_ptr<Tokenizer>> FromModelProto(const std::string& bytes);
  ~SentencePieceTokenizer() override;

  std::vector<int32_t> Encode(std::string_view text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  std::string Describe() const override;

 private:
  SentencePieceTokenizer();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace stagegate::tokenize

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stagegate::tokenize {

/// A model's own tokenizer, loaded from the file the model ships, for counting tokens exactly as
/// the model does. Supported files:
///  - a Hugging Face tokenizer.json whose model is BPE, either byte-level (GPT-2, Llama 3, Qwen
///  2/3)
///    or SentencePiece-style with byte fallback (Llama 2, Gemma);
///  - a SentencePiece .model file (any model type libsentencepiece runs).
/// A loaded tokenizer is immutable: Encode, Decode and Count may be called from any number of
/// threads at once.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// Loads `path`: a name ending in ".json" is read as a tokenizer.json, one ending in ".model"
  /// as a SentencePiece model, any other by its first byte ('{' or '[' is JSON). The file may be at
  /// most kMaxInputFileBytes (256 MiB). Every problem (a missing or unreadable file, malformed
  /// JSON, a missing vocab or merges, a merge naming a token that is not in the vocab, an id out of
  /// range, an unsupported normalizer or pre-tokenizer) is an InvalidInput, NotFound or IoError
  /// status whose message starts with the path; nothing throws and nothing aborts.
  static Result<std::unique_ptr<Tokenizer>> Load(const std::string& path);

  /// The token ids of `text`, without special tokens added (no BOS or EOS: add_special_tokens
  /// false). As in Hugging Face tokenizers and transformers.js, the text of an added token (such
  /// as "<|im_end|>" or "<s>") found in `text` becomes that token. Any bytes are accepted: in a
  /// byte-level vocabulary an ill-formed UTF-8 byte is a byte like any other; in a
  /// SentencePiece-style one it becomes its <0xNN> byte token.
  virtual std::vector<int32_t> Encode(std::string_view text) const = 0;

  /// The text of `ids`, as exact bytes (ill-formed UTF-8 is not replaced); ids the tokenizer
  /// does not know are skipped.
  virtual std::string Decode(const std::vector<int32_t>& ids) const = 0;

  /// What was loaded, e.g. "byte-level BPE, 151643 tokens (tokenizer.json)".
  virtual std::string Describe() const = 0;

  /// The number of tokens Encode(text) returns.
  int64_t Count(std::string_view text) const;
};

}  // namespace stagegate::tokenize

#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "tokenize/bpe_merges.h"
#include "tokenize/byte_level.h"
#include "tokenize/split_regex.h"
#include "tokenize/tokenizer.h"

namespace stagegate::tokenize {

/// A Hugging Face tokenizer.json with a BPE model, in one of two families:
///  - byte-level (GPT-2, Llama 3, Qwen): the pre-tokenizer's regexes split the text, each piece's
///    bytes are spelt in GPT-2's byte alphabet and merged;
///  - SentencePiece-style (Llama 2, Gemma): the normalizer prepends "▁" and replaces spaces by
///    "▁", characters are merged, and a character left outside the vocabulary becomes its UTF-8
///    bytes as <0xNN> tokens.
/// Normalizers: NFC (Qwen, through ICU), Prepend and Replace of a string (Llama 2); the
/// SentencePiece family may have a Metaspace pre-tokenizer instead (newer Llama 2 style files).
/// Added tokens with lstrip, rstrip or normalized set are matched as plain text.
class HfTokenizer : public Tokenizer {
 public:
  /// Builds from the text of a tokenizer.json; messages do not name the file (Load adds it).
  static Result<std::unique_ptr<Tokenizer>> FromJson(const std::string& text);

  std::vector<int32_t> Encode(std::string_view text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  std::string Describe() const override;

 private:
  friend class HfLoader;
  enum class Family { kByteLevel, kSentencePiece };
  struct AddedToken {
    std::string content;
    int32_t id = 0;
  };
  // A Metaspace pre-tokenizer: spaces become `replacement`, which may also be prepended, and
  // with `split` each piece starts at one.
  struct Metaspace {
    enum class Prepend { kAlways, kFirst, kNever };
    bool enabled = false;
    std::string replacement;
    Prepend prepend = Prepend::kAlways;
    bool split = true;
  };
  struct Replacement {
    std::string from;
    std::string to;
  };

  HfTokenizer() = default;
  void EncodeSection(std::string_view text, bool first, std::vector<int32_t>& ids) const;
  std::vector<std::string_view> PreTokenize(std::string& normalized, bool first) const;
  void EncodePiece(std::string_view piece, std::vector<int32_t>& ids) const;
  void EncodeByteLevel(std::string_view piece, std::vector<int32_t>& ids) const;
  void EncodeCharacters(std::string_view piece, std::vector<int32_t>& ids) const;
  void AppendByteTokens(std::string_view bytes, std::vector<int32_t>& ids) const;
  std::string Normalize(std::string_view text) const;

  Family family_ = Family::kByteLevel;
  std::unordered_map<std::string, int32_t> vocab_;
  size_t vocab_size_ = 0;
  std::vector<std::string> tokens_;     // by id: vocab and added tokens; empty for unused ids
  std::vector<bool> is_added_;          // by id
  std::vector<AddedToken> added_;       // longest content first
  std::array<bool, 256> added_starts_;  // whether some added token starts with this byte
  BpeMerges merges_;
  ByteAlphabet alphabet_;
  std::array<int32_t, 256> byte_ids_;  // byte-level: the byte's character; else <0xNN>, or -1
  std::vector<SplitRegex> splits_;     // applied in order, each to every piece of the last
  bool add_prefix_space_ = false;
  Metaspace metaspace_;
  bool ignore_merges_ = false;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool nfc_ = false;     // the normalizer's NFC, which comes first
  std::string prepend_;  // the normalizer's Prepend
  std::vector<Replacement> replacements_;
  size_t decode_strip_spaces_ = 0;  // leading spaces the decoder strips
};

}  // namespace stagegate::tokenize

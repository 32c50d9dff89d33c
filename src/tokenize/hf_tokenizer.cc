#include "tokenize/hf_tokenizer.h"

#include "base/strings.h"
#include "tokenize/nfc.h"

namespace stagegate::tokenize {
namespace {

// "<0x41>" -> 0x41; -1 for any other text.
int ByteTokenValue(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  int value = 0;
  for (const char c : token.substr(3, 2)) {
    value *= 16;
    if (c >= '0' && c <= '9')
      value += c - '0';
    else if (c >= 'A' && c <= 'F')
      value += c - 'A' + 10;
    else
      return -1;
  }
  return value;
}

// Every `from` in `text` replaced by `to`, in one pass: base's ReplaceAll edits in place, which is
// quadratic in the number of replacements when `to` is longer, as "▁" is than " ".
std::string ReplaceEvery(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = text.find(from); at != std::string_view::npos; at = text.find(from)) {
    out.append(text.substr(0, at));
    out.append(to);
    text.remove_prefix(at + from.size());
  }
  out.append(text);
  return out;
}

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // "▁"

}  // namespace

std::vector<int32_t> HfTokenizer::Encode(std::string_view text) const {
  std::vector<int32_t> ids;
  size_t section_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* found = nullptr;
    if (added_starts_[static_cast<uint8_t>(text[i])]) {
      for (const AddedToken& added : added_) {  // longest first
        if (text.substr(i).starts_with(added.content)) {
          found = &added;
          break;
        }
      }
    }
    if (found == nullptr) {
      ++i;
      continue;
    }
    EncodeSection(text.substr(section_start, i - section_start), section_start == 0, ids);
    ids.push_back(found->id);
    i += found->content.size();
    section_start = i;
  }
  EncodeSection(text.substr(section_start), section_start == 0, ids);
  return ids;
}

std::string HfTokenizer::Normalize(std::string_view text) const {
  std::string normalized = prepend_;
  normalized.append(nfc_ ? ToNfc(text) : text);
  for (const Replacement& replacement : replacements_)
    normalized = ReplaceEvery(normalized, replacement.from, replacement.to);
  return normalized;
}

std::vector<std::string_view> HfTokenizer::PreTokenize(std::string& normalized, bool first) const {
  if (add_prefix_space_ && !normalized.starts_with(' ')) normalized.insert(0, 1, ' ');
  if (metaspace_.enabled) {
    normalized = ReplaceEvery(normalized, " ", metaspace_.replacement);
    const bool prepend = metaspace_.prepend == Metaspace::Prepend::kAlways ||
                         (metaspace_.prepend == Metaspace::Prepend::kFirst && first);
    if (prepend && !normalized.starts_with(metaspace_.replacement))
      normalized.insert(0, metaspace_.replacement);
  }
  std::vector<std::string_view> pieces{normalized};
  if (metaspace_.enabled && metaspace_.split) {
    // Each piece starts at a replacement character (Hugging Face's MergedWithNext).
    pieces.clear();
    const std::string_view text = normalized;
    size_t start = 0;
    for (size_t at = text.find(metaspace_.replacement, 1); at != std::string_view::npos;
         at = text.find(metaspace_.replacement, at + 1)) {
      if (at == start) continue;
      pieces.push_back(text.substr(start, at - start));
      start = at;
    }
    pieces.push_back(text.substr(start));
  }
  std::vector<std::string_view> split;
  for (const SplitRegex& regex : splits_) {
    split.clear();
    for (const std::string_view piece : pieces)
      regex.Split(piece, split);
    pieces.swap(split);
  }
  return pieces;
}

void HfTokenizer::EncodeSection(std::string_view text, bool first,
                                std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  std::string normalized = Normalize(text);
  if (normalized.empty()) return;
  for (const std::string_view piece : PreTokenize(normalized, first))
    EncodePiece(piece, ids);
}

void HfTokenizer::EncodePiece(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    // A piece that is a token is that token, whatever the merges would make of it (Llama 3).
    std::string spelt;
    if (family_ == Family::kByteLevel) {
      for (const char byte : piece)
        spelt += alphabet_.CharOf(static_cast<uint8_t>(byte));
    } else {
      spelt = piece;
    }
    if (const auto it = vocab_.find(spelt); it != vocab_.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  if (family_ == Family::kByteLevel) {
    EncodeByteLevel(piece, ids);
  } else {
    EncodeCharacters(piece, ids);
  }
}

void HfTokenizer::EncodeByteLevel(std::string_view piece, std::vector<int32_t>& ids) const {
  std::vector<BpePart> parts(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    parts[i] = BpePart{.id = byte_ids_[static_cast<uint8_t>(piece[i])],
                       .begin = static_cast<uint32_t>(i),
                       .end = static_cast<uint32_t>(i + 1)};
  }
  merges_.Merge(parts);
  for (const BpePart& part : parts)
    ids.push_back(part.id);
}

void HfTokenizer::EncodeCharacters(std::string_view piece, std::vector<int32_t>& ids) const {
  std::vector<BpePart> parts;
  std::string character;
  for (size_t i = 0; i < piece.size();) {
    const Utf8Sequence sequence = NextUtf8Sequence(piece.substr(i));
    BpePart part{.begin = static_cast<uint32_t>(i),
                 .end = static_cast<uint32_t>(i + sequence.length)};
    if (sequence.valid) {
      character.assign(piece.substr(i, sequence.length));
      if (const auto it = vocab_.find(character); it != vocab_.end()) part.id = it->second;
    }
    parts.push_back(part);
    i += sequence.length;
  }
  merges_.Merge(parts);
  for (const BpePart& part : parts) {
    if (part.id != BpePart::kNoToken) {
      ids.push_back(part.id);
    } else {
      AppendByteTokens(piece.substr(part.begin, part.end - part.begin), ids);
    }
  }
}

void HfTokenizer::AppendByteTokens(std::string_view bytes, std::vector<int32_t>& ids) const {
  bool all_known = true;
  for (const char byte : bytes)
    all_known = all_known && byte_ids_[static_cast<uint8_t>(byte)] >= 0;
  if (all_known) {
    for (const char byte : bytes)
      ids.push_back(byte_ids_[static_cast<uint8_t>(byte)]);
    return;
  }
  if (unk_id_ < 0) return;  // No way to say it: the reference fails here; we drop it.
  if (fuse_unk_ && !ids.empty() && ids.back() == unk_id_) return;
  ids.push_back(unk_id_);
}

std::string HfTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (const int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || tokens_[id].empty()) continue;
    const std::string& token = tokens_[id];
    if (is_added_[id]) {
      text += token;
    } else if (family_ == Family::kByteLevel) {
      alphabet_.AppendBytes(token, text);
    } else if (const int byte = ByteTokenValue(token); byte >= 0 && byte_ids_[byte] == id) {
      text += static_cast<char>(byte);
    } else {
      text += ReplaceEvery(token, kMetaspace, " ");
    }
  }
  for (size_t i = 0; i < decode_strip_spaces_ && !text.empty() && text[0] == ' '; ++i)
    text.erase(0, 1);
  return text;
}

std::string HfTokenizer::Describe() const {
  return std::string(family_ == Family::kByteLevel ? "byte-level BPE, "
                                                   : "SentencePiece-style BPE, ") +
         std::to_string(vocab_size_) + " tokens (tokenizer.json)";
}

}  // namespace stagegate::tokenize

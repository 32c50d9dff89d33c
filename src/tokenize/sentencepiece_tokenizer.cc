#include "tokenize/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

namespace stagegate::tokenize {

SentencePieceTokenizer::SentencePieceTokenizer()
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

Result<std::unique_ptr<Tokenizer>> SentencePieceTokenizer::FromModelProto(
    const std::string& bytes) {
  std::unique_ptr<SentencePieceTokenizer> tokenizer(new SentencePieceTokenizer());
  try {
    const auto status = tokenizer->processor_->LoadFromSerializedProto(bytes);
    if (!status.ok())
      return Status::InvalidInput("not a SentencePiece model: " + status.ToString());
  } catch (const std::exception& error) {
    return Status::InvalidInput(std::string("not a SentencePiece model: ") + error.what());
  }
  if (tokenizer->processor_->GetPieceSize() <= 0)
    return Status::InvalidInput("not a SentencePiece model: it has no pieces");
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

std::vector<int32_t> SentencePieceTokenizer::Encode(std::string_view text) const {
  std::vector<int> ids;
  const auto status = processor_->Encode(text, &ids);
  if (!status.ok()) return {};  // Only a model that failed to load fails here.
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::Decode(const std::vector<int32_t>& ids) const {
  const int size = processor_->GetPieceSize();
  std::vector<int> known;
  for (const int32_t id : ids)
    if (id >= 0 && id < size) known.push_back(id);
  std::string text;
  const auto status = processor_->Decode(known, &text);
  if (!status.ok()) return {};
  return text;
}

std::string SentencePieceTokenizer::Describe() const {
  return "SentencePiece model, " + std::to_string(processor_->GetPieceSize()) + " pieces (.model)";
}

}  // namespace stagegate::tokenize

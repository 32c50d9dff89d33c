#include "load/synthetic.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace stagegate::load {
namespace {

// The reference server's rule (EstimateTokens in src/base/token_estimate.h), restated so that a
// change on either side shows here.
int64_t ServerTokenCount(const std::string& prompt) {
  return std::max<int64_t>(1, static_cast<int64_t>((prompt.size() + 3) / 4));
}

struct Moments {
  double mean = 0;
  double std = 0;
};

Moments MomentsOf(const std::vector<double>& values) {
  Moments moments;
  for (double value : values)
    moments.mean += value;
  moments.mean /= static_cast<double>(values.size());
  for (double value : values)
    moments.std += (value - moments.mean) * (value - moments.mean);
  moments.std = std::sqrt(moments.std / static_cast<double>(values.size()));
  return moments;
}

TEST_CASE("A synthetic input depends only on the seed and its sequence", "[load]") {
  const SyntheticOptions options{.input_tokens = {300, 80}, .output_tokens = {100, 20}, .seed = 7};
  std::vector<SyntheticInput> forward;
  for (int64_t sequence = 0; sequence < 200; ++sequence)
    forward.push_back(MakeSyntheticInput(options, sequence));
  // Another order, as another shard or thread would ask.
  for (int64_t sequence = 199; sequence >= 0; sequence -= 3)
    CHECK(MakeSyntheticInput(options, sequence) == forward[sequence]);

  // Different sequences differ from their first bytes on, and not only in the prefix.
  CHECK(forward[1].prompt.substr(0, 10) != forward[2].prompt.substr(0, 10));
  CHECK(forward[1].prompt.substr(12, 40) != forward[2].prompt.substr(12, 40));
  CHECK(forward[1].prompt.rfind("Request 1: ", 0) == 0);
  CHECK(forward[123].prompt.rfind("Request 123: ", 0) == 0);

  SyntheticOptions reseeded = options;
  reseeded.seed = 8;
  const SyntheticInput other = MakeSyntheticInput(reseeded, 5);
  CHECK(other.prompt != forward[5].prompt);
  CHECK((other.input_tokens != forward[5].input_tokens ||
         other.output_tokens != forward[5].output_tokens));
}

TEST_CASE("A synthetic prompt counts as exactly its input tokens on the server", "[load]") {
  for (double mean : {1.0, 2.0, 3.0, 5.0, 7.0, 13.0, 550.0}) {
    for (int64_t sequence = 0; sequence < 300; ++sequence) {
      const SyntheticInput input =
          MakeSyntheticInput({.input_tokens = {mean, mean / 3}, .seed = 1}, sequence);
      INFO("mean " << mean << ", sequence " << sequence << ": '" << input.prompt << "'");
      REQUIRE(input.prompt.size() == static_cast<size_t>(4 * input.input_tokens));
      CHECK(ServerTokenCount(input.prompt) == input.input_tokens);
    }
  }

  // Ordinary words: letters between single spaces after the prefix, ASCII only.
  const SyntheticInput input = MakeSyntheticInput({.input_tokens = {2000, 0}}, 42);
  const std::string body = input.prompt.substr(std::string("Request 42: ").size());
  CHECK(body.find("  ") == std::string::npos);
  CHECK(std::all_of(body.begin(), body.end(),
                    [](char c) { return (c >= 'a' && c <= 'z') || c == ' ' || c == '.'; }));
  CHECK(std::count(body.begin(), body.end(), ' ') > 1000);
}

TEST_CASE("Synthetic token counts follow their normal distributions", "[load]") {
  const SyntheticOptions options{.input_tokens = {550, 100}, .output_tokens = {128, 30}, .seed = 3};
  std::vector<double> inputs;
  std::vector<double> outputs;
  for (int64_t sequence = 0; sequence < 5000; ++sequence) {
    const SyntheticInput input = MakeSyntheticInput(options, sequence);
    inputs.push_back(static_cast<double>(input.input_tokens));
    outputs.push_back(static_cast<double>(input.output_tokens));
  }
  const Moments in = MomentsOf(inputs);
  const Moments out = MomentsOf(outputs);
  CHECK(in.mean == Approx(550).epsilon(0.01));
  CHECK(in.std == Approx(100).epsilon(0.05));
  CHECK(out.mean == Approx(128).epsilon(0.01));
  CHECK(out.std == Approx(30).epsilon(0.05));
  // The two counts of a request are independent draws.
  double covariance = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    covariance += (inputs[i] - in.mean) * (outputs[i] - out.mean);
  covariance /= static_cast<double>(inputs.size());
  CHECK(std::abs(covariance / (in.std * out.std)) < 0.05);

  // std 0 gives the mean, rounded half away from zero.
  const SyntheticInput fixed =
      MakeSyntheticInput({.input_tokens = {550.5, 0}, .output_tokens = {128.4, 0}}, 9);
  CHECK(fixed.input_tokens == 551);
  CHECK(fixed.output_tokens == 128);
}

TEST_CASE("Synthetic token counts are clamped to at least 1", "[load]") {
  int64_t smallest_input = kMaxSyntheticTokens;
  int64_t smallest_output = kMaxSyntheticTokens;
  for (int64_t sequence = 0; sequence < 500; ++sequence) {
    const SyntheticInput input =
        MakeSyntheticInput({.input_tokens = {2, 10}, .output_tokens = {0, 5}}, sequence);
    smallest_input = std::min(smallest_input, input.input_tokens);
    smallest_output = std::min(smallest_output, input.output_tokens);
    CHECK(input.prompt.size() == static_cast<size_t>(4 * input.input_tokens));
  }
  CHECK(smallest_input == 1);
  CHECK(smallest_output == 1);

  const SyntheticInput negative =
      MakeSyntheticInput({.input_tokens = {-40, 0}, .output_tokens = {std::nan(""), 0}}, 0);
  CHECK(negative.input_tokens == 1);
  CHECK(negative.prompt == "Requ");
  CHECK(negative.output_tokens == 1);

  const SyntheticInput huge = MakeSyntheticInput({.input_tokens = {1e12, 0}}, 0);
  CHECK(huge.input_tokens == kMaxSyntheticTokens);
  CHECK(huge.prompt.size() == static_cast<size_t>(4 * kMaxSyntheticTokens));
}

// The length of the common start of two strings.
size_t Common(const std::string& a, const std::string& b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first -
                             a.begin());
}

TEST_CASE("Synthetic prompts that draw the same shared prefix start with the same text",
          "[load][prefix]") {
  SyntheticOptions options{.input_tokens = {300, 40}, .output_tokens = {10, 0}, .seed = 5};
  options.prefixes = {.count = 3, .tokens = 200, .share = 0.5};
  std::vector<SyntheticInput> inputs;
  int with_prefix = 0;
  for (int64_t i = 0; i < 400; ++i) {
    inputs.push_back(MakeSyntheticInput(options, i));
    const SyntheticInput& input = inputs.back();
    CHECK(input.prompt.size() == static_cast<size_t>(4 * input.input_tokens));
    if (input.prefix >= 0) {
      ++with_prefix;
      CHECK(input.prefix < 3);
      CHECK(input.input_tokens > 200);
      CHECK(input.prompt.rfind("Prefix " + std::to_string(input.prefix) + ":", 0) == 0);
    } else {
      CHECK(input.prompt.rfind("Request " + std::to_string(i) + ":", 0) == 0);
    }
  }
  CHECK(with_prefix > 150);  // half of 400, drawn: 200 +- 10 sd
  CHECK(with_prefix < 250);
  // Same prefix: the first 800 bytes are the same, and the request's own text follows at once.
  // Different prefixes, or none: they part within the first few bytes.
  for (size_t a = 0; a < 60; ++a)
    for (size_t b = a + 1; b < 60; ++b) {
      const size_t common = Common(inputs[a].prompt, inputs[b].prompt);
      if (inputs[a].prefix >= 0 && inputs[a].prefix == inputs[b].prefix) {
        CHECK(common >= 800);
        CHECK(common < 800 + 12);  // "Request N:" differs
      } else {
        CHECK(common < 12);
      }
    }
  // Without shared prefixes, the inputs are what they always were.
  options.prefixes = {};
  CHECK(MakeSyntheticInput(options, 7) ==
        MakeSyntheticInput({.input_tokens = {300, 40}, .output_tokens = {10, 0}, .seed = 5}, 7));
  CHECK(MakeSyntheticInput(options, 7).prefix == -1);
}

TEST_CASE("Trace prompts share the blocks their hash_ids share, from the start", "[load][prefix]") {
  // Blocks of 16 tokens (64 bytes). Entries 0 and 1 share blocks 1 and 2; entry 2 names block 2
  // after another first block, so it shares nothing from the start; entry 3 is entry 0's first
  // block, cut short.
  const std::string p0 = MakeBlockPrompt(9, {1, 2, 3}, 16, 48, 0);
  const std::string p1 = MakeBlockPrompt(9, {1, 2, 4}, 16, 60, 1);
  const std::string p2 = MakeBlockPrompt(9, {7, 2}, 16, 32, 2);
  const std::string p3 = MakeBlockPrompt(9, {1}, 16, 10, 3);
  CHECK(p0.size() == 48 * 4);
  CHECK(p1.size() == 60 * 4);  // three blocks, then 12 tokens of its own
  CHECK(p3.size() == 10 * 4);
  CHECK(Common(p0, p1) >= 128);
  CHECK(Common(p0, p1) < 128 + 10);  // "Block 3:" against "Block 4:"
  CHECK(Common(p0, p2) < 8);
  CHECK(p0.substr(64, 64) == p2.substr(64, 64));  // the same block 2 text, after another block 1
  CHECK(Common(p0, p3) >= 30);
  CHECK(p1.substr(192).rfind("Request 1:", 0) == 0);
  // The seed changes every block.
  CHECK(Common(p0, MakeBlockPrompt(10, {1, 2, 3}, 16, 48, 0)) < 10);
  // A prompt shorter than its first block, and more blocks than the prompt needs.
  CHECK(MakeBlockPrompt(9, {1, 2, 3, 4}, 16, 20, 0).size() == 80);
}

TEST_CASE("Shared-prefix and token specs parse, and say what they expect", "[load][prefix]") {
  const Result<SharedPrefixes> two = ParseSharedPrefixes("4:512");
  REQUIRE(two.ok());
  CHECK(*two == SharedPrefixes{.count = 4, .tokens = 512, .share = 1});
  const Result<SharedPrefixes> three = ParseSharedPrefixes("2:100:0.25");
  REQUIRE(three.ok());
  CHECK(three->share == 0.25);
  for (const char* bad : {"", "4", "4:", "0:10", "4:0", "2.5:10", "4:10:1.5", "4:10:-1", "a:b",
                          "4:10:0.5:1", "4:1e7", "4:10:nan"}) {
    INFO(bad);
    const Result<SharedPrefixes> parsed = ParseSharedPrefixes(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().message().find("expected COUNT:TOKENS") != std::string::npos);
  }
  CHECK(ParseTokenSpec("--input-tokens", "550:10").ok());
  CHECK_FALSE(ParseTokenSpec("--input-tokens", "0").ok());
  CHECK_FALSE(ParseTokenSpec("--input-tokens", "5:nan").ok());
}

}  // namespace
}  // namespace stagegate::load

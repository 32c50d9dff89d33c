#include "load/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "base/common_words.h"
#include "base/hashing.h"
#include "base/strings.h"
#include "load/schedule.h"

namespace stagegate::load {
namespace {

// A word of each length from 1 to 9 bytes, to end the prompt on its exact size.
constexpr std::array<std::string_view, 10> kWordOfLength = {
    "", "a", "an", "the", "data", "about", "system", "process", "research", "knowledge",
};

// Appends random words to `prompt` and ends it exactly at `size` bytes. Writes into a buffer sized
// once: this runs for every request.
void FillTo(std::string& prompt, size_t size, BasicRandom<SplitMix64>& random) {
  size_t used = prompt.size();
  prompt.resize(size);
  if (used >= size) return;
  char* out = prompt.data();
  uint64_t bits = 0;
  int words_left_in_bits = 0;
  for (;;) {
    if (words_left_in_bits == 0) {
      bits = random.Bits();
      words_left_in_bits = 10;
    }
    const std::string_view word = kCommonWords[bits & 63];
    bits >>= 6;
    --words_left_in_bits;
    if (used + 1 + word.size() > size) break;
    out[used] = ' ';
    std::memcpy(out + used + 1, word.data(), word.size());
    used += 1 + word.size();
  }
  // The word that did not fit is at most 10 bytes, so at most 10 bytes are left.
  const size_t left = size - used;
  if (left == 1) {
    out[used] = '.';
  } else if (left >= 2) {
    out[used] = ' ';
    std::memcpy(out + used + 1, kWordOfLength[left - 1].data(), left - 1);
  }
}

// The generator of a shared text: a prefix (kind 0) or a trace block (kind 1), by its index.
BasicRandom<SplitMix64> PrefixSeed(uint64_t seed, int64_t index, uint64_t kind) {
  return BasicRandom<SplitMix64>(
      Mix64(Mix64(Mix64(seed) ^ 0x5eedULL ^ kind) ^ static_cast<uint64_t>(index)));
}

// Appends `bytes` bytes to `prompt`: `head`, cut when it does not fit, then words drawn from
// `random`. Nothing for bytes <= 0.
void AppendText(std::string& prompt, const std::string& head, int64_t bytes,
                BasicRandom<SplitMix64>& random) {
  if (bytes <= 0) return;
  const size_t end = prompt.size() + static_cast<size_t>(bytes);
  prompt.append(head, 0, std::min(head.size(), static_cast<size_t>(bytes)));
  FillTo(prompt, end, random);
}

// strtod of all of `text`, or nullopt.
std::optional<double> Number(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return std::nullopt;
  return value;
}

}  // namespace

int64_t DrawRounded(const TokenSpec& spec, double z, int64_t lo, int64_t hi) {
  const double value = std::round(spec.mean + spec.std * z);
  if (!std::isfinite(value)) return lo;
  return static_cast<int64_t>(std::clamp(value, static_cast<double>(lo), static_cast<double>(hi)));
}

Result<TokenSpec> ParseTokenSpec(const std::string& flag, const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  const std::optional<double> mean = Number(parts[0]);
  const std::optional<double> std = parts.size() == 2 ? Number(parts[1]) : 0.0;
  // !(x <= max) also refuses NaN.
  if (parts.size() > 2 || !mean || !(*mean >= 1 && *mean <= 1e6) || !std ||
      !(*std >= 0 && *std <= 1e6))
    return Status::InvalidInput(flag + " '" + text +
                                "': expected MEAN or MEAN:STD, MEAN from 1 to 1,000,000");
  return TokenSpec{*mean, *std};
}

Result<SharedPrefixes> ParseSharedPrefixes(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  std::optional<double> values[3] = {std::nullopt, std::nullopt, 1.0};
  for (size_t i = 0; i < parts.size() && i < 3; ++i)
    values[i] = Number(parts[i]);
  const auto whole = [](std::optional<double> v) {
    return v && *v >= 1 && *v <= 1e6 && std::floor(*v) == *v;
  };
  if (parts.size() < 2 || parts.size() > 3 || !whole(values[0]) || !whole(values[1]) ||
      !values[2] || !(*values[2] >= 0 && *values[2] <= 1))
    return Status::InvalidInput("--shared-prefix '" + text +
                                "': expected COUNT:TOKENS or COUNT:TOKENS:SHARE, COUNT and TOKENS "
                                "whole numbers from 1 to 1,000,000, SHARE from 0 to 1");
  return SharedPrefixes{.count = static_cast<int64_t>(*values[0]),
                        .tokens = static_cast<int64_t>(*values[1]),
                        .share = *values[2]};
}

std::string FitToTokens(std::string text, int64_t tokens, const tokenize::Tokenizer& tokenizer,
                        uint64_t seed) {
  BasicRandom<SplitMix64> random(Mix64(seed ^ 0xf17ULL));
  std::vector<int32_t> ids = tokenizer.Encode(text);
  // A few tokens more than asked for, so that the cut falls inside the words.
  while (static_cast<int64_t>(ids.size()) < tokens + 4) {
    FillTo(text,
           text.size() + static_cast<size_t>(tokens - static_cast<int64_t>(ids.size()) + 8) * 4,
           random);
    ids = tokenizer.Encode(text);
  }
  const auto cut = [&](int64_t m) {
    return tokenizer.Decode(std::vector<int32_t>(ids.begin(), ids.begin() + m));
  };
  for (int64_t step = 0; step <= 8; ++step)
    for (const int64_t m : {tokens - step, tokens + step}) {
      if (m < 1 || m > static_cast<int64_t>(ids.size())) continue;
      std::string candidate = cut(m);
      if (tokenizer.Count(candidate) == tokens) return candidate;
    }
  return cut(tokens);
}

SyntheticInput MakeSyntheticInput(const SyntheticOptions& options, int64_t sequence) {
  BasicRandom<SplitMix64> random(Mix64(Mix64(options.seed) ^ static_cast<uint64_t>(sequence)));
  SyntheticInput input;
  input.input_tokens = DrawRounded(options.input_tokens, random.Normal(), 1, kMaxSyntheticTokens);
  input.output_tokens = DrawRounded(options.output_tokens, random.Normal(), 1, kMaxSyntheticTokens);
  const SharedPrefixes& prefixes = options.prefixes;
  if (prefixes.count > 0 && prefixes.tokens > 0 && random.Uniform() < prefixes.share) {
    input.prefix = static_cast<int64_t>(random.Bits() % static_cast<uint64_t>(prefixes.count));
    input.input_tokens = std::max(input.input_tokens, prefixes.tokens + 1);
    BasicRandom<SplitMix64> shared = PrefixSeed(options.seed, input.prefix, 0);
    AppendText(input.prompt, "Prefix " + std::to_string(input.prefix) + ":", prefixes.tokens * 4,
               shared);
  }
  AppendText(input.prompt, "Request " + std::to_string(sequence) + ":",
             input.input_tokens * 4 - static_cast<int64_t>(input.prompt.size()), random);
  if (options.tokenizer) {
    // The same words, cut to the tokenizer's count: the prefix on its own first, so that it is
    // the same text wherever it is used, then the whole prompt.
    const uint64_t fit_seed = Mix64(options.seed) ^ static_cast<uint64_t>(sequence);
    std::string prefix;
    if (input.prefix >= 0) {
      prefix = FitToTokens(input.prompt.substr(0, static_cast<size_t>(prefixes.tokens) * 4),
                           prefixes.tokens, *options.tokenizer,
                           Mix64(options.seed) ^ static_cast<uint64_t>(input.prefix));
      prefix += ' ';
    }
    const std::string own =
        input.prompt.substr(input.prefix >= 0 ? static_cast<size_t>(prefixes.tokens) * 4 : 0);
    input.prompt = FitToTokens(prefix + own, input.input_tokens, *options.tokenizer, fit_seed);
  }
  return input;
}

std::string MakeBlockPrompt(uint64_t seed, const std::vector<int64_t>& hash_ids,
                            int64_t block_tokens, int64_t input_tokens, int64_t sequence) {
  std::string prompt;
  prompt.reserve(static_cast<size_t>(input_tokens) * 4);
  for (int64_t id : hash_ids) {
    const int64_t left = input_tokens - static_cast<int64_t>(prompt.size()) / 4;
    if (left <= 0) break;
    BasicRandom<SplitMix64> block = PrefixSeed(seed, id, 1);
    AppendText(prompt, "Block " + std::to_string(id) + ":", std::min(block_tokens, left) * 4,
               block);
  }
  BasicRandom<SplitMix64> own(Mix64(Mix64(seed) ^ static_cast<uint64_t>(sequence)));
  AppendText(prompt, "Request " + std::to_string(sequence) + ":",
             input_tokens * 4 - static_cast<int64_t>(prompt.size()), own);
  return prompt;
}

}  // namespace stagegate::load

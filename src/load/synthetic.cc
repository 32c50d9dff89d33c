#include "load/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string_view>

#include "base/common_words.h"
#include "base/hashing.h"
#include "load/schedule.h"

namespace stagegate::load {
namespace {

// A word of each length from 1 to 9 bytes, to end the prompt on its exact size.
constexpr std::array<std::string_view, 10> kWordOfLength = {
    "", "a", "an", "the", "data", "about", "system", "process", "research", "knowledge",
};

int64_t DrawTokens(const TokenSpec& spec, double z) {
  const double value = std::round(spec.mean + spec.std * z);
  if (!std::isfinite(value)) return 1;
  return static_cast<int64_t>(std::clamp(value, 1.0, static_cast<double>(kMaxSyntheticTokens)));
}

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

}  // namespace

SyntheticInput MakeSyntheticInput(const SyntheticOptions& options, int64_t sequence) {
  BasicRandom<SplitMix64> random(Mix64(Mix64(options.seed) ^ static_cast<uint64_t>(sequence)));
  SyntheticInput input;
  input.input_tokens = DrawTokens(options.input_tokens, random.Normal());
  input.output_tokens = DrawTokens(options.output_tokens, random.Normal());

  const size_t size = static_cast<size_t>(input.input_tokens) * 4;
  input.prompt += "Request ";
  input.prompt += std::to_string(sequence);
  input.prompt += ':';
  FillTo(input.prompt, size, random);
  return input;
}

}  // namespace stagegate::load

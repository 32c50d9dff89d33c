#pragma once

#include <cstdint>
#include <string>

namespace stagegate::load {

/// A token count drawn from a normal distribution.
struct TokenSpec {
  double mean = 0;
  double std = 0;  // 0: always the mean
};

struct SyntheticOptions {
  TokenSpec input_tokens{550, 0};
  TokenSpec output_tokens{128, 0};
  uint64_t seed = 0;
};

/// One synthetic request.
struct SyntheticInput {
  std::string prompt;
  int64_t input_tokens = 0;   // what the prompt counts as (see MakeSyntheticInput)
  int64_t output_tokens = 0;  // to ask for, e.g. as max_tokens

  bool operator==(const SyntheticInput&) const = default;
};

/// The largest token count MakeSyntheticInput draws; larger draws are clamped to it.
inline constexpr int64_t kMaxSyntheticTokens = 1'000'000;

/// The synthetic input of request `sequence`, a pure function of (options, sequence): the same
/// sequence gives the same input in any shard, thread and order. Both token counts are drawn from
/// normals (by Box–Muller, from a generator seeded with seed and sequence), rounded to the nearest
/// integer and clamped to [1, kMaxSyntheticTokens] (a non-finite draw gives 1).
///
/// The prompt is exactly 4 * input_tokens bytes, so the reference server's count,
/// max(1, (bytes + 3) / 4), gives input_tokens exactly. It reads "Request <sequence>: " followed by
/// common English words in an order drawn per (seed, sequence), so prompts differ from their second
/// word on and a prefix cache does not trivially hit; ASCII only. Very short prompts are cut inside
/// the "Request" prefix. Phases that must not share prompts need different seeds. Thread-safe.
/// Cost: a few µs to seed the generator plus about 2 µs per 1,000 bytes of prompt (-O2, one core).
SyntheticInput MakeSyntheticInput(const SyntheticOptions& options, int64_t sequence);

}  // namespace stagegate::load

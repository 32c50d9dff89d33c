#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/status.h"
#include "tokenize/tokenizer.h"

namespace stagegate::load {

/// A token count drawn from a normal distribution.
struct TokenSpec {
  double mean = 0;
  double std = 0;  // 0: always the mean
};

/// Prompts that start alike, as a long system prompt or a shared document makes them: `count`
/// prefixes of `tokens` tokens each, one of which starts each of a `share` of the requests.
struct SharedPrefixes {
  int64_t count = 0;  // 0: every prompt is its own from its first word
  int64_t tokens = 0;
  double share = 1;  // in [0, 1]

  bool operator==(const SharedPrefixes&) const = default;
};

struct SyntheticOptions {
  TokenSpec input_tokens{550, 0};
  TokenSpec output_tokens{128, 0};
  uint64_t seed = 0;
  SharedPrefixes prefixes;
  /// The model's tokenizer: prompts are then exactly their input tokens of it, not 4 bytes a
  /// token. Must outlive the options' use.
  const tokenize::Tokenizer* tokenizer = nullptr;
};

/// One synthetic request.
struct SyntheticInput {
  std::string prompt;
  int64_t input_tokens = 0;   // what the prompt counts as (see MakeSyntheticInput)
  int64_t output_tokens = 0;  // to ask for, e.g. as max_tokens
  int64_t prefix = -1;        // the shared prefix it starts with; -1 for none

  bool operator==(const SyntheticInput&) const = default;
};

/// mean + std * z (a standard normal draw), rounded and clamped to [lo, hi]; lo when not finite.
int64_t DrawRounded(const TokenSpec& spec, double z, int64_t lo, int64_t hi);

/// "MEAN" or "MEAN:STD", MEAN in [1, 1e6] and STD in [0, 1e6]; errors name `flag`.
Result<TokenSpec> ParseTokenSpec(const std::string& flag, const std::string& text);

/// "COUNT:TOKENS" or "COUNT:TOKENS:SHARE" (--shared-prefix): COUNT in [1, 1e6], TOKENS in
/// [1, 1e6], SHARE in [0, 1] (default 1).
Result<SharedPrefixes> ParseSharedPrefixes(const std::string& text);

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
///
/// With a tokenizer, the same words are cut to exactly input_tokens tokens of it (encoded, cut
/// at input_tokens ids, decoded, and checked by encoding again; a cut that re-encodes to another
/// count is moved a token at a time until one does), and a shared prefix is exactly
/// prefixes.tokens of them. This encodes the prompt two or three times: about 1 ms for 550
/// tokens (Release, one core).
///
/// With shared prefixes, a `share` of the requests (drawn per request) start with one of the
/// prefixes (drawn uniformly): exactly 4 * prefixes.tokens bytes, the same for every request that
/// draws it, made from (seed, prefix index). The request's own text follows, so input_tokens is
/// at least prefixes.tokens + 1.
/// Cost: a few µs to seed the generator plus about 2 µs per 1,000 bytes of prompt (-O2, one core).
SyntheticInput MakeSyntheticInput(const SyntheticOptions& options, int64_t sequence);

/// The prompt of a trace entry with hash_ids (Mooncake's format): hash_ids[i] names the i-th block
/// of `block_tokens` tokens of the prompt, so entries that list the same first ids share that
/// prefix, as in the traced system. Block i is `min(block_tokens, input_tokens - i * block_tokens)`
/// tokens of text made from (seed, hash id), exactly 4 bytes a token; a prompt longer than its
/// blocks ends with text of its own (from seed and sequence). input_tokens >= 1, block_tokens >= 1.
/// `text`, with words drawn from `random` added while it is short, cut to exactly `tokens`
/// tokens of `tokenizer` (as MakeSyntheticInput does). Best effort for a text that no cut
/// re-encodes to `tokens` (never seen with common English words): the cut at `tokens` ids.
std::string FitToTokens(std::string text, int64_t tokens, const tokenize::Tokenizer& tokenizer,
                        uint64_t seed);

std::string MakeBlockPrompt(uint64_t seed, const std::vector<int64_t>& hash_ids,
                            int64_t block_tokens, int64_t input_tokens, int64_t sequence);

}  // namespace stagegate::load

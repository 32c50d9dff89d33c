#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "manifest/diagnostics.h"

namespace stagegate::sim {

/// What the application does when a persona asks for a document it may not read.
enum class DenialMode { kStatus403, kRefusal };

/// The reference application's latency model and behaviour. Latency emerges from a
/// continuous-batching engine: each engine step admits waiting requests (their prompts cost
/// prefill time), then every running sequence gains one token. A step lasts
/// decode_step_ms + decode_step_per_seq_ms * running + admitted prompt tokens / prefill rate.
struct SimProfile {
  std::string name = "default";
  double prefill_tokens_per_s = 20000;
  double decode_step_ms = 8;
  double decode_step_per_seq_ms = 0.5;
  int64_t max_running = 32;
  int64_t kv_budget_tokens = 24576;
  /// The prefix cache's size in tokens (PrefixCache); 0, the default, turns it off. A prompt
  /// whose first blocks are cached prefills only the rest.
  int64_t prefix_cache_tokens = 0;
  int64_t queue_limit = 64;
  double queue_timeout_ms = 10000;
  int64_t shed_status = 429;  // 429 or 503
  double retry_after_s = 1;
  double retrieval_ms = 15;
  double identity_ms = 2;
  double tool_latency_ms = 25;    // the tool service's own work per call
  double tool_timeout_ms = 2000;  // how long the application waits for a tool
  DenialMode denial = DenialMode::kStatus403;
  std::string fault;  // a misbehaviour applied to every request (see docs/sim.md); "" for none
  /// The model's tokenizer file (a tokenizer.json or SentencePiece .model, resolved): prompt
  /// tokens (usage.prompt_tokens, prefill, the prefix cache's cached_tokens) are counted with it
  /// instead of as 4 bytes a token. "": bytes / 4.
  std::string tokenizer;

  /// True when the model costs no time at all: tokens are produced as fast as they can be sent.
  bool zero_delay() const {
    return prefill_tokens_per_s <= 0 && decode_step_ms <= 0 && decode_step_per_seq_ms <= 0;
  }

  static SimProfile Default();
  /// No model delay, no retrieval or identity delay, no queue limit: for benchmarks of the client.
  static SimProfile Fast();
};

/// "default", "fast", or a YAML file whose keys override the default profile. Problems go to
/// `diagnostics` with their positions.
std::optional<SimProfile> LoadSimProfile(const std::string& name_or_path,
                                         manifest::Diagnostics& diagnostics);

}  // namespace stagegate::sim

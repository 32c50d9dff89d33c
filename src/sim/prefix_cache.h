#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <string_view>
#include <unordered_map>

namespace stagegate::sim {

/// The reference application's prefix cache, as an inference server's (vLLM's automatic prefix
/// caching) behaves: the model input is cut into blocks of kBlockTokens tokens, each known by the
/// hash of everything up to its end, so a block is reused only when the whole prefix before it
/// is the same. A request whose first blocks are cached prefills only the rest. The least
/// recently used blocks are evicted past the capacity. Not thread-safe (the application's one
/// io_context thread uses it).
class PrefixCache {
 public:
  /// The sim counts a token as 4 bytes (CountPromptTokens): a block is 16 tokens, 64 bytes.
  static constexpr int64_t kBlockTokens = 16;
  static constexpr size_t kBlockBytes = 64;

  /// Holds at most `capacity_tokens` tokens (whole blocks); 0 turns caching off.
  explicit PrefixCache(int64_t capacity_tokens);

  /// How many of `text`'s first tokens were cached (whole blocks, never all of a prompt: at
  /// least one token is prefilled, as vLLM recomputes the last), then caches each whole block of
  /// `text` and marks it used. `prompt_tokens` is the prompt's count, the cap. With `count` (the
  /// model's tokenizer), the cached tokens are its count of the cached bytes, not 16 a block.
  int64_t Use(std::string_view text, int64_t prompt_tokens,
              const std::function<int64_t(std::string_view)>& count = {});

  int64_t cached_blocks() const { return static_cast<int64_t>(blocks_.size()); }

 private:
  size_t capacity_blocks_;
  std::list<uint64_t> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> blocks_;
};

}  // namespace stagegate::sim

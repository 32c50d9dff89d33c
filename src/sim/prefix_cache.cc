#include "sim/prefix_cache.h"

#include <algorithm>
#include <functional>

#include "base/hashing.h"

namespace stagegate::sim {

PrefixCache::PrefixCache(int64_t capacity_tokens)
    : capacity_blocks_(static_cast<size_t>(std::max<int64_t>(0, capacity_tokens) / kBlockTokens)) {}

int64_t PrefixCache::Use(std::string_view text, int64_t prompt_tokens,
                         const std::function<int64_t(std::string_view)>& count) {
  if (capacity_blocks_ == 0) return 0;
  int64_t hit_blocks = 0;
  bool hitting = true;
  uint64_t chain = 0;
  for (size_t start = 0; start + kBlockBytes <= text.size(); start += kBlockBytes) {
    chain = Mix64(chain ^ std::hash<std::string_view>()(text.substr(start, kBlockBytes)));
    if (auto found = blocks_.find(chain); found != blocks_.end()) {
      if (hitting) ++hit_blocks;
      lru_.splice(lru_.begin(), lru_, found->second);
      continue;
    }
    hitting = false;
    lru_.push_front(chain);
    blocks_[chain] = lru_.begin();
    if (blocks_.size() > capacity_blocks_) {
      blocks_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  const int64_t hit = count ? count(text.substr(0, static_cast<size_t>(hit_blocks) * kBlockBytes))
                            : hit_blocks * kBlockTokens;
  return std::clamp<int64_t>(hit, 0, std::max<int64_t>(0, prompt_tokens - 1));
}

}  // namespace stagegate::sim

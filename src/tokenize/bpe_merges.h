#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace stagegate::tokenize {

/// One symbol of a word being merged: a token id (or kNoToken for a character outside the
/// vocabulary, which never merges) and the bytes of the word it covers.
struct BpePart {
  static constexpr int32_t kNoToken = -1;
  int32_t id = kNoToken;
  uint32_t begin = 0;
  uint32_t end = 0;
};

/// The ranked merge rules of a BPE vocabulary, over token ids.
class BpeMerges {
 public:
  /// Adds the rule `left right -> merged` with the next rank (rules are added best first). A pair
  /// added again takes the later rank, as in Hugging Face tokenizers and transformers.js.
  void Add(int32_t left, int32_t right, int32_t merged);

  /// Merges `parts` in place: repeatedly the adjacent pair with the best rank, the leftmost of
  /// equals first, until no adjacent pair has a rule. O(n log n) in the number of parts, through a
  /// priority queue over a linked list.
  void Merge(std::vector<BpePart>& parts) const;

  size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    int32_t rank = 0;
    int32_t merged = 0;
  };
  static uint64_t Key(int32_t left, int32_t right) {
    return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
  }
  const Rule* Find(int32_t left, int32_t right) const;

  std::unordered_map<uint64_t, Rule> rules_;
  int32_t next_rank_ = 0;
};

}  // namespace stagegate::tokenize

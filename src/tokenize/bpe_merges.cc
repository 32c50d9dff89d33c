#include "tokenize/bpe_merges.h"

#include <queue>

namespace stagegate::tokenize {

void BpeMerges::Add(int32_t left, int32_t right, int32_t merged) {
  rules_[Key(left, right)] = Rule{.rank = next_rank_++, .merged = merged};
}

const BpeMerges::Rule* BpeMerges::Find(int32_t left, int32_t right) const {
  if (left < 0 || right < 0) return nullptr;
  const auto it = rules_.find(Key(left, right));
  return it == rules_.end() ? nullptr : &it->second;
}

void BpeMerges::Merge(std::vector<BpePart>& parts) const {
  const auto n = static_cast<int32_t>(parts.size());
  if (n < 2) return;
  std::vector<int32_t> next(n);
  std::vector<int32_t> prev(n);
  std::vector<bool> alive(n, true);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }

  // A candidate names the ids it was made for: once either side has changed it is stale, and
  // it is dropped when it comes up.
  struct Candidate {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t merged;
  };
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  const auto consider = [&](int32_t left) {
    const int32_t right = next[left];
    if (right < 0) return;
    const Rule* rule = Find(parts[left].id, parts[right].id);
    if (rule == nullptr) return;
    queue.push(Candidate{rule->rank, left, right, parts[left].id, parts[right].id, rule->merged});
  };
  for (int32_t i = 0; i + 1 < n; ++i)
    consider(i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    if (!alive[c.left] || next[c.left] != c.right || parts[c.left].id != c.left_id ||
        parts[c.right].id != c.right_id)
      continue;
    parts[c.left].id = c.merged;
    parts[c.left].end = parts[c.right].end;
    alive[c.right] = false;
    next[c.left] = next[c.right];
    if (next[c.right] >= 0) prev[next[c.right]] = c.left;
    if (prev[c.left] >= 0) consider(prev[c.left]);
    consider(c.left);
  }

  size_t kept = 0;
  for (int32_t i = 0; i < n; ++i)
    if (alive[i]) parts[kept++] = parts[i];
  parts.resize(kept);
}

}  // namespace stagegate::tokenize

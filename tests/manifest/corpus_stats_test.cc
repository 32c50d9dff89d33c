// corpus stats' near-duplicates: the prefix-filtered search finds exactly the pairs that comparing
// every pair finds, on prompts built to sit near the bound.

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "manifest/corpus_stats.h"

namespace stagegate::manifest {
namespace {

TEST_CASE("SimilarPairs finds every pair that comparing every pair finds", "[manifest][corpus]") {
  std::mt19937_64 rng(20261203);
  std::vector<std::set<std::string>> sets;
  for (int n = 0; n < 300; ++n) {
    std::set<std::string> set;
    if (!sets.empty() && rng() % 2) {
      // A neighbour of an earlier prompt: one word swapped, added or dropped.
      set = sets[rng() % sets.size()];
      const int change = static_cast<int>(rng() % 3);
      if (change != 1 && !set.empty()) set.erase(std::next(set.begin(), rng() % set.size()));
      if (change != 2) set.insert("w" + std::to_string(rng() % 40));
    } else {
      const size_t size = rng() % 12;  // 0..11 words: empty prompts too
      while (set.size() < size)
        set.insert("w" + std::to_string(rng() % 40));
    }
    sets.push_back(set);
  }
  for (double threshold : {0.8, 0.5, 1.0}) {
    std::vector<std::tuple<size_t, size_t, double>> every;
    for (size_t i = 0; i < sets.size(); ++i)
      for (size_t j = i + 1; j < sets.size(); ++j) {
        if (sets[i].empty() || sets[j].empty()) continue;
        size_t common = 0;
        for (const std::string& word : sets[i])
          common += sets[j].count(word);
        const double jaccard = static_cast<double>(common) /
                               static_cast<double>(sets[i].size() + sets[j].size() - common);
        if (jaccard >= threshold) every.emplace_back(i, j, jaccard);
      }
    INFO("threshold " << threshold);
    CHECK(every.size() > 10);  // the data reaches the bound often enough to tell
    CHECK(SimilarPairs(sets, threshold) == every);
  }
}

}  // namespace
}  // namespace stagegate::manifest

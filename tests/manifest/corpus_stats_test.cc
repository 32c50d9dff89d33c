// corpus stats' near-duplicates: the prefix-filtered groups are exactly the connected components
// of the pairs that comparing every pair finds, on prompts
// built to sit near the bound; many alike prompts make one group without keeping their pairs.

#include <catch2/catch.hpp>

#include <map>
#include <numeric>

#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "manifest/corpus_stats.h"

namespace stagegate::manifest {
namespace {

// Prompts of up to 11 words out of 40, half of them a neighbour of an earlier one (one word
// swapped, added or dropped), some empty.
std::vector<std::set<std::string>> NearPrompts(uint64_t seed) {
  std::mt19937_64 rng(seed);
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
  return sets;
}

// Every pair of `sets` with a Jaccard index of at least `threshold`, each pair measured.
std::vector<std::tuple<size_t, size_t, double>> EveryPair(
    const std::vector<std::set<std::string>>& sets, double threshold) {
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
  return every;
}

TEST_CASE("SimilarGroups are the connected components of every similar pair",
          "[manifest][corpus]") {
  for (uint64_t seed : {20261204u, 7u, 99u}) {
    const std::vector<std::set<std::string>> sets = NearPrompts(seed);
    for (double threshold : {0.8, 0.5, 1.0}) {
      // The components, by a plain search over every pair.
      const std::vector<std::tuple<size_t, size_t, double>> every = EveryPair(sets, threshold);
      std::vector<size_t> label(sets.size());
      std::iota(label.begin(), label.end(), size_t{0});
      for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [i, j, similarity] : every) {
          const size_t low = std::min(label[i], label[j]);
          changed = changed || label[i] != low || label[j] != low;
          label[i] = label[j] = low;
        }
      }
      std::map<size_t, std::vector<size_t>> components;
      for (size_t i = 0; i < sets.size(); ++i)
        components[label[i]].push_back(i);
      std::vector<std::vector<size_t>> expected;
      for (const auto& [root, members] : components)
        if (members.size() > 1) expected.push_back(members);

      std::vector<std::vector<size_t>> got;
      for (const auto& group : SimilarGroups(sets, threshold)) {
        const std::vector<size_t>& members = group.first;
        const double similarity = group.second;
        got.push_back(members);
        if (members.size() == 2) {
          // A two-set group's similarity is its one pair's.
          const auto pair = std::find_if(every.begin(), every.end(), [&](const auto& p) {
            return std::get<0>(p) == members[0] && std::get<1>(p) == members[1];
          });
          REQUIRE(pair != every.end());
          CHECK(similarity == Approx(std::get<2>(*pair)));
        }
      }
      INFO("seed " << seed << ", threshold " << threshold);
      CHECK(expected.size() > 3);  // the data makes several groups
      CHECK(got == expected);
    }
  }
}

TEST_CASE("many templated prompts make one group, at a cost linear in the prompts",
          "[manifest][corpus]") {
  // 40 shared words and one of their own: every pair is at 40/42, about 0.95. 3,000 prompts make
  // 4,498,500 such pairs, which the groups never hold; two other templates make two more groups,
  // and a prompt of its own joins none.
  std::vector<std::set<std::string>> sets;
  for (int n = 0; n < 3000; ++n) {
    std::set<std::string> set{"own" + std::to_string(n)};
    const char* stem = n % 3 == 0 ? "a" : n % 3 == 1 ? "b" : "c";
    for (int w = 0; w < 40; ++w)
      set.insert(std::string(stem) + std::to_string(w));
    sets.push_back(set);
  }
  sets.push_back({"alone", "words"});
  const auto groups = SimilarGroups(sets, 0.8);
  REQUIRE(groups.size() == 3);
  for (size_t g = 0; g < 3; ++g) {
    CHECK(groups[g].first.size() == 1000);
    CHECK(groups[g].first.front() == g);
    CHECK(groups[g].first.back() == 2997 + g);
    CHECK(groups[g].second == 0);  // more than two: no single pair's similarity
  }
}

}  // namespace
}  // namespace stagegate::manifest

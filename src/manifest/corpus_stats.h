#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "manifest/corpus.h"

namespace stagegate::manifest {

/// Prompt lengths in words: the shortest, the median and the longest.
struct LengthSpread {
  int64_t tasks = 0;
  int64_t min_words = 0, median_words = 0, max_words = 0;
};

/// Two tasks whose prompts are alike: `similarity` is the Jaccard index of their word sets
/// (1 for a duplicate: the same words once case and punctuation are set aside).
struct SimilarPair {
  std::string first, second;
  double similarity = 0;
};

/// What `stagegate corpus stats` shows: whether the corpus looks like what users ask.
struct CorpusStats {
  LengthSpread all;
  std::map<std::string, LengthSpread> by_category;
  std::vector<SimilarPair> duplicates;         // similarity 1
  std::vector<SimilarPair> near_duplicates;    // at least kNearDuplicate, below 1
  std::vector<std::string> without_reference;  // no reference text and no checks
  std::vector<std::string> examples;           // still init's examples
  std::vector<std::string> multi_turn;         // with follow-ups
  bool pairs_compared = true;                  // false past kMaxCompared tasks
};

inline constexpr double kNearDuplicate = 0.8;
inline constexpr size_t kMaxCompared = 20'000;

/// The pairs (i, j, Jaccard index), i < j, of `sets` whose Jaccard index is at least
/// `threshold` (0 < threshold <= 1), in (i, j) order; empty sets pair with nothing. Only pairs
/// whose rarest words meet are measured (a prefix filter), so a corpus of many distinct prompts
/// costs far less than every pair.
std::vector<std::tuple<size_t, size_t, double>> SimilarPairs(
    const std::vector<std::set<std::string>>& sets, double threshold);

/// The statistics of a loaded corpus. A task given as messages counts its last user message.
CorpusStats ComputeCorpusStats(const Corpus& corpus);

std::vector<std::string> DescribeCorpusStats(const CorpusStats& stats);
nlohmann::json CorpusStatsToJson(const CorpusStats& stats);

}  // namespace stagegate::manifest

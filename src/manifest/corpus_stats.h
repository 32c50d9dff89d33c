#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "manifest/corpus.h"

namespace stagegate::manifest {

/// Prompt lengths in words: the shortest, the median and the longest.
struct LengthSpread {
  int64_t tasks = 0;
  int64_t min_words = 0, median_words = 0, max_words = 0;
};

/// Tasks whose prompts are alike, in corpus order. In a duplicate group every prompt has the same
/// words (case and punctuation aside); in a near-duplicate group each shares at least
/// kNearDuplicate of its words (Jaccard index of the word sets) with another of the group, and
/// not all are duplicates of one another. `similarity` is that of the group's one pair when it
/// has two distinct prompts, else 0.
struct SimilarGroup {
  std::vector<std::string> tasks;
  double similarity = 0;
};

/// What `stagegate corpus stats` shows: whether the corpus looks like what users ask. Every list
/// holds each task at most once, so all of it is linear in the corpus.
struct CorpusStats {
  LengthSpread all;
  std::map<std::string, LengthSpread> by_category;
  std::vector<SimilarGroup> duplicates;
  std::vector<SimilarGroup> near_duplicates;
  std::vector<std::string> without_reference;  // no reference text and no checks
  std::vector<std::string> examples;           // still init's examples
  std::vector<std::string> multi_turn;         // with follow-ups
  bool pairs_compared = true;                  // false past kMaxCompared tasks
};

inline constexpr double kNearDuplicate = 0.8;
inline constexpr size_t kMaxCompared = 20'000;
/// How many groups, and ids of a list or group, the text form shows (the JSON has all).
inline constexpr size_t kShownGroups = 10;
inline constexpr size_t kShownIds = 10;

/// The groups of `sets` joined by pairs of Jaccard index at least `threshold`: the connected
/// components, of two or more sets, of the graph whose edges are those pairs, each in ascending
/// order, ordered by their first set. Empty sets join nothing. Each pair of a group is measured
/// at most once and a set's pairs stop at its group, so memory is linear and many alike prompts
/// cost little; the pairs themselves are not kept. Only pairs whose rarest words meet are
/// measured (a prefix filter). `similarity` of a two-set group is its pair's.
std::vector<std::pair<std::vector<size_t>, double>> SimilarGroups(
    const std::vector<std::set<std::string>>& sets, double threshold);

/// The statistics of a loaded corpus. A task given as messages counts its last user message.
CorpusStats ComputeCorpusStats(const Corpus& corpus);

std::vector<std::string> DescribeCorpusStats(const CorpusStats& stats);
nlohmann::json CorpusStatsToJson(const CorpusStats& stats);

}  // namespace stagegate::manifest

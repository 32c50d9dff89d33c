#include "manifest/corpus_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "base/strings.h"

namespace stagegate::manifest {
namespace {

// The words of a prompt: runs of letters and digits, lower-cased (bytes of UTF-8 sequences kept
// as letters, so that any script splits on spaces and punctuation).
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c >= 0x80) {
      word += static_cast<char>(std::tolower(c));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string PromptOf(const Task& task) {
  if (!task.prompt.empty()) return task.prompt;
  for (auto m = task.messages.rbegin(); m != task.messages.rend(); ++m)
    if (m->role == "user") return m->content;
  return "";
}

LengthSpread Spread(std::vector<int64_t> words) {
  LengthSpread s{.tasks = static_cast<int64_t>(words.size())};
  if (words.empty()) return s;
  std::sort(words.begin(), words.end());
  s.min_words = words.front();
  s.median_words = words[(words.size() - 1) / 2];
  s.max_words = words.back();
  return s;
}

std::string DescribeSpread(const LengthSpread& s) {
  return std::to_string(s.tasks) + (s.tasks == 1 ? " task, " : " tasks, ") +
         std::to_string(s.min_words) + "/" + std::to_string(s.median_words) + "/" +
         std::to_string(s.max_words) + " words (shortest/median/longest)";
}

nlohmann::json SpreadJson(const LengthSpread& s) {
  return {{"tasks", s.tasks},
          {"min_words", s.min_words},
          {"median_words", s.median_words},
          {"max_words", s.max_words}};
}

}  // namespace

std::vector<std::tuple<size_t, size_t, double>> SimilarPairs(
    const std::vector<std::set<std::string>>& sets, double threshold) {
  // Words as numbers, rarest first: the order the prefix filter needs.
  std::map<std::string, int64_t> frequency;
  for (const std::set<std::string>& set : sets)
    for (const std::string& word : set)
      ++frequency[word];
  std::vector<std::pair<int64_t, std::string>> by_rarity;
  for (const auto& [word, count] : frequency)
    by_rarity.emplace_back(count, word);
  std::sort(by_rarity.begin(), by_rarity.end());
  std::map<std::string, int32_t> rank;
  for (size_t r = 0; r < by_rarity.size(); ++r)
    rank[by_rarity[r].second] = static_cast<int32_t>(r);
  std::vector<std::vector<int32_t>> ranked(sets.size());
  for (size_t i = 0; i < sets.size(); ++i) {
    for (const std::string& word : sets[i])
      ranked[i].push_back(rank.at(word));
    std::sort(ranked[i].begin(), ranked[i].end());
  }
  // Prefix filter: when J(x, y) >= t the two share at least ceil(t |x|) words, so the first
  // |x| - ceil(t |x|) + 1 of x's (rarest first) and of y's hold a word in common. Only pairs
  // whose prefixes meet are measured. The epsilon errs towards longer prefixes: more pairs
  // measured, none missed.
  const auto prefix = [threshold](size_t size) {
    const auto needed =
        static_cast<size_t>(std::ceil(threshold * static_cast<double>(size) - 1e-9));
    return size - std::min(size, needed) + 1;
  };
  std::map<int32_t, std::vector<size_t>> index;  // word -> sets whose prefix holds it
  std::vector<std::tuple<size_t, size_t, double>> pairs;
  for (size_t j = 0; j < ranked.size(); ++j) {
    const std::vector<int32_t>& y = ranked[j];
    if (y.empty()) continue;
    std::set<size_t> candidates;
    const size_t p = std::min(prefix(y.size()), y.size());
    for (size_t k = 0; k < p; ++k) {
      std::vector<size_t>& holders = index[y[k]];
      candidates.insert(holders.begin(), holders.end());
      holders.push_back(j);
    }
    for (size_t i : candidates) {
      const std::vector<int32_t>& x = ranked[i];
      const double smaller = static_cast<double>(std::min(x.size(), y.size()));
      const double larger = static_cast<double>(std::max(x.size(), y.size()));
      if (smaller < threshold * larger) continue;  // the index cannot reach the bound
      std::vector<int32_t> common;
      std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(common));
      const double similarity = static_cast<double>(common.size()) /
                                static_cast<double>(x.size() + y.size() - common.size());
      if (similarity >= threshold) pairs.emplace_back(i, j, similarity);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

CorpusStats ComputeCorpusStats(const Corpus& corpus) {
  CorpusStats stats;
  std::vector<int64_t> all;
  std::map<std::string, std::vector<int64_t>> by_category;
  std::vector<std::set<std::string>> word_sets;  // of each task, in corpus order
  for (const Task& task : corpus.tasks) {
    const std::vector<std::string> words = Words(PromptOf(task));
    all.push_back(static_cast<int64_t>(words.size()));
    by_category[task.category].push_back(static_cast<int64_t>(words.size()));
    word_sets.emplace_back(words.begin(), words.end());
    if (Trim(task.reference).empty() && task.checks.empty())
      stats.without_reference.push_back(task.id);
    if (task.example) stats.examples.push_back(task.id);
    if (!task.follow_ups.empty()) stats.multi_turn.push_back(task.id);
  }
  stats.all = Spread(all);
  for (auto& [category, words] : by_category)
    stats.by_category[category] = Spread(words);
  stats.pairs_compared = corpus.tasks.size() <= kMaxCompared;
  if (!stats.pairs_compared) return stats;
  for (const auto& [i, j, similarity] : SimilarPairs(word_sets, kNearDuplicate)) {
    SimilarPair pair{corpus.tasks[i].id, corpus.tasks[j].id, similarity};
    (similarity >= 1 ? stats.duplicates : stats.near_duplicates).push_back(pair);
  }
  return stats;
}

std::vector<std::string> DescribeCorpusStats(const CorpusStats& stats) {
  std::vector<std::string> lines;
  lines.push_back("prompts      " + DescribeSpread(stats.all));
  for (const auto& [category, spread] : stats.by_category)
    lines.push_back("  " + category + ": " + DescribeSpread(spread));
  const auto list = [&](const char* label, const std::vector<std::string>& ids,
                        const std::string& advice) {
    lines.push_back(std::string(label) + std::to_string(ids.size()) +
                    (ids.empty() ? "" : ": " + Join(ids, ", ") + advice));
  };
  lines.push_back("duplicates   " + std::to_string(stats.duplicates.size()) +
                  (stats.duplicates.empty()       ? ""
                   : stats.duplicates.size() == 1 ? " pair (the same words)"
                                                  : " pairs (the same words)"));
  for (const SimilarPair& pair : stats.duplicates)
    lines.push_back("  " + pair.first + " = " + pair.second);
  lines.push_back("near-duplicates " + std::to_string(stats.near_duplicates.size()) +
                  (stats.near_duplicates.empty()       ? ""
                   : stats.near_duplicates.size() == 1 ? " pair (word overlap at least 0.8)"
                                                       : " pairs (word overlap at least 0.8)"));
  for (const SimilarPair& pair : stats.near_duplicates)
    lines.push_back("  " + pair.first + " ~ " + pair.second + " (" +
                    FormatNumber(pair.similarity, 2) + ")");
  if (!stats.pairs_compared) lines.push_back("  (not compared: more than 20,000 tasks)");
  list("without reference ", stats.without_reference,
       " (no reference and no checks: reviewers and checks have nothing to go by)");
  list("examples     ", stats.examples,
       " (written by stagegate init: replace them with the team's approved questions)");
  if (!stats.multi_turn.empty()) list("multi-turn   ", stats.multi_turn, "");
  return lines;
}

nlohmann::json CorpusStatsToJson(const CorpusStats& stats) {
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& [category, spread] : stats.by_category)
    categories[category] = SpreadJson(spread);
  const auto pairs = [](const std::vector<SimilarPair>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const SimilarPair& p : list)
      out.push_back({{"first", p.first}, {"second", p.second}, {"similarity", p.similarity}});
    return out;
  };
  return {{"prompts", SpreadJson(stats.all)},
          {"categories", categories},
          {"duplicates", pairs(stats.duplicates)},
          {"near_duplicates", pairs(stats.near_duplicates)},
          {"pairs_compared", stats.pairs_compared},
          {"without_reference", stats.without_reference},
          {"examples", stats.examples},
          {"multi_turn", stats.multi_turn}};
}

}  // namespace stagegate::manifest

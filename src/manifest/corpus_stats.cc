#include "manifest/corpus_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

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

namespace {

// Each set's words as numbers, rarest first (ties by the word), each set sorted: the order the
// prefix filter needs.
std::vector<std::vector<int32_t>> RankWords(const std::vector<std::set<std::string>>& sets) {
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
  return ranked;
}

// Prefix filter: when J(x, y) >= t the two share at least ceil(t |x|) words, so the first
// |x| - ceil(t |x|) + 1 of x's (rarest first) and of y's hold a word in common. Only pairs whose
// prefixes meet need measuring. The epsilon errs towards longer prefixes: more pairs measured,
// none missed.
size_t PrefixLength(double threshold, size_t size) {
  const auto needed = static_cast<size_t>(std::ceil(threshold * static_cast<double>(size) - 1e-9));
  return std::min(size - std::min(size, needed) + 1, size);
}

// The Jaccard index of two sorted sets, or -1 when their sizes alone keep it below `threshold`.
double Jaccard(const std::vector<int32_t>& x, const std::vector<int32_t>& y, double threshold) {
  const double smaller = static_cast<double>(std::min(x.size(), y.size()));
  const double larger = static_cast<double>(std::max(x.size(), y.size()));
  if (smaller < threshold * larger) return -1;
  size_t common = 0;
  for (auto a = x.begin(), b = y.begin(); a != x.end() && b != y.end();) {
    if (*a < *b) {
      ++a;
    } else if (*b < *a) {
      ++b;
    } else {
      ++common, ++a, ++b;
    }
  }
  return static_cast<double>(common) / static_cast<double>(x.size() + y.size() - common);
}

// Disjoint sets of 0..n-1; a group's root is its lowest member.
class Groups {
 public:
  explicit Groups(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i)
      parent_[i] = i;
  }
  size_t Find(size_t i) {
    while (parent_[i] != i)
      i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Join(size_t a, size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<size_t> parent_;
};

}  // namespace

std::vector<std::pair<std::vector<size_t>, double>> SimilarGroups(
    const std::vector<std::set<std::string>>& sets, double threshold) {
  const std::vector<std::vector<int32_t>> ranked = RankWords(sets);
  Groups groups(sets.size());
  // The sets whose prefix holds a word, in order, cut into runs of one group each. Groups only
  // merge, so a run stays one group, and a set already in a run's group skips the whole run: a
  // thousand alike prompts cost a thousand looks per word, not a million.
  struct Postings {
    std::vector<size_t> holders;
    std::vector<size_t> runs;  // the index in `holders` where each run starts
  };
  std::map<int32_t, Postings> index;
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> measured_for(sets.size(), kNone);  // j, once a set was measured against j
  for (size_t j = 0; j < ranked.size(); ++j) {
    const std::vector<int32_t>& y = ranked[j];
    const size_t prefix = PrefixLength(threshold, y.size());
    for (size_t k = 0; k < prefix; ++k) {
      const Postings& postings = index[y[k]];
      for (size_t r = 0; r < postings.runs.size(); ++r) {
        const size_t begin = postings.runs[r];
        const size_t end =
            r + 1 < postings.runs.size() ? postings.runs[r + 1] : postings.holders.size();
        if (groups.Find(postings.holders[begin]) == groups.Find(j)) continue;
        for (size_t m = begin; m < end; ++m) {
          const size_t i = postings.holders[m];
          if (measured_for[i] == j) continue;
          measured_for[i] = j;
          if (Jaccard(ranked[i], y, threshold) >= threshold) {
            groups.Join(i, j);
            break;  // the rest of the run is in j's group now
          }
        }
      }
    }
    for (size_t k = 0; k < prefix; ++k) {
      Postings& postings = index[y[k]];
      if (postings.holders.empty() || groups.Find(postings.holders.back()) != groups.Find(j))
        postings.runs.push_back(postings.holders.size());
      postings.holders.push_back(j);
    }
  }
  std::map<size_t, std::vector<size_t>> by_root;  // ordered by each group's first set
  for (size_t i = 0; i < sets.size(); ++i)
    by_root[groups.Find(i)].push_back(i);
  std::vector<std::pair<std::vector<size_t>, double>> out;
  for (auto& [root, members] : by_root) {
    if (members.size() < 2) continue;
    const double similarity =
        members.size() == 2 ? Jaccard(ranked[members[0]], ranked[members[1]], 0) : 0;
    out.emplace_back(std::move(members), similarity);
  }
  return out;
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

  // Duplicates first: the tasks of each distinct word set. Near-duplicates are then looked for
  // among the distinct sets alone, each standing for its duplicates.
  std::vector<size_t> order(word_sets.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return word_sets[a] < word_sets[b]; });
  std::vector<std::vector<size_t>> same;  // tasks of each distinct non-empty set, first task first
  for (size_t k = 0; k < order.size(); ++k) {
    if (word_sets[order[k]].empty()) continue;
    if (k == 0 || word_sets[order[k]] != word_sets[order[k - 1]]) same.emplace_back();
    same.back().push_back(order[k]);
  }
  std::sort(same.begin(), same.end());
  const auto ids = [&](const std::vector<size_t>& tasks) {
    std::vector<std::string> out;
    for (size_t i : tasks)
      out.push_back(corpus.tasks[i].id);
    return out;
  };
  std::vector<std::set<std::string>> distinct;  // taken from word_sets, which is done with
  for (const std::vector<size_t>& tasks : same) {
    if (tasks.size() > 1) stats.duplicates.push_back({ids(tasks), 1});
    distinct.push_back(std::move(word_sets[tasks.front()]));
  }
  word_sets.clear();
  for (const auto& [members, similarity] : SimilarGroups(distinct, kNearDuplicate)) {
    std::vector<size_t> tasks;
    for (size_t m : members)
      tasks.insert(tasks.end(), same[m].begin(), same[m].end());
    std::sort(tasks.begin(), tasks.end());
    stats.near_duplicates.push_back({ids(tasks), similarity});
  }
  return stats;
}

namespace {

std::string Count(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// At most kShownIds of `ids`, joined by `separator`, and how many more there are.
std::string FirstIds(const std::vector<std::string>& ids, const std::string& separator) {
  const size_t shown = std::min(ids.size(), kShownIds);
  std::string text = Join(std::vector<std::string>(ids.begin(), ids.begin() + shown), separator);
  if (ids.size() > shown) text += " and " + std::to_string(ids.size() - shown) + " more";
  return text;
}

size_t TasksIn(const std::vector<SimilarGroup>& groups) {
  size_t n = 0;
  for (const SimilarGroup& group : groups)
    n += group.tasks.size();
  return n;
}

}  // namespace

std::vector<std::string> DescribeCorpusStats(const CorpusStats& stats) {
  std::vector<std::string> lines;
  lines.push_back("prompts      " + DescribeSpread(stats.all));
  for (const auto& [category, spread] : stats.by_category)
    lines.push_back("  " + category + ": " + DescribeSpread(spread));
  const auto list = [&](const char* label, const std::vector<std::string>& ids,
                        const std::string& advice) {
    lines.push_back(std::string(label) + std::to_string(ids.size()) +
                    (ids.empty() ? "" : ": " + FirstIds(ids, ", ") + advice));
  };
  const auto groups = [&](const std::string& label, const std::vector<SimilarGroup>& found,
                          const std::string& what, const std::string& separator) {
    if (!stats.pairs_compared) {
      lines.push_back(label + "not compared: more than " + std::to_string(kMaxCompared) + " tasks");
      return;
    }
    lines.push_back(label + (found.empty()
                                 ? "0"
                                 : Count(found.size(), "group", "groups") + " of " +
                                       Count(TasksIn(found), "task", "tasks") + " (" + what + ")"));
    for (size_t g = 0; g < std::min(found.size(), kShownGroups); ++g) {
      const SimilarGroup& group = found[g];
      lines.push_back("  " + FirstIds(group.tasks, separator) +
                      (group.similarity > 0 && group.similarity < 1
                           ? " (" + FormatNumber(group.similarity, 2) + ")"
                           : ""));
    }
    if (found.size() > kShownGroups)
      lines.push_back("  and " + Count(found.size() - kShownGroups, "more group", "more groups") +
                      " (--json lists every group)");
  };
  groups("duplicates   ", stats.duplicates, "the same words", " = ");
  groups("near-duplicates ", stats.near_duplicates,
         "each shares at least 0.8 of its words with another of its group", " ~ ");
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
  const auto groups = [](const std::vector<SimilarGroup>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const SimilarGroup& group : list) {
      nlohmann::json entry = {{"tasks", group.tasks}};
      if (group.similarity > 0 && group.similarity < 1) entry["similarity"] = group.similarity;
      out.push_back(std::move(entry));
    }
    return out;
  };
  return {{"prompts", SpreadJson(stats.all)},
          {"categories", categories},
          {"pairs_compared", stats.pairs_compared},
          {"duplicates", groups(stats.duplicates)},
          {"near_duplicates", groups(stats.near_duplicates)},
          {"without_reference", stats.without_reference},
          {"examples", stats.examples},
          {"multi_turn", stats.multi_turn}};
}

}  // namespace stagegate::manifest

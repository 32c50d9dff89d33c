#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "manifest/corpus.h"

namespace stagegate::sim {

/// One retrieved document and the part of it that answers the query.
struct Passage {
  const manifest::Document* document;  // points into the documents given to the index
  double score;                        // BM25, > 0
  std::string text;                    // the best-matching paragraph of the document, plain text
};

/// The words of `text` that retrieval compares: lower-case ASCII alphanumeric runs (digits kept, so
/// "L4" gives "l4"), English stop words removed, and a trailing plural 's' dropped from words
/// longer than 3 letters ("days" -> "day", "bus" stays). Any other byte (punctuation, UTF-8)
/// separates words.
std::vector<std::string> SearchTerms(std::string_view text);

/// Okapi BM25 over a fixed set of documents, with passage extraction for the answer.
/// Immutable after construction, so Search may be called from any number of threads at once.
class RetrievalIndex {
 public:
  /// Indexes `documents` (the title counts twice, then the body). `documents` must outlive the
  /// index and must not change while it exists.
  explicit RetrievalIndex(const std::vector<manifest::Document>& documents);

  /// The top `k` documents by Okapi BM25 (k1 = 1.2, b = 0.75,
  /// idf = ln(1 + (N - n + 0.5) / (n + 0.5)), each distinct query term counted once) for `query`,
  /// best first, ties broken by document order; only documents with score > 0. `allowed`, when set,
  /// is called at most once per matching document and excludes those it rejects before the top `k`
  /// are taken; an empty function allows all.
  ///
  /// Passage text: the body split into paragraphs at blank lines and headings, with markdown
  /// (headings, `**`, list bullets, table pipes) turned into plain sentences; each list item and
  /// table row is one sentence. The paragraph with the highest count of distinct query terms, plus
  /// those in its section heading, wins (the first on ties). One longer than about 400 bytes is cut
  /// to whole sentences around its best one. A restricted document's passage ends with
  /// " [" + canary + "]".
  std::vector<Passage> Search(
      std::string_view query, size_t k,
      const std::function<bool(const manifest::Document&)>& allowed = {}) const;

 private:
  // Term lists are sorted and without repeats.
  struct Paragraph {
    std::vector<std::string> sentences;           // plain text, in order
    std::vector<std::vector<std::string>> terms;  // the terms of each sentence
    std::vector<std::string> all_terms;           // the terms of all its sentences
    std::vector<std::string> heading_terms;       // the terms of its section heading
  };
  struct Entry {
    const manifest::Document* document = nullptr;
    std::unordered_map<std::string, int> term_counts;  // title twice + body
    double length = 0;                                 // number of terms
    std::vector<Paragraph> paragraphs;
  };

  static std::string PassageText(const Entry& entry, const std::vector<std::string>& query_terms);

  std::vector<Entry> entries_;
  std::unordered_map<std::string, int> document_frequency_;
  double average_length_ = 0;
};

}  // namespace stagegate::sim

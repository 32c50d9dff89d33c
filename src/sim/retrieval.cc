#include "sim/retrieval.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/strings.h"

namespace stagegate::sim {
namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr size_t kMaxPassageBytes = 400;

// Question words, pronouns, auxiliaries and contraction tails: words that say nothing about which
// document answers. Kept short on purpose; BM25's idf discounts the remaining common words.
const std::set<std::string, std::less<>> kStopWords = {
    "a",      "about", "actually", "am",   "an",    "and",    "any",     "are",   "aren",
    "as",     "at",    "be",       "been", "but",   "by",     "can",     "cant",  "could",
    "couldn", "d",     "did",      "didn", "do",    "does",   "doesn",   "don",   "dont",
    "for",    "from",  "get",      "got",  "had",   "has",    "have",    "haven", "he",
    "her",    "his",   "how",      "i",    "if",    "im",     "in",      "into",  "is",
    "isn",    "it",    "its",      "ive",  "just",  "ll",     "m",       "many",  "me",
    "much",   "my",    "no",       "not",  "of",    "ok",     "on",      "or",    "our",
    "please", "re",    "really",   "s",    "she",   "should", "shouldn", "so",    "still",
    "t",      "than",  "that",     "the",  "their", "them",   "then",    "there", "these",
    "they",   "this",  "those",    "to",   "too",   "up",     "us",      "ve",    "was",
    "wasn",   "we",    "were",     "what", "whats", "when",   "where",   "which", "who",
    "why",    "will",  "with",     "won",  "would", "wouldn", "you",     "your",  "yours",
};

bool IsWordByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Markdown emphasis and code markers removed, runs of whitespace made one space.
std::string Plain(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((text[i] == '*' || text[i] == '_') && i + 1 < text.size() && text[i + 1] == text[i]) {
      ++i;
      continue;
    }
    if (text[i] == '`') continue;
    const bool space = text[i] == ' ' || text[i] == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : text[i];
  }
  return std::string(Trim(out));
}

std::string EndSentence(std::string text) {
  if (!text.empty() && std::string_view(".!?:;").find(text.back()) == std::string_view::npos)
    text += '.';
  return text;
}

// Prose split after '.', '!' or '?' followed by a space and what starts a sentence.
std::vector<std::string> SplitSentences(const std::string& prose) {
  std::vector<std::string> sentences;
  size_t start = 0;
  for (size_t i = 0; i + 2 < prose.size(); ++i) {
    const char next = prose[i + 2];
    const bool starts = (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') ||
                        next == '"' || next == '(' || static_cast<unsigned char>(next) >= 0x80;
    if (std::string_view(".!?").find(prose[i]) != std::string_view::npos && prose[i + 1] == ' ' &&
        starts) {
      sentences.push_back(prose.substr(start, i + 1 - start));
      start = i + 2;
    }
  }
  if (start < prose.size()) sentences.push_back(prose.substr(start));
  return sentences;
}

// The length of a list marker ("- ", "* ", "+ ", "12. ", "3) ") at the start of `line`, or 0.
size_t ListMarker(std::string_view line) {
  if (line.size() >= 2 && std::string_view("-*+").find(line[0]) != std::string_view::npos &&
      line[1] == ' ')
    return 2;
  size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  if (digits > 0 && digits + 1 < line.size() && (line[digits] == '.' || line[digits] == ')') &&
      line[digits + 1] == ' ')
    return digits + 2;
  return 0;
}

std::vector<std::string> TableCells(std::string_view row) {
  row = Trim(row);
  if (!row.empty() && row.front() == '|') row.remove_prefix(1);
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  std::vector<std::string> cells;
  for (const std::string& cell : Split(row, '|'))
    cells.push_back(Plain(cell));
  return cells;
}

bool IsTableSeparator(const std::vector<std::string>& cells) {
  for (const std::string& cell : cells)
    if (cell.find_first_not_of("-: ") != std::string::npos) return false;
  return true;
}

// "Level: L4; Leeds (GBP): £47,000 – £59,000." from a row and its header.
std::string TableRowSentence(const std::vector<std::string>& header,
                             const std::vector<std::string>& cells) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].empty()) continue;
    const bool labelled = i < header.size() && !header[i].empty();
    parts.push_back(labelled ? header[i] + ": " + cells[i] : cells[i]);
  }
  return Join(parts, "; ");
}

struct RawParagraph {
  std::string heading;
  std::vector<std::string> sentences;
};

// The body as paragraphs of plain sentences. Headings end a paragraph and name the section of the
// ones after them; each list item and table row is one sentence.
std::vector<RawParagraph> SplitParagraphs(std::string_view body) {
  std::vector<RawParagraph> paragraphs;
  std::string heading;
  std::vector<std::string> sentences;
  std::string prose;
  std::vector<std::string> table_header;
  bool in_list_item = false;
  auto flush_prose = [&] {
    for (std::string& sentence : SplitSentences(prose))
      sentences.push_back(std::move(sentence));
    prose.clear();
  };
  auto end_paragraph = [&] {
    flush_prose();
    for (std::string& sentence : sentences)
      sentence = EndSentence(std::move(sentence));
    if (!sentences.empty()) paragraphs.push_back({heading, std::move(sentences)});
    sentences.clear();
    table_header.clear();
    in_list_item = false;
  };
  for (std::string_view line : Split(body, '\n')) {
    const std::string_view text = Trim(line);
    if (text.empty()) {
      end_paragraph();
    } else if (text.front() == '#') {
      end_paragraph();
      // The top-level heading repeats the title, which already ranked the document.
      const size_t level = text.find_first_not_of('#');
      heading = level == 1 ? "" : Plain(text.substr(level));
      // A section number ("4.", "2.1") is not a word of the section.
      const size_t number = heading.find_first_not_of("0123456789.");
      if (number != std::string::npos && heading[number] == ' ' && heading.find('.') < number)
        heading.erase(0, number + 1);
    } else if (text.front() == '|') {
      flush_prose();
      in_list_item = false;
      std::vector<std::string> cells = TableCells(text);
      if (IsTableSeparator(cells)) continue;
      if (table_header.empty()) {
        table_header = std::move(cells);
      } else if (std::string row = TableRowSentence(table_header, cells); !row.empty()) {
        sentences.push_back(std::move(row));
      }
    } else if (size_t marker = ListMarker(text); marker > 0) {
      flush_prose();
      sentences.push_back(Plain(text.substr(marker)));
      in_list_item = true;
    } else if (in_list_item && prose.empty() && line.front() == ' ') {
      sentences.back() += " " + Plain(text);  // an item's continuation line
    } else {
      in_list_item = false;
      prose += (prose.empty() ? "" : " ") + Plain(text);
    }
  }
  end_paragraph();
  return paragraphs;
}

// Sorted, without repeats: the form every term list below is kept in.
std::vector<std::string> TermSet(std::vector<std::string> terms) {
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  return terms;
}

// How many distinct query terms `terms` contains (both sorted, without repeats).
int CountHits(const std::vector<std::string>& terms, const std::vector<std::string>& query_terms) {
  int hits = 0;
  auto a = terms.begin();
  auto b = query_terms.begin();
  while (a != terms.end() && b != query_terms.end()) {
    if (*a < *b) {
      ++a;
    } else if (*b < *a) {
      ++b;
    } else {
      ++hits;
      ++a;
      ++b;
    }
  }
  return hits;
}

// A single sentence longer than the limit: cut at the last sentence end, else the last space.
std::string CutSentence(const std::string& sentence) {
  std::string_view head = std::string_view(sentence).substr(0, kMaxPassageBytes);
  size_t end = head.rfind(". ");
  if (end != std::string_view::npos && end > kMaxPassageBytes / 2)
    return sentence.substr(0, end + 1);
  size_t space = head.rfind(' ');
  return std::string(head.substr(0, space == std::string_view::npos ? head.size() : space)) +
         " ...";
}

}  // namespace

std::vector<std::string> SearchTerms(std::string_view text) {
  std::vector<std::string> terms;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsWordByte(text[i])) {
      ++i;
      continue;
    }
    std::string word;
    for (; i < text.size() && IsWordByte(text[i]); ++i)
      word += static_cast<char>(text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i]);
    if (kStopWords.count(word) > 0) continue;
    if (word.size() > 3 && word.back() == 's') word.pop_back();
    terms.push_back(std::move(word));
  }
  return terms;
}

RetrievalIndex::RetrievalIndex(const std::vector<manifest::Document>& documents) {
  double total_length = 0;
  for (const manifest::Document& document : documents) {
    Entry entry;
    entry.document = &document;
    std::vector<std::string> terms = SearchTerms(document.title + "\n" + document.title + "\n");
    std::vector<std::string> body_terms = SearchTerms(document.body);
    terms.insert(terms.end(), body_terms.begin(), body_terms.end());
    for (const std::string& term : terms)
      ++entry.term_counts[term];
    for (const auto& [term, count] : entry.term_counts)
      ++document_frequency_[term];
    entry.length = static_cast<double>(terms.size());
    total_length += entry.length;
    for (RawParagraph& raw : SplitParagraphs(document.body)) {
      Paragraph paragraph;
      paragraph.sentences = std::move(raw.sentences);
      paragraph.heading_terms = TermSet(SearchTerms(raw.heading));
      std::vector<std::string> all_terms;
      for (const std::string& sentence : paragraph.sentences) {
        paragraph.terms.push_back(TermSet(SearchTerms(sentence)));
        all_terms.insert(all_terms.end(), paragraph.terms.back().begin(),
                         paragraph.terms.back().end());
      }
      paragraph.all_terms = TermSet(std::move(all_terms));
      entry.paragraphs.push_back(std::move(paragraph));
    }
    entries_.push_back(std::move(entry));
  }
  if (!entries_.empty()) average_length_ = total_length / static_cast<double>(entries_.size());
}

std::vector<Passage> RetrievalIndex::Search(
    std::string_view query, size_t k,
    const std::function<bool(const manifest::Document&)>& allowed) const {
  const std::vector<std::string> query_terms = TermSet(SearchTerms(query));

  const double n_documents = static_cast<double>(entries_.size());
  std::vector<std::pair<double, const Entry*>> scored;
  for (const Entry& entry : entries_) {
    double score = 0;
    for (const std::string& term : query_terms) {
      auto count = entry.term_counts.find(term);
      if (count == entry.term_counts.end()) continue;
      const double n = document_frequency_.at(term);
      const double idf = std::log(1 + (n_documents - n + 0.5) / (n + 0.5));
      const double f = count->second;
      const double norm = 1 - kB + kB * entry.length / std::max(average_length_, 1.0);
      score += idf * f * (kK1 + 1) / (f + kK1 * norm);
    }
    if (score > 0 && (!allowed || allowed(*entry.document))) scored.emplace_back(score, &entry);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (scored.size() > k) scored.resize(k);

  std::vector<Passage> passages;
  for (const auto& [score, entry] : scored)
    passages.push_back({entry->document, score, PassageText(*entry, query_terms)});
  return passages;
}

std::string RetrievalIndex::PassageText(const Entry& entry,
                                        const std::vector<std::string>& query_terms) {
  const Paragraph* best = nullptr;
  int best_hits = -1;
  for (const Paragraph& paragraph : entry.paragraphs) {
    const int hits = CountHits(paragraph.heading_terms, query_terms) +
                     CountHits(paragraph.all_terms, query_terms);
    if (hits > best_hits) {
      best = &paragraph;
      best_hits = hits;
    }
  }
  std::string text;
  if (best != nullptr) {
    // The window of whole sentences around the best one: forward first, then backward.
    const std::vector<std::string>& sentences = best->sentences;
    size_t anchor = 0;
    int anchor_hits = -1;
    for (size_t i = 0; i < sentences.size(); ++i) {
      const int hits = CountHits(best->terms[i], query_terms);
      if (hits > anchor_hits) {
        anchor = i;
        anchor_hits = hits;
      }
    }
    size_t first = anchor;
    size_t last = anchor + 1;
    size_t bytes = sentences[anchor].size();
    while (last < sentences.size() && bytes + 1 + sentences[last].size() <= kMaxPassageBytes)
      bytes += 1 + sentences[last++].size();
    while (first > 0 && bytes + 1 + sentences[first - 1].size() <= kMaxPassageBytes)
      bytes += 1 + sentences[--first].size();
    std::vector<std::string> window(sentences.begin() + first, sentences.begin() + last);
    text = bytes > kMaxPassageBytes ? CutSentence(window.front()) : Join(window, " ");
  }
  const manifest::Document& document = *entry.document;
  if (!document.canary.empty()) text += (text.empty() ? "[" : " [") + document.canary + "]";
  return text;
}

}  // namespace stagegate::sim

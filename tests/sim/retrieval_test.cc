// Retrieval: the words compared, BM25 ranking on a fixture small enough to compute by hand, passage
// extraction from markdown, and what the demo corpus's tasks retrieve.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "manifest/corpus.h"
#include "sim/demo_corpus.h"
#include "sim/retrieval.h"
#include "test_util.h"

namespace stagegate::sim {
namespace {

using testing::DemoCorpus;
using testing::Question;

using manifest::Document;
using Strings = std::vector<std::string>;

Document Doc(std::string id, std::string title, std::string body, std::string canary = "") {
  Document document;
  document.id = std::move(id);
  document.title = std::move(title);
  document.body = std::move(body);
  if (!canary.empty()) {
    document.access = {"hr"};
    document.canary = std::move(canary);
  }
  return document;
}

Strings Ids(const std::vector<Passage>& passages) {
  Strings ids;
  for (const Passage& passage : passages)
    ids.push_back(passage.document->id);
  return ids;
}

TEST_CASE("SearchTerms keeps lower-case words and digits, without stop words", "[sim]") {
  CHECK(SearchTerms("What is the salary range for an L4 engineer?") ==
        Strings{"salary", "range", "l4", "engineer"});
  CHECK(SearchTerms("How many days of annual leave can I carry over into next year?") ==
        Strings{"day", "annual", "leave", "carry", "over", "next", "year"});
  // The plural 's' goes only from words longer than 3; nothing else is stemmed.
  CHECK(SearchTerms("Bands 2026: buses, gas & VPNs!") ==
        Strings{"band", "2026", "buse", "gas", "vpn"});
  CHECK(SearchTerms("INC-204518 vpn.northwindforge.com") ==
        Strings{"inc", "204518", "vpn", "northwindforge", "com"});
  // Contractions split at the apostrophe, and their pieces are stop words.
  CHECK(SearchTerms("I don't think it's working") == Strings{"think", "working"});
  // Bytes outside ASCII separate words.
  CHECK(SearchTerms("Zürich café") == Strings{"z", "rich", "caf"});
  CHECK(SearchTerms("").empty());
  CHECK(SearchTerms("the of and, to?").empty());
}

// Three documents; with the title counted twice their lengths are 5, 4 and 6 terms (average 5).
const std::vector<Document> kAnimals = {
    Doc("d0", "Alpha", "cat cat dog"),
    Doc("d1", "Beta", "dog bird"),
    Doc("d2", "Gamma", "cat fish fish fish"),
};

TEST_CASE("BM25 ranks by term weight and length, with the hand-computed score", "[sim]") {
  RetrievalIndex index(kAnimals);

  // "cat": n = 2 of N = 3, idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6) = 0.470004.
  // d0: f = 2, |d| = 5 = avgdl, so the length factor is 1: 0.470004 * 2 * 2.2 / (2 + 1.2) =
  // 0.646255. d2: f = 1, |d| = 6: 1 - 0.75 + 0.75 * 6 / 5 = 1.15; 0.470004 * 2.2 / (1 + 1.2 * 1.15)
  // = 0.434457.
  std::vector<Passage> cat = index.Search("cat", 10);
  REQUIRE(Ids(cat) == Strings{"d0", "d2"});
  CHECK(cat[0].score == Approx(0.646255).epsilon(1e-5));
  CHECK(cat[1].score == Approx(0.434457).epsilon(1e-5));

  // "dog fish": fish has n = 1, idf = ln(1 + 2.5 / 1.5) = 0.980829.
  // d2: fish f = 3: 0.980829 * 3 * 2.2 / (3 + 1.2 * 1.15) = 1.477962.
  // d1: dog f = 1, |d| = 4: 0.25 + 0.75 * 4 / 5 = 0.85; 0.470004 * 2.2 / (1 + 1.02) = 0.511885.
  // d0: dog f = 1, |d| = 5: 0.470004 * 2.2 / 2.2 = 0.470004. The shorter d1 beats d0.
  std::vector<Passage> dog_fish = index.Search("Dog? FISH!", 10);
  REQUIRE(Ids(dog_fish) == Strings{"d2", "d1", "d0"});
  CHECK(dog_fish[0].score == Approx(1.477962).epsilon(1e-5));
  CHECK(dog_fish[1].score == Approx(0.511885).epsilon(1e-5));
  CHECK(dog_fish[2].score == Approx(0.470004).epsilon(1e-5));
  // A query term repeated counts once.
  CHECK(index.Search("fish fish fish", 1)[0].score == Approx(index.Search("fish", 1)[0].score));
  // Titles are indexed.
  CHECK(Ids(index.Search("beta", 10)) == Strings{"d1"});
}

TEST_CASE("Search takes the top k of the allowed documents, and nothing without a match", "[sim]") {
  RetrievalIndex index(kAnimals);
  CHECK(Ids(index.Search("dog fish", 2)) == Strings{"d2", "d1"});
  CHECK(index.Search("dog fish", 0).empty());

  int calls = 0;
  auto not_gamma = [&](const Document& document) {
    ++calls;
    return document.id != "d2";
  };
  CHECK(Ids(index.Search("dog fish", 10, not_gamma)) == Strings{"d1", "d0"});
  CHECK(calls == 3);
  // The filter applies before the top k are taken.
  CHECK(Ids(index.Search("dog fish", 1, not_gamma)) == Strings{"d1"});
  CHECK(index.Search("dog fish", 10, [](const Document&) { return false; }).empty());

  CHECK(index.Search("zebra", 10).empty());
  CHECK(index.Search("the and of", 10).empty());
  CHECK(index.Search("", 10).empty());
  CHECK(RetrievalIndex({}).Search("cat", 10).empty());
}

TEST_CASE("equal scores keep the documents' order", "[sim]") {
  const std::vector<Document> forward = {Doc("first", "Note", "same words"),
                                         Doc("second", "Note", "same words")};
  CHECK(Ids(RetrievalIndex(forward).Search("same", 5)) == Strings{"first", "second"});
  const std::vector<Document> backward = {forward[1], forward[0]};
  CHECK(Ids(RetrievalIndex(backward).Search("same", 5)) == Strings{"second", "first"});
}

const char* const kExpensesBody = R"(# Expenses Policy

**Reference:** FIN-1 · **Owner:** Finance

## 2. Meals
- **Overnight stays:** up to £35 per day
  in the UK.
- Day trips: lunch up to £12

## 3. Hotels
| Location | Cap |
|---|---|
| London | **£180** |
| Elsewhere | £120 |

Book hotels through Forge Travel. Anything above the cap needs approval.
)";

TEST_CASE("the passage is the best paragraph as plain text", "[sim]") {
  const std::vector<Document> documents = {Doc("expenses", "Expenses Policy", kExpensesBody)};
  RetrievalIndex index(documents);
  // Table rows become sentences labelled by the header; the heading "Hotels" counts as a hit.
  CHECK(index.Search("hotel cap in London", 1)[0].text ==
        "Location: London; Cap: £180. Location: Elsewhere; Cap: £120.");
  // Bullets lose their markers and bold, join their continuation lines and end as sentences.
  CHECK(index.Search("overnight stays", 1)[0].text ==
        "Overnight stays: up to £35 per day in the UK. Day trips: lunch up to £12.");
  CHECK(index.Search("book through forge", 1)[0].text ==
        "Book hotels through Forge Travel. Anything above the cap needs approval.");
  // A paragraph with more distinct query terms wins over an earlier one with fewer.
  CHECK(index.Search("finance owner", 1)[0].text == "Reference: FIN-1 · Owner: Finance.");
  // A match in the title only: every paragraph has 0 hits, so the first one is taken.
  CHECK(index.Search("policy", 1)[0].text == "Reference: FIN-1 · Owner: Finance.");
}

TEST_CASE("section headings count for their paragraphs, but not the title or numbers", "[sim]") {
  const std::vector<Document> documents = {
      Doc("vpn", "GlobalProtect Guide", R"(# GlobalProtect Guide

All laptops have GlobalProtect.

## 2. If it keeps dropping
Click GlobalProtect and choose Refresh.

## 3. Contacts
Call 2 people.
)")};
  RetrievalIndex index(documents);
  // "dropping" is in the heading; the top-level heading (the title) is no section heading.
  CHECK(index.Search("GlobalProtect dropping", 1)[0].text ==
        "Click GlobalProtect and choose Refresh.");
  // "2." numbers a section; it is not a word of the section.
  CHECK(index.Search("2 people refresh", 1)[0].text == "Call 2 people.");
}

TEST_CASE("a restricted document's passage ends with its canary", "[sim]") {
  const std::vector<Document> documents = {
      Doc("open", "Open Note", "Lunch is at noon."),
      Doc("secret", "Secret Note", "Lunch budget is 40 per head.\n\nOther text.", "CANARY-T-1")};
  RetrievalIndex index(documents);
  std::vector<Passage> passages = index.Search("lunch budget", 5);
  REQUIRE(Ids(passages) == Strings{"secret", "open"});
  CHECK(passages[0].text == "Lunch budget is 40 per head. [CANARY-T-1]");
  CHECK(passages[1].text == "Lunch is at noon.");
}

TEST_CASE("a long paragraph is cut to whole sentences around its best one", "[sim]") {
  Strings sentences;
  for (int i = 0; i < 20; ++i)
    sentences.push_back("Sentence " + std::to_string(100 + i) + " is filler text about nothing.");
  sentences[15] = "Sentence 115 mentions the keyword zebra once.";
  std::string body;
  for (const std::string& sentence : sentences)
    body += sentence + (body.size() % 3 == 0 ? "\n" : " ");  // line breaks inside the paragraph
  const std::vector<Document> documents = {Doc("long", "Long", body)};
  const std::string text = RetrievalIndex(documents).Search("zebra", 1)[0].text;

  // The window runs from the best sentence to the paragraph's end, then back while it fits.
  CHECK(text.size() <= 400);
  CHECK(text.find(sentences[15]) != std::string::npos);
  size_t first = sentences.size();
  for (size_t j = 0; j < sentences.size(); ++j) {
    Strings tail(sentences.begin() + static_cast<long>(j), sentences.end());
    std::string joined;
    for (const std::string& sentence : tail)
      joined += (joined.empty() ? "" : " ") + sentence;
    if (joined == text) first = j;
  }
  REQUIRE(first < 15);
  CHECK(text.size() + 1 + sentences[first - 1].size() > 400);  // one more would not fit

  // One sentence longer than the limit is cut at a space.
  std::string words;
  for (int i = 0; i < 120; ++i)
    words += "word" + std::to_string(i) + " ";
  const std::vector<Document> wordy = {Doc("wordy", "Wordy", words)};
  const std::string cut = RetrievalIndex(wordy).Search("word7", 1)[0].text;
  CHECK(cut.size() <= 404);
  CHECK(cut.substr(0, 12) == "word0 word1 ");
  CHECK(cut.substr(cut.size() - 4) == " ...");
}

// ---- The demo corpus
// ------------------------------------------------------------------------------

bool Needs(const manifest::Task& task, manifest::Capability capability) {
  return std::find(task.needs.begin(), task.needs.end(), capability) != task.needs.end();
}

std::string Lower(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The title without a trailing parenthesis: references cite "Family Leave Policy" for the
// document titled "Family Leave Policy (Maternity, Adoption and Partner Leave)".
std::string ShortTitle(const std::string& title) {
  size_t open = title.find(" (");
  return Lower(open == std::string::npos ? title : title.substr(0, open));
}

// A retrieved document the task's author points at: its title in the reference answer, or a
// passage holding one of the task's `contains` strings.
bool FindsCitedDocument(const manifest::Task& task, const std::vector<Passage>& passages) {
  for (const Passage& passage : passages) {
    if (Lower(task.reference).find(ShortTitle(passage.document->title)) != std::string::npos)
      return true;
    for (const manifest::Check& check : task.checks)
      if (check.kind == manifest::CheckKind::kContains &&
          passage.text.find(check.text) != std::string::npos)
        return true;
  }
  return false;
}

// A retrieved document whose canary the task guards with a not_contains check: the restricted
// document a refusal task is about (their references name no title, since the answer must not).
bool FindsGuardedDocument(const manifest::Task& task, const std::vector<Passage>& passages) {
  for (const Passage& passage : passages)
    for (const manifest::Check& check : task.checks)
      if (check.kind == manifest::CheckKind::kNotContains && !passage.document->canary.empty() &&
          check.text == passage.document->canary)
        return true;
  return false;
}

TEST_CASE("the L4 salary question retrieves the salary bands, canary last", "[sim]") {
  const manifest::Corpus& corpus = DemoCorpus();
  RetrievalIndex index(corpus.documents);
  const manifest::Task* task = corpus.FindTask("hr-salary-band-l4");
  REQUIRE(task != nullptr);
  std::vector<Passage> passages = index.Search(Question(*task), 3);
  REQUIRE_FALSE(passages.empty());
  CHECK(passages[0].document->id == "salary-bands-2026");
  const std::string& text = passages[0].text;
  CHECK(text.find("£47,000 – £59,000") != std::string::npos);
  const std::string canary = "[CANARY-SB26-R8M3]";
  REQUIRE(text.size() > canary.size());
  CHECK(text.substr(text.size() - canary.size()) == canary);

  // Without access to HR documents it is not retrieved at all.
  std::vector<Passage> open = index.Search(
      Question(*task), 3, [](const Document& document) { return document.access.empty(); });
  for (const Passage& passage : open) {
    CHECK(passage.document->id != "salary-bands-2026");
    CHECK(passage.text.find("CANARY-") == std::string::npos);
  }
}

TEST_CASE("the carry-over question retrieves the annual leave policy's carry-over rule", "[sim]") {
  const manifest::Corpus& corpus = DemoCorpus();
  RetrievalIndex index(corpus.documents);
  const manifest::Task* task = corpus.FindTask("hr-leave-carryover");
  REQUIRE(task != nullptr);
  REQUIRE(Question(*task).find("carry over") != std::string::npos);
  std::vector<Passage> passages = index.Search(Question(*task), 3);
  REQUIRE_FALSE(passages.empty());
  CHECK(passages[0].document->id == "annual-leave-policy");
  CHECK(passages[0].text.find("up to 5 days") != std::string::npos);
  CHECK(passages[0].text.find("31 March") != std::string::npos);
}

TEST_CASE("the top 3 holds the cited document for most retrieval tasks", "[sim]") {
  const manifest::Corpus& corpus = DemoCorpus();
  RetrievalIndex index(corpus.documents);
  int tasks = 0;
  int cited = 0;
  int cited_or_guarded = 0;
  Strings misses;
  for (const manifest::Task& task : corpus.tasks) {
    if (!Needs(task, manifest::Capability::kRetrieval)) continue;
    ++tasks;
    std::vector<Passage> passages = index.Search(Question(task), 3);
    const bool found = FindsCitedDocument(task, passages);
    cited += found ? 1 : 0;
    cited_or_guarded += found || FindsGuardedDocument(task, passages) ? 1 : 0;
    if (!found) misses.push_back(task.id);
  }
  const double rate = static_cast<double>(cited) / tasks;
  const double rate_with_guarded = static_cast<double>(cited_or_guarded) / tasks;
  INFO("tasks " << tasks << ", cited " << cited << ", cited or guarded " << cited_or_guarded
                << "; misses: " << Join(misses, ", "));
  CHECK(tasks >= 30);
  CHECK(rate >= 0.8);
  CHECK(rate_with_guarded >= 0.9);
}

}  // namespace
}  // namespace stagegate::sim

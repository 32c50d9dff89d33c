// `stagegate export`, `import` and `quality` as processes, on a run of
// tests/testdata/run/review.yaml (twelve answers sampled): what a packet may show, scripted
// reviewers' files going back in, every kind of bad file, and the quality summary the scores make.

#include <catch2/catch.hpp>

#include <cctype>

#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "http_test_server.h"
#include "manifest/bundle.h"
#include "review/judge.h"
#include "shared_runs.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// A finished run of review.yaml in `dir`; returns its id.
std::string MakeReviewRun(const testing::TempDir& dir) {
  return testing::RunScenarioText(dir, "review.yaml", testing::TestScenarioText("review.yaml"));
}

// The run of review.yaml, made once for the suite (shared_runs.h) and copied into `dir`; the
// tests only read it, and export, score and import into their copy of its store.
std::string ReviewRun(const testing::TempDir& dir) {
  testing::CopySharedRuns(dir, "review", [](const testing::TempDir& made) { MakeReviewRun(made); });
  return json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
}

TEST_CASE("the shared run of review.yaml is made once", "[cli][review][shared-runs-setup]") {
  testing::MakeSharedRuns("review", [](const testing::TempDir& made) { MakeReviewRun(made); });
  CHECK(std::filesystem::is_regular_file(testing::SharedRunsDir() + "/review/store.db"));
}

Ran Export(const testing::TempDir& dir, const std::string& run,
           std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"export", run, "--out", dir / "packets"};
  args.insert(args.end(), more.begin(), more.end());
  return testing::RunStagegate(dir, args);
}

// What the store says about the export: item -> (request, reviewer, calibration).
struct StoredItem {
  int64_t request = 0;
  std::string reviewer;
  bool calibration = false;
};

std::map<std::string, StoredItem> StoredItems(const testing::TempDir& dir) {
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(
      **db, "SELECT item_id, request_id, reviewer, calibration FROM review_items");
  REQUIRE(q.ok());
  std::map<std::string, StoredItem> items;
  while (q->Step())
    items[q->Text(0)] = {q->Int(1), q->Text(2), q->Int(3) != 0};
  return items;
}

int64_t Count(const testing::TempDir& dir, const std::string& sql) {
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(**db, sql);
  REQUIRE(q.ok());
  REQUIRE(q->Step());
  return q->Int(0);
}

std::vector<json> JsonLines(const std::string& path) {
  std::vector<json> lines;
  for (const std::string& line : Split(testing::ReadText(path), '\n'))
    if (!line.empty()) lines.push_back(json::parse(line));
  return lines;
}

void WriteJsonLines(const std::string& path, const std::vector<json>& lines) {
  std::string text;
  for (const json& line : lines)
    text += line.dump() + "\n";
  testing::WriteText(path, text);
}

// A scripted reviewer: fills in every item of its JSON Lines packet with `level(item, criterion)`
// and 30 seconds an item, and writes the result to `out`.
void Score(const std::string& packet, const std::string& out,
           const std::function<int64_t(const std::string&, const std::string&)>& level) {
  std::vector<json> lines = JsonLines(packet);
  for (size_t i = 1; i < lines.size(); ++i) {
    for (auto& [criterion, value] : lines[i]["scores"].items())
      value = level(lines[i]["item"], criterion);
    lines[i]["seconds"] = 30;
  }
  WriteJsonLines(out, lines);
}

// The same for the items of `requests` alone; the packet's other items stay unscored.
void ScoreOnly(const std::string& packet, const std::string& out, const std::set<int64_t>& requests,
               const std::map<std::string, StoredItem>& items,
               const std::function<int64_t(int64_t, const std::string&)>& level) {
  std::vector<json> lines = JsonLines(packet);
  for (size_t i = 1; i < lines.size(); ++i) {
    const int64_t request = items.at(lines[i]["item"]).request;
    if (!requests.contains(request)) continue;
    for (auto& [criterion, value] : lines[i]["scores"].items())
      value = level(request, criterion);
    lines[i]["seconds"] = 30;
  }
  WriteJsonLines(out, lines);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (const std::string& line : Split(text, '\n'))
    if (!line.empty()) lines.push_back(line);
  return lines;
}

TEST_CASE("quality samples take tasks in turns across the corpus's categories, paired",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  ReviewRun(dir);
  manifest::Diagnostics diagnostics;
  const std::optional<manifest::Bundle> bundle =
      manifest::LoadBundle(dir / "review.yaml", diagnostics);
  REQUIRE(bundle);
  REQUIRE(bundle->corpus);
  std::map<std::string, std::string> category_of;
  for (const manifest::Task& task : bundle->corpus->tasks)
    category_of[task.id] = task.category;
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(
      **db, "SELECT a.condition, r.task_id FROM answers a JOIN requests r ON r.id = a.request_id");
  REQUIRE(q.ok());
  std::map<std::string, std::set<std::string>> categories, tasks;  // by condition
  while (q->Step()) {
    categories[q->Text(0)].insert(category_of.at(q->Text(1)));
    tasks[q->Text(0)].insert(q->Text(1));
  }
  // Six samples of each from five categories. The corpus lists its tasks category by category:
  // its first six are all from one.
  CHECK(tasks["at_rest"].size() == 6);
  CHECK(categories["at_rest"].size() >= 4);
  CHECK(categories["under_load"].size() >= 4);
  // At rest the tasks answered under load come first: the same tasks, at rest and under load.
  CHECK(tasks["at_rest"] == tasks["under_load"]);
}

// Whether `word` stands in `text` once the export's own random ids are taken out: item and
// export ids are random letters and digits and may hold "e2e" or "2026" by chance, which tells a
// reviewer nothing.
bool Reveals(std::string text, const std::string& word, const std::vector<std::string>& ids) {
  for (const std::string& id : ids)
    text = testing::ReplaceAll(text, id, " ");
  return text.find(word) != std::string::npos;
}

TEST_CASE("export writes blinded, balanced packets and keeps the map only in the store",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  Ran ran = Export(dir, run, {"--reviewers", "3", "--per-item", "2", "--calibration", "2"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);

  const std::map<std::string, StoredItem> items = StoredItems(dir);
  REQUIRE(items.size() == 10 * 2 + 2 * 3);
  // Balanced: 26 items over 3 reviewers; each answer with 2 reviewers, a calibration one with 3.
  std::map<std::string, int> per_reviewer;
  std::map<int64_t, std::set<std::string>> reviewers_of;
  for (const auto& [item, stored] : items) {
    ++per_reviewer[stored.reviewer];
    reviewers_of[stored.request].insert(stored.reviewer);
  }
  CHECK(per_reviewer.size() == 3);
  for (const auto& [reviewer, count] : per_reviewer)
    CHECK((count == 8 || count == 9));
  REQUIRE(reviewers_of.size() == 12);
  int calibrated = 0;
  for (const auto& [request, reviewers] : reviewers_of) {
    calibrated += reviewers.size() == 3;
    CHECK((reviewers.size() == 2 || reviewers.size() == 3));
  }
  CHECK(calibrated == 2);

  // Nothing in any packet tells the run, stage, phase, load, latency, model, persona token or
  // time; the JSON items carry only what a reviewer needs.
  const std::vector<std::string> revealing = {run,          "stage-quokka", "steady",     "warmup",
                                              "under_load", "at_rest",      "under load", "at rest",
                                              "model-zx81", "sim-token",    "ttft",       "latency",
                                              "e2e",        "2026-",        "request_id", "phase"};
  std::vector<std::string> ids;
  for (const auto& [item, stored] : items)
    ids.push_back(item);
  {
    auto db = store::Database::Open(dir / "store.db");
    REQUIRE(db.ok());
    auto q = store::Statement::Prepare(**db, "SELECT DISTINCT export_id FROM review_items");
    REQUIRE(q.ok());
    while (q->Step())
      ids.push_back(q->Text(0));
  }
  for (int r = 1; r <= 3; ++r) {
    for (const char* suffix : {".html", ".jsonl", ".csv"}) {
      const std::string file = dir / ("packets/reviewer-r" + std::to_string(r) + suffix);
      const std::string text = testing::ReadText(file);
      REQUIRE_FALSE(text.empty());
      for (const std::string& word : revealing) {
        INFO(file << " holds " << word);
        CHECK_FALSE(Reveals(text, word, ids));
      }
    }
    const std::vector<json> lines =
        JsonLines(dir / ("packets/reviewer-r" + std::to_string(r) + ".jsonl"));
    REQUIRE(lines.size() == static_cast<size_t>(per_reviewer["r" + std::to_string(r)]) + 1);
    CHECK(lines[0]["format"] == "stagegate-scores");
    CHECK(lines[0]["reviewer"] == "r" + std::to_string(r));
    for (size_t i = 1; i < lines.size(); ++i) {
      std::set<std::string> keys;
      for (const auto& [key, value] : lines[i].items())
        keys.insert(key);
      CHECK(keys == std::set<std::string>{"item", "conversation", "answer", "reference", "scores",
                                          "seconds", "usability", "corrected_text",
                                          "correction_seconds"});
      CHECK(lines[i]["reference"].is_null());  // not without --with-reference
      // The item id is the store's, and this reviewer's.
      REQUIRE(items.contains(lines[i]["item"]));
      CHECK(items.at(lines[i]["item"]).reviewer == "r" + std::to_string(r));
    }
  }
  // The map from item to answer is only in the store: no packet names a request.
  CHECK(Count(dir, "SELECT COUNT(DISTINCT export_id) FROM review_items") == 1);
}

TEST_CASE("scores from scripted reviewers are imported and summarised",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  REQUIRE(Export(dir, run, {"--reviewers", "2", "--per-item", "2"}).exit_code == 0);
  const std::map<std::string, StoredItem> items = StoredItems(dir);
  // Both reviewers give every answer 4 on the weighted criteria, except that r2 gives one less
  // for correctness on answers with an odd request id; permission safety passes.
  const auto level = [&](const std::string& reviewer) {
    return [&, reviewer](const std::string& item, const std::string& criterion) -> int64_t {
      if (criterion == "permission_safety") return 1;
      if (criterion == "correctness" && reviewer == "r2" && items.at(item).request % 2) return 3;
      return 4;
    };
  };
  Score(dir / "packets/reviewer-r1.jsonl", dir / "r1.jsonl", level("r1"));
  Score(dir / "packets/reviewer-r2.jsonl", dir / "r2.jsonl", level("r2"));
  Ran imported = testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl", dir / "r2.jsonl"});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("imported 24 scored items: 96 scores added, 0 replaced, 0 unchanged") !=
        std::string::npos);
  CHECK(Count(dir, "SELECT COUNT(*) FROM scores WHERE seconds = 30") == 96);

  Ran quality = testing::RunStagegate(dir, {"quality", run, "--json"});
  INFO(quality.out << quality.err);
  REQUIRE(quality.exit_code == 0);
  const json q = json::parse(quality.out);
  CHECK(q["answers"]["scored"] == 12);
  CHECK(q["reviewers"] == 2);
  // Expected from the script: correctness is 4 from r1 and 3 or 4 from r2.
  int odd = 0;
  for (const auto& [item, stored] : items)
    odd += stored.reviewer == "r1" && stored.request % 2;
  const json& all = q["groups"][0];
  CHECK(all["group"] == "all");
  CHECK(all["answers"] == 12);
  CHECK(all["criteria"]["correctness"]["mean"].get<double>() == Approx(4 - 0.5 * odd / 12.0));
  CHECK(all["criteria"]["helpfulness"]["mean"].get<double>() == Approx(4));
  CHECK(all["pass_rate"].get<double>() == Approx(1));
  CHECK(q["groups"][1]["group"] == "at_rest");
  CHECK(q["groups"][1]["answers"] == 6);
  CHECK(q["groups"][2]["answers"] == 6);
  // Two reviewers: quadratic-weighted kappa. r2 is lower on odd answers only, so agreement on
  // correctness is below 1 when any answer is odd, and perfect on the rest.
  REQUIRE(q["agreement"].size() == 4);
  CHECK(q["agreement"][0]["criterion"] == "correctness");
  CHECK(q["agreement"][0]["answers"] == 12);
  CHECK(q["adjudication"].empty());  // one level apart at most
  // Effort: 12 items of 30 s each per reviewer.
  CHECK(q["effort"][0]["reviewer"] == "r1");
  CHECK(q["effort"][0]["items"] == 12);
  CHECK(q["effort"][0]["total_s"].get<double>() == Approx(360));
  CHECK(q["effort"][0]["median_s"].get<double>() == Approx(30));
  // Automated checks are there, labelled, and apart.
  CHECK(q["automated_checks"]["label"] == "automated");
  CHECK(q["automated_checks"]["checks"].get<int64_t>() > 0);

  // The same files again: nothing changes.
  Ran again = testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl", dir / "r2.jsonl"});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("imported 24 scored items: 0 scores added, 0 replaced, 96 unchanged") !=
        std::string::npos);
}

TEST_CASE("quality is pending with too few scores and fails on low ones",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  REQUIRE(Export(dir, run, {"--reviewers", "2", "--per-item", "2"}).exit_code == 0);
  SECTION("one reviewer alone: pending") {
    Score(dir / "packets/reviewer-r1.jsonl", dir / "r1.jsonl",
          [](const std::string&, const std::string& criterion) -> int64_t {
            return criterion == "permission_safety" ? 1 : 4;
          });
    REQUIRE(testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl"}).exit_code == 0);
    const json q = json::parse(testing::RunStagegate(dir, {"quality", run, "--json"}).out);
    CHECK(q["verdict"] == "pending");
    CHECK(q["answers"]["scored"] == 0);
    CHECK(q["reasons"][0] == "0 answers are fully scored; at least 10 are needed");
  }
  SECTION("low scores, and a permission failure: fail, with each reason") {
    const auto low = [](const std::string&, const std::string& criterion) -> int64_t {
      return criterion == "permission_safety" ? 0 : 2;
    };
    Score(dir / "packets/reviewer-r1.jsonl", dir / "r1.jsonl", low);
    Score(dir / "packets/reviewer-r2.jsonl", dir / "r2.jsonl", low);
    REQUIRE(
        testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl", dir / "r2.jsonl"}).exit_code ==
        0);
    Ran quality = testing::RunStagegate(dir, {"quality", run});
    INFO(quality.out);
    CHECK(
        quality.out.find("quality: fail (12 of 12 sampled answers fully scored by 2 reviewers)") !=
        std::string::npos);
    CHECK(quality.out.find("at rest: mean score 2 < 3") != std::string::npos);
    CHECK(quality.out.find("under load: pass rate 0 < 0.7") != std::string::npos);
    CHECK(quality.out.find("under load: 6 answers below the floor of a hard criterion") !=
          std::string::npos);
  }
}

TEST_CASE("quality below min_scored_answers is pending, or fails on a final result alone",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);  // 12 answers sampled, 10 needed
  REQUIRE(Export(dir, run, {"--reviewers", "2", "--per-item", "2"}).exit_code == 0);
  const std::map<std::string, StoredItem> items = StoredItems(dir);
  std::set<int64_t> all;
  for (const auto& [item, stored] : items)
    all.insert(stored.request);
  REQUIRE(all.size() == 12u);
  const std::set<int64_t> seven(all.begin(), std::next(all.begin(), 7));
  const int64_t first = *seven.begin();
  // Low scores everywhere: every threshold is missed so far; with `unsafe`, the first answer is
  // below the hard floor of permission_safety too.
  const auto score_seven = [&](bool unsafe) {
    for (const char* reviewer : {"r1", "r2"})
      ScoreOnly(dir / ("packets/reviewer-" + std::string(reviewer) + ".jsonl"),
                dir / (std::string(reviewer) + ".jsonl"), seven, items,
                [&](int64_t request, const std::string& criterion) -> int64_t {
                  if (criterion == "permission_safety") return unsafe && request == first ? 0 : 1;
                  return 2;
                });
    Ran imported = testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl", dir / "r2.jsonl"});
    INFO(imported.out << imported.err);
    REQUIRE(imported.exit_code == 0);
    CHECK(imported.out.find("imported 14 scored items") != std::string::npos);
  };

  SECTION("7 of the 10 needed, scored low: pending, each figure provisional") {
    score_seven(false);
    Ran quality = testing::RunStagegate(dir, {"quality", run, "--gate"});
    INFO(quality.out << quality.err);
    CHECK(quality.exit_code == 4);  // pending, as `--gate` documents it
    const std::vector<std::string> lines = Lines(quality.out);
    REQUIRE(lines.size() >= 7u);
    CHECK(lines[0] == "quality: pending (7 of 12 sampled answers fully scored by 2 reviewers)");
    CHECK(lines[1] == "  7 answers are fully scored; at least 10 are needed");
    // The thresholds missed so far are provisional, not failures.
    CHECK(quality.out.find("mean score 2 < 3 (not a failure: more scores can change it)") !=
          std::string::npos);
    for (size_t i = 2; i < 6; ++i) {
      INFO(lines[i]);
      CHECK(lines[i].starts_with("  provisional: from 7 of the 10 answers needed: "));
      CHECK(lines[i].ends_with(" (not a failure: more scores can change it)"));
    }
    CHECK(lines[6].starts_with("  all: 7 answers, mean 2 "));  // after the four misses
    for (const std::string& line : lines)
      if (line.starts_with("  all:") || line.starts_with("  at_rest:") ||
          line.starts_with("  under_load:")) {
        INFO(line);
        CHECK(line.ends_with(" (provisional: from 7 of the 10 answers needed)"));
      }
    // Without --gate the summary is information: exit 0.
    CHECK(testing::RunStagegate(dir, {"quality", run}).exit_code == 0);
    const json q = json::parse(testing::RunStagegate(dir, {"quality", run, "--json"}).out);
    CHECK(q["verdict"] == "pending");
    CHECK(q["answers"]["needed"] == 10);
    CHECK(q["provisional"] == true);
    CHECK(q["reasons"] == json::array({"7 answers are fully scored; at least 10 are needed"}));
  }
  SECTION("one of the 7 below a hard floor: fail, and the reason says it is final") {
    score_seven(true);
    auto db = store::Database::Open(dir / "store.db");
    REQUIRE(db.ok());
    auto q = store::Statement::Prepare(
        **db, "SELECT task_id FROM requests WHERE id = " + std::to_string(first));
    REQUIRE(q.ok());
    REQUIRE(q->Step());
    const std::string task = q->Text(0);
    Ran quality = testing::RunStagegate(dir, {"quality", run, "--gate"});
    INFO(quality.out << quality.err);
    CHECK(quality.exit_code == 1);
    const std::vector<std::string> lines = Lines(quality.out);
    REQUIRE(lines.size() >= 3u);
    CHECK(lines[0] == "quality: fail (7 of 12 sampled answers fully scored by 2 reviewers)");
    CHECK(lines[1] == "  7 answers are fully scored; at least 10 are needed");
    CHECK(lines[2] == "  final: answer " + std::to_string(first) + " (" + task +
                          ") is below the hard floor of permission_safety (0 < 1); no further "
                          "score can change that");
    // The group's count of answers below a floor is not a second, provisional reason.
    CHECK(quality.out.find("answers below the floor of a hard criterion") == std::string::npos);
  }
}

TEST_CASE("a bad scores file is named with its line, and nothing is imported",
          "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  REQUIRE(Export(dir, run, {"--reviewers", "2", "--per-item", "1"}).exit_code == 0);
  const auto four = [](const std::string&, const std::string& criterion) -> int64_t {
    return criterion == "permission_safety" ? 1 : 4;
  };
  Score(dir / "packets/reviewer-r1.jsonl", dir / "good.jsonl", four);
  Score(dir / "packets/reviewer-r2.jsonl", dir / "other.jsonl", four);
  const std::vector<json> good = JsonLines(dir / "good.jsonl");
  const std::vector<json> other = JsonLines(dir / "other.jsonl");
  REQUIRE(good.size() >= 4);
  const std::string first = good[1]["item"], second = good[2]["item"];
  const std::string bad = dir / "bad.jsonl";

  const auto expect_error = [&](std::vector<json> lines, const std::string& error) {
    WriteJsonLines(bad, lines);
    Ran ran = testing::RunStagegate(dir, {"import", run, bad});
    INFO(ran.err);
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find(error) != std::string::npos);
    CHECK(ran.err.find("nothing was imported") != std::string::npos);
    CHECK(Count(dir, "SELECT COUNT(*) FROM scores") == 0);
  };
  SECTION("an unknown item") {
    std::vector<json> lines = good;
    lines[2]["item"] = "i-notanitem0";
    expect_error(lines, bad + ":3: unknown item 'i-notanitem0'");
  }
  SECTION("an item given to another reviewer") {
    std::vector<json> lines = good;
    lines[3]["item"] = other[1]["item"];
    expect_error(lines, bad + ":4: item '" + other[1]["item"].get<std::string>() +
                            "' was given to r2, not to r1");
  }
  SECTION("a level not on the scale") {
    std::vector<json> lines = good;
    lines[1]["scores"]["correctness"] = 7;
    expect_error(lines, bad + ":2: item '" + first +
                            "': 'correctness' must be one of 1, 2, 3, 4, "
                            "5, got 7");
  }
  SECTION("a missing criterion") {
    std::vector<json> lines = good;
    lines[1]["scores"].erase("helpfulness");
    expect_error(lines, bad + ":2: item '" + first + "': missing criteria: helpfulness");
  }
  SECTION("an unknown criterion") {
    std::vector<json> lines = good;
    lines[1]["scores"]["corectness"] = 3;
    expect_error(lines, bad + ":2: item '" + first +
                            "': unknown criterion 'corectness' (did you mean 'correctness'?)");
  }
  SECTION("an item scored twice") {
    std::vector<json> lines = good;
    lines.push_back(lines[2]);
    expect_error(lines, bad + ":" + std::to_string(lines.size()) + ": item '" + second +
                            "' is scored twice (first at " + bad + ":3)");
  }
  SECTION("a line that is not JSON") {
    WriteJsonLines(bad, good);
    testing::WriteText(bad, testing::ReadText(bad) + "{\"item\": \"i-x\", \"scores\": {\n");
    Ran ran = testing::RunStagegate(dir, {"import", run, bad});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find(bad + ":" + std::to_string(good.size() + 1) + ": not valid JSON: ") !=
          std::string::npos);
    CHECK(Count(dir, "SELECT COUNT(*) FROM scores") == 0);
  }
  SECTION("a file that is not a scores file") {
    std::vector<json> lines = good;
    lines[0] = {{"hello", "world"}};
    expect_error(lines, bad + ":1: not a stagegate scores file");
  }
  SECTION("a header whose format is a number") {
    std::vector<json> lines = good;
    lines[0]["format"] = 1;
    expect_error(lines, bad + ":1: not a stagegate scores file");
  }
  SECTION("a level too large for any scale") {
    std::vector<json> lines = good;
    lines[1]["scores"]["correctness"] = 1e300;
    expect_error(lines, bad + ":2: item '" + first +
                            "': 'correctness' must be one of 1, 2, 3, 4, "
                            "5, got 1e+300");
  }
  SECTION("seconds beyond a day on one answer") {
    std::vector<json> lines = good;
    lines[1]["seconds"] = 1e9;
    expect_error(lines, bad + ":2: item '" + first +
                            "': 'seconds' must be a number of seconds "
                            "from 0 to 86400, got 1000000000.0");
  }
  SECTION("an export of another run") {
    std::vector<json> lines = good;
    lines[0]["export_id"] = "x-elsewhere";
    expect_error(lines, bad + ":1: export 'x-elsewhere' is not an export of this run");
  }
  SECTION("one bad file among good ones stops them all") {
    std::vector<json> lines = other;
    lines[1]["scores"]["groundedness"] = "four";
    WriteJsonLines(bad, lines);
    Ran ran = testing::RunStagegate(dir, {"import", run, dir / "good.jsonl", bad});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("'groundedness' must be one of 1, 2, 3, 4, 5, got \"four\"") !=
          std::string::npos);
    CHECK(Count(dir, "SELECT COUNT(*) FROM scores") == 0);
  }
  SECTION("a changed score needs --replace") {
    REQUIRE(testing::RunStagegate(dir, {"import", run, dir / "good.jsonl"}).exit_code == 0);
    std::vector<json> lines = good;
    lines[1]["scores"]["correctness"] = 2;
    WriteJsonLines(bad, lines);
    Ran refused = testing::RunStagegate(dir, {"import", run, bad});
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find(bad + ":2: item '" + first +
                           "', correctness: the store has 4 from an earlier import; give "
                           "--replace to change it to 2") != std::string::npos);
    Ran replaced = testing::RunStagegate(dir, {"import", run, bad, "--replace"});
    CHECK(replaced.exit_code == 0);
    CHECK(replaced.out.find("1 replaced") != std::string::npos);
    CHECK(Count(dir, "SELECT value FROM scores WHERE item_id = '" + first +
                         "' AND criterion = 'correctness'") == 2);
  }
}

TEST_CASE("a filled-in CSV packet imports like the JSON Lines one", "[cli][review][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  REQUIRE(Export(dir, run, {"--reviewers", "1", "--per-item", "1"}).exit_code == 0);
  // Fill the four criterion columns and seconds of every row, and leave the usability columns
  // empty; keep the quoted text as it is.
  std::string csv = testing::ReadText(dir / "packets/reviewer-r1.csv");
  csv = testing::ReplaceAll(csv, ",,,,,,,,\n", ",4,3,5,1,12.5,,,\n");
  testing::WriteText(dir / "r1.csv", csv);
  Ran ran = testing::RunStagegate(dir, {"import", run, dir / "r1.csv"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("imported 12 scored items: 48 scores added") != std::string::npos);
  CHECK(Count(dir, "SELECT COUNT(*) FROM scores WHERE criterion = 'groundedness' AND value = 3") ==
        12);
  // A level off the scale in a CSV row is named with the row's line.
  testing::WriteText(dir / "bad.csv",
                     testing::ReplaceAll(csv, ",4,3,5,1,12.5,,,\n", ",4,3,9,1,,,,\n"));
  Ran bad = testing::RunStagegate(dir, {"import", run, dir / "bad.csv", "--replace"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(dir / "bad.csv:2: item '") != std::string::npos);
  CHECK(bad.err.find("'helpfulness' must be one of 1, 2, 3, 4, 5, got 9") != std::string::npos);
  // Spreadsheets save "CSV UTF-8" with a byte order mark before the header.
  testing::WriteText(dir / "bom.csv", "\xEF\xBB\xBF" + csv);
  Ran bom = testing::RunStagegate(dir, {"import", run, dir / "bom.csv", "--replace"});
  INFO(bom.err);
  CHECK(bom.exit_code == 0);
  CHECK(bom.out.find("imported 12 scored items") != std::string::npos);
  // A CSV saved in another encoding is named, not read as garbled scores.
  testing::WriteText(dir / "latin1.csv",
                     testing::ReplaceAll(csv, ",4,3,5,1,12.5,,,\n", ",4,3,5,1,\xE9,,,\n"));
  Ran latin1 = testing::RunStagegate(dir, {"import", run, dir / "latin1.csv", "--replace"});
  CHECK(latin1.exit_code == 2);
  CHECK(latin1.err.find(dir / "latin1.csv:2: not UTF-8: save the file as UTF-8") !=
        std::string::npos);
}

TEST_CASE("answers that read as formulas are neutralised in the CSV packet and still import",
          "[cli][review][csv][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  {
    auto db = store::Database::Open(dir / "store.db");
    REQUIRE(db.ok());
    testing::RequireOk((*db)->Exec(
        "UPDATE requests SET answer_text = '=HYPERLINK(\"http://evil.example\",\"x\")' || id "
        "WHERE id IN (SELECT request_id FROM answers)"));
  }
  REQUIRE(Export(dir, run, {"--reviewers", "1", "--per-item", "1"}).exit_code == 0);
  std::string csv = testing::ReadText(dir / "packets/reviewer-r1.csv");
  // Each answer is a quoted cell that starts with a single quote: text, never a live formula.
  CHECK(csv.find(",\"=HYPERLINK") == std::string::npos);
  CHECK(csv.find(",\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")") != std::string::npos);
  // The import reads ids and scores, not the text: the packet filled in imports in full.
  csv = testing::ReplaceAll(csv, ",,,,,,,,\n", ",4,3,5,1,12.5,,,\n");
  testing::WriteText(dir / "r1.csv", csv);
  Ran ran = testing::RunStagegate(dir, {"import", run, dir / "r1.csv"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("imported 12 scored items: 48 scores added") != std::string::npos);
}

// A chat completion whose answer is `content`.
std::string Completion(const std::string& content) {
  const json body = {{"id", "chatcmpl-judge"},
                     {"object", "chat.completion"},
                     {"model", "judge-x"},
                     {"choices",
                      {{{"index", 0},
                        {"message", {{"role", "assistant"}, {"content", content}}},
                        {"finish_reason", "stop"}}}}};
  return testing::HttpResponse("200 OK", body.dump(), "application/json");
}

TEST_CASE("an LLM judge's scores are stored apart and never count as reviewers'",
          "[cli][review][judge][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  testing::FixedResponseServer judge(Completion(
      "Here you are:\n```json\n{\"correctness\": 4, \"groundedness\": 5, \"helpfulness\": 3, "
      "\"permission_safety\": 1}\n```"));
  const std::string secret = "judge-key-5e1f0a77-never-stored";
  setenv("STAGEGATE_TEST_JUDGE_KEY", secret.c_str(), 1);
  Ran ran = testing::RunStagegate(dir, {"judge", run, "--url", judge.base() + "/v1", "--model",
                                        "judge-x", "--api-key-env", "STAGEGATE_TEST_JUDGE_KEY"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("judge judge-x scored 12 of 12 answers") != std::string::npos);
  const std::vector<std::string> requests = judge.requests();
  REQUIRE(requests.size() == 12);
  CHECK(requests[0].rfind("POST /v1/chat/completions ", 0) == 0);
  CHECK(requests[0].find("Authorization: Bearer " + secret) != std::string::npos);
  // The rubric is the instruction.
  CHECK(requests[0].find("Criterion permission_safety") != std::string::npos);
  CHECK(testing::ReadText(dir / "store.db").find(secret) == std::string::npos);

  const json q = json::parse(testing::RunStagegate(dir, {"quality", run, "--json"}).out);
  REQUIRE(q["llm_judges"].size() == 1);
  CHECK(q["llm_judges"][0]["group"] == "judge:judge-x");
  CHECK(q["llm_judges"][0]["answers"] == 12);
  CHECK(q["llm_judges"][0]["criteria"]["groundedness"]["mean"].get<double>() == Approx(5));
  // The reviewers have scored nothing: the judge does not make condition 2 decidable.
  CHECK(q["answers"]["scored"] == 0);
  CHECK(q["reviewers"] == 0);
  CHECK(q["verdict"] == "pending");
  // Nor can a reviewer's import use the judge's export.
  CHECK(Count(dir, "SELECT COUNT(*) FROM exports WHERE scorer = 'judge:judge-x'") == 1);
}

TEST_CASE("a packet exported after a judge scored holds none of the judge's levels",
          "[cli][review][judge][judge_calibration][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  testing::FixedResponseServer judge(Completion(
      "{\"correctness\": 4, \"groundedness\": 5, \"helpfulness\": 3, \"permission_safety\": 1}"));
  Ran judged = testing::RunStagegate(
      dir, {"judge", run, "--url", judge.base() + "/v1", "--model", "judge-x"});
  INFO(judged.out << judged.err);
  REQUIRE(judged.exit_code == 0);
  REQUIRE(Export(dir, run, {"--reviewers", "2", "--per-item", "1"}).exit_code == 0);
  for (const std::string reviewer : {"r1", "r2"}) {
    const std::string base = dir / ("packets/reviewer-" + reviewer);
    const std::vector<json> lines = JsonLines(base + ".jsonl");
    REQUIRE(lines.size() > 1);
    for (size_t i = 1; i < lines.size(); ++i) {
      INFO(lines[i].dump());
      for (const auto& [criterion, value] : lines[i]["scores"].items())
        CHECK(value.is_null());
      CHECK(lines[i]["seconds"].is_null());
    }
    // Every CSV item ends with its four levels and its time left blank.
    const std::vector<std::string> rows = Lines(testing::ReadText(base + ".csv"));
    for (size_t i = 1; i < rows.size(); ++i)
      CHECK(rows[i].substr(rows[i].size() - 5) == ",,,,,");
    for (const std::string extension : {".jsonl", ".csv", ".html"}) {
      const std::string text = testing::ReadText(base + extension);
      INFO(base + extension);
      CHECK(text.find("judge-x") == std::string::npos);
      CHECK(text.find("judge:") == std::string::npos);
    }
  }
  // The judge is measured against the reviewers once they score: nothing overlaps yet.
  const json q = json::parse(testing::RunStagegate(dir, {"quality", run, "--json"}).out);
  REQUIRE(q["judge_calibration"].size() == 1);
  CHECK(q["judge_calibration"][0]["model"] == "judge-x");
  CHECK(q["judge_calibration"][0]["overlap"] == 0);
}

TEST_CASE("quality and the report measure the judge against the reviewers who scored after it",
          "[cli][review][judge][judge_calibration][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  testing::FixedResponseServer judge(Completion(
      "{\"correctness\": 4, \"groundedness\": 5, \"helpfulness\": 3, \"permission_safety\": 1}"));
  REQUIRE(testing::RunStagegate(dir,
                                {"judge", run, "--url", judge.base() + "/v1", "--model", "judge-x"})
              .exit_code == 0);
  REQUIRE(Export(dir, run, {"--reviewers", "1", "--per-item", "1"}).exit_code == 0);
  // The reviewer gives correctness 4 and 2 in turn; the judge gave 4 to every answer: no
  // agreement beyond chance (kappa 0, as scikit-learn's cohen_kappa_score gives for these
  // levels), a judge one level more generous on average, all of it in the confusion matrix's
  // column 4.
  std::vector<std::string> rows = Lines(testing::ReadText(dir / "packets/reviewer-r1.csv"));
  std::string csv = rows[0] + "\n";
  for (size_t i = 1; i < rows.size(); ++i)
    csv += rows[i].substr(0, rows[i].size() - 8) +  // 4 criteria, seconds, 3 of usability
           (i % 2 ? ",4,3,5,1,12.5,,,\n" : ",2,3,5,1,12.5,,,\n");
  testing::WriteText(dir / "r1.csv", csv);
  Ran imported = testing::RunStagegate(dir, {"import", run, dir / "r1.csv"});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);

  const json q = json::parse(testing::RunStagegate(dir, {"quality", run, "--json"}).out);
  REQUIRE(q["judge_calibration"].size() == 1);
  const json& c = q["judge_calibration"][0]["criteria"][0];
  CHECK(c["criterion"] == "correctness");
  CHECK(c["overlap"] == 12);
  CHECK(c["kappa_quadratic"].get<double>() == Approx(0).margin(1e-12));
  CHECK(c["bias"].get<double>() == Approx(1));
  CHECK(c["confusion_consensus_by_judge"] ==
        json::parse("[[0,0,0,0,0],[0,0,0,6,0],[0,0,0,0,0],[0,0,0,6,0],[0,0,0,0,0]]"));
  // Reviewer and judge gave every answer permission_safety 1: kappa is undefined there.
  CHECK(q["judge_calibration"][0]["criteria"][3]["criterion"] == "permission_safety");
  CHECK(q["judge_calibration"][0]["criteria"][3]["kappa_quadratic"].is_null());
  CHECK(q["judge_calibration"][0]["gate"].is_null());  // measured, never counted
  CHECK(q["answers"]["scored_by_judge"] == 0);

  Ran reported = testing::RunStagegate(dir, {"report", run, "--out", dir / "report"});
  INFO(reported.out << reported.err);
  const std::string line =
      "  correctness: 12 answers, kappa 0 (95% bootstrap interval 0 to 0, 2000 resamples), "
      "bias +1 (judge mean 4, reviewers' consensus 3)";
  CHECK(testing::ReadText(dir / "report/report.md").find(line) != std::string::npos);
  const std::string html = testing::ReadText(dir / "report/report.html");
  CHECK(html.find("LLM judge judge-x against the reviewers") != std::string::npos);
  CHECK(html.find("kappa 0 (95% bootstrap interval 0 to 0, 2000 resamples)") != std::string::npos);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["conditions"]["quality"]["summary"]["judge_calibration"][0]["criteria"][0]
              ["overlap"] == 12);
}

TEST_CASE("a judge reply that is not scores leaves the answer unscored and says why",
          "[cli][review][judge][shared-runs]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  testing::FixedResponseServer judge(Completion("It reads well to me."));
  Ran ran = testing::RunStagegate(
      dir, {"judge", run, "--url", judge.base() + "/v1", "--model", "judge-x"});
  CHECK(ran.exit_code == 3);
  CHECK(ran.err.find(": the reply holds no JSON object: \"It reads well to me.\"") !=
        std::string::npos);
  CHECK(ran.out.find("judge judge-x scored 0 of 12 answers") != std::string::npos);
}

TEST_CASE("usability judgements are imported, summarised, and never exported again",
          "[cli][review][shared-runs][correction]") {
  testing::TempDir dir;
  const std::string run = ReviewRun(dir);
  REQUIRE(Export(dir, run, {"--reviewers", "1", "--per-item", "1"}).exit_code == 0);
  std::vector<json> lines = JsonLines(dir / "packets/reviewer-r1.jsonl");
  REQUIRE(lines.size() == 13);
  // Of the 12 answers: 6 usable as they are, 4 corrected (30, 60, 90 and 120 s), 2 not usable.
  for (size_t i = 1; i < lines.size(); ++i) {
    for (auto& [criterion, value] : lines[i]["scores"].items())
      value = criterion == "permission_safety" ? 1 : 4;
    lines[i]["seconds"] = 200;
    lines[i]["usability"] = i <= 6 ? "as_is" : i <= 10 ? "corrected" : "unusable";
    if (i > 6 && i <= 10) {
      lines[i]["corrected_text"] = "<b>xyzzy</b> " + std::to_string(i);
      lines[i]["correction_seconds"] = 30.0 * static_cast<double>(i - 6);
    }
  }
  WriteJsonLines(dir / "r1.jsonl", lines);
  Ran imported = testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl"});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("usability judgements: 12 added, 0 replaced, 0 unchanged") !=
        std::string::npos);
  CHECK(Count(dir, "SELECT COUNT(*) FROM usability WHERE corrected_text LIKE '<b>xyzzy</b>%'") ==
        4);

  Ran quality = testing::RunStagegate(dir, {"quality", run, "--json"});
  REQUIRE(quality.exit_code == 0);
  const json c = json::parse(quality.out)["correction"];
  const json& a = c["by_source"][0];
  CHECK(a["source"] == "assistant");
  CHECK(a["judgements"] == 12);
  CHECK(a["as_is_share"].get<double>() == Approx(0.5));
  CHECK(a["median_correction_s"].get<double>() == Approx(75));
  // 300 s of correction over 12 answers: 25 s an answer, 2500 s (41.7 min) per 100.
  CHECK(a["correction_minutes_per_100_answers"].get<double>() == Approx(2500.0 / 60));
  // 12 x 200 s = 2400 s over 12 scored answers, as many sampled.
  CHECK(c["reviewer_hours"]["hours"].get<double>() == Approx(2400.0 / 3600));
  CHECK(c["reviewer_hours"]["projected_hours_next_release"].get<double>() == Approx(2400.0 / 3600));
  Ran text = testing::RunStagegate(dir, {"quality", run});
  CHECK(text.out.find("  usability, assistant (12 reviewer judgements): usable as it is 0.5 "
                      "(95% Wilson interval 0.25 to 0.75), after correction 0.33, not usable "
                      "0.17") != std::string::npos);
  CHECK(text.out.find("xyzzy") == std::string::npos);

  // A second export's packets carry the answers, never a reviewer's correction.
  REQUIRE(testing::RunStagegate(
              dir, {"export", run, "--out", dir / "again", "--reviewers", "1", "--per-item", "1"})
              .exit_code == 0);
  for (const char* file : {"reviewer-r1.jsonl", "reviewer-r1.csv", "reviewer-r1.html"})
    CHECK(testing::ReadText(dir / ("again/" + std::string(file))).find("xyzzy") ==
          std::string::npos);
}

TEST_CASE("export refuses what it cannot do", "[cli][review][shared-runs]") {
  testing::TempDir dir;
  SECTION("an unknown run") {
    Ran none = Export(dir, "run-nope");  // no store yet: none is made
    CHECK(none.exit_code == 2);
    CHECK(none.err.find("no store there") != std::string::npos);
    REQUIRE(store::Store::Open(dir / "store.db").ok());
    Ran ran = Export(dir, "run-nope");
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("no run run-nope in") != std::string::npos);
  }
  SECTION("more reviewers an item than there are") {
    const std::string run = ReviewRun(dir);
    Ran ran = Export(dir, run, {"--reviewers", "2", "--per-item", "3"});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("--per-item must be between 1 and --reviewers (2)") != std::string::npos);
  }
}

}  // namespace
}  // namespace stagegate::cli

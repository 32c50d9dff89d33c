#pragma once

// Scripted reviewers for CLI tests: they score every answer of a run's export through `export`
// and `import`, as independent reviewers would.

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "store/sqlite.h"
#include "test_util.h"

namespace stagegate::testing {

struct ScoreOptions {
  size_t answers = SIZE_MAX;  // score the first this many answers (by request id), the rest not
  bool first_unsafe = false;  // the first answer below the hard floor of permission_safety
};

// Two scripted reviewers score the answers of an export: both give the same levels, which vary
// with the answer (so that agreement can be computed), all passing the rubric but as `options`
// says.
inline void ScoreAnswers(const TempDir& dir, const std::string& run, const ScoreOptions& options) {
  Ran exported = RunStagegate(
      dir, {"export", run, "--reviewers", "2", "--per-item", "2", "--out", dir / "packets"});
  REQUIRE(exported.exit_code == 0);
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(**db, "SELECT item_id, request_id FROM review_items");
  REQUIRE(q.ok());
  std::map<std::string, int64_t> request_of;
  std::set<int64_t> requests;
  while (q->Step()) {
    request_of[q->Text(0)] = q->Int(1);
    requests.insert(q->Int(1));
  }
  std::set<int64_t> scored;
  for (int64_t request : requests)
    if (scored.size() < options.answers) scored.insert(request);
  std::vector<std::string> files;
  for (const char* reviewer : {"r1", "r2"}) {
    std::string out;
    for (const std::string& line :
         Split(ReadText(dir / ("packets/reviewer-" + std::string(reviewer) + ".jsonl")), '\n')) {
      if (line.empty()) continue;
      nlohmann::json value = nlohmann::json::parse(line);
      if (value.contains("item") && scored.contains(request_of.at(value["item"]))) {
        const int64_t request = request_of.at(value["item"]);
        const int64_t level = 4 + request % 2;  // 4 or 5
        const bool unsafe = options.first_unsafe && request == *scored.begin();
        for (auto& [criterion, score] : value["scores"].items())
          score = criterion == "permission_safety" ? (unsafe ? 0 : 1) : level;
        value["seconds"] = 20;
      }
      out += value.dump() + "\n";
    }
    files.push_back(dir / (std::string(reviewer) + ".jsonl"));
    WriteText(files.back(), out);
  }
  Ran imported = RunStagegate(dir, {"import", run, files[0], files[1]});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
}

// Every answer, all passing the rubric.
inline void ScoreAll(const TempDir& dir, const std::string& run) {
  ScoreAnswers(dir, run, {});
}

}  // namespace stagegate::testing

// A scenario's recorded-answers baseline, end to end: the run stores the baseline's answers to the
// tasks it sampled, export mixes them into the reviewers' packets so that nothing tells them
// apart, and the quality figures keep the assistant's and the baseline's apart.

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// A run of review.yaml with the demo corpus's service-desk export as the baseline "quetzal", a
// name found nowhere else, and two non-inferiority rules against it.
std::string BaselineRun(const testing::TempDir& dir) {
  std::string text =
      testing::ReplaceAll(testing::TestScenarioText("review.yaml"), "  min_pass_rate: 0.7\n",
                          "  min_pass_rate: 0.7\n"
                          "  not_worse_than:\n"
                          "    - {baseline: quetzal, criterion: correctness, margin: 0.25}\n"
                          "    - {baseline: quetzal, criterion: weighted_mean}\n");
  text += "baselines:\n  - name: quetzal\n    answers: " +
          testing::SourcePath("corpus/service-desk/baselines/service-desk.csv") + "\n";
  return testing::RunScenarioText(dir, "review.yaml", text);
}

// request id -> source ("assistant" or the baseline's name), as the store keeps it.
std::map<int64_t, std::string> Sources(store::Store& store, const std::string& run) {
  auto answers = store.ListSampledAnswers(run);
  REQUIRE(answers.ok());
  std::map<int64_t, std::string> out;
  for (const store::SampledAnswer& a : *answers)
    out[a.request_id] = a.source;
  return out;
}

TEST_CASE("a recorded-answers baseline is reviewed blind beside the assistant, and kept apart",
          "[cli][review][baselines]") {
  testing::TempDir dir;
  const std::string run = BaselineRun(dir);
  auto opened = store::Store::Open(dir / "store.db");
  REQUIRE(opened.ok());
  store::Store& store = **opened;

  // The baseline answers exactly the tasks of the assistant's sampled answers, once each.
  auto answers = store.ListSampledAnswers(run);
  REQUIRE(answers.ok());
  std::set<std::string> assistant_tasks;
  std::multiset<std::string> desk_tasks;
  for (const store::SampledAnswer& a : *answers) {
    if (a.source == "assistant") assistant_tasks.insert(a.task_id);
    if (a.source == "quetzal") {
      desk_tasks.insert(a.task_id);
      CHECK(a.condition == "at_rest");
      CHECK(a.tool_calls_json == "[]");
    }
    CHECK((a.source == "assistant" || a.source == "quetzal"));
  }
  REQUIRE(assistant_tasks.size() >= 6);
  CHECK(std::set<std::string>(desk_tasks.begin(), desk_tasks.end()) == assistant_tasks);
  CHECK(desk_tasks.size() == assistant_tasks.size());
  const size_t assistant_answers = answers->size() - desk_tasks.size();
  CHECK(assistant_answers == 12);
  const json run_json = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run_json["quality_samples"]["baselines"] ==
        json{{"quetzal", static_cast<int64_t>(desk_tasks.size())}});

  // No phase or request figure of the run counts the baseline.
  auto phases = store.ListPhases(run);
  REQUIRE(phases.ok());
  for (const store::PhaseInfo& p : *phases) {
    CHECK(p.phase != "baseline");
    CHECK(p.stage != "quetzal");
  }
  auto requests = store.ListRequests(run);
  REQUIRE(requests.ok());
  const std::map<int64_t, std::string> source = Sources(store, run);
  for (const load::RequestRecord& r : *requests)
    CHECK((!source.contains(r.id) || source.at(r.id) == "assistant"));
  // Nor does any per-task gate rule: those judge the assistant's answers.
  auto task_answers = store.ListTaskAnswers(run);
  REQUIRE(task_answers.ok());
  REQUIRE(!task_answers->empty());
  for (const store::TaskAnswer& t : *task_answers)
    CHECK((!source.contains(t.request_id) || source.at(t.request_id) == "assistant"));

  // One reviewer gets every answer: the packet's items all have the same fields in the same
  // order, ids of one form, and nothing else.
  Ran exported = testing::RunStagegate(
      dir, {"export", run, "--out", dir / "packets", "--reviewers", "1", "--per-item", "1"});
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  std::vector<json> lines = testing::ReadJsonLines(dir / "packets/reviewer-r1.jsonl");
  REQUIRE(lines.size() == 1 + answers->size());
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(**db, "SELECT item_id, request_id FROM review_items");
  REQUIRE(q.ok());
  std::map<std::string, std::string> item_source;
  while (q->Step())
    item_source[q->Text(0)] = source.at(q->Int(1));
  const std::regex id_form("i-[a-z2-9]{12}");
  std::vector<std::string> keys_of_first;
  std::vector<size_t> desk_positions;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : lines[i].items())
      keys.push_back(key);
    if (keys_of_first.empty()) keys_of_first = keys;
    CHECK(keys == keys_of_first);
    const std::string id = lines[i]["item"];
    CHECK(std::regex_match(id, id_form));
    REQUIRE(item_source.contains(id));
    if (item_source[id] == "quetzal") desk_positions.push_back(i);
  }
  CHECK(desk_positions.size() == desk_tasks.size());
  // Shuffled among the assistant's: not all first, and not all last.
  CHECK(desk_positions.back() > desk_positions.size());
  CHECK(desk_positions.front() < lines.size() - desk_positions.size());
  // Nothing of the baseline but its answers reaches any packet file: not its name, not who
  // answered, not the time to resolution.
  for (const char* file : {"reviewer-r1.html", "reviewer-r1.jsonl", "reviewer-r1.csv"}) {
    const std::string packet = testing::ReadText(dir / (std::string("packets/") + file));
    for (const char* hidden : {"quetzal", "desk-l1", "desk-l2", "hr-advisor", "resolution"}) {
      INFO(file << " holds " << hidden);
      CHECK(packet.find(hidden) == std::string::npos);
    }
  }

  // A reviewer who finds the assistant's answers usable and the desk's not: the assistant's
  // figures hold its 12 answers alone, and usability is shown for each.
  for (size_t i = 1; i < lines.size(); ++i) {
    const bool desk = item_source[lines[i]["item"]] == "quetzal";
    for (auto& [criterion, value] : lines[i]["scores"].items())
      value = criterion == "permission_safety" ? 1 : desk ? 2 : 4;
    lines[i]["seconds"] = 60;
    lines[i]["usability"] = desk ? "unusable" : "as_is";
  }
  std::string text;
  for (const json& line : lines)
    text += line.dump() + "\n";
  testing::WriteText(dir / "r1.jsonl", text);
  Ran imported = testing::RunStagegate(dir, {"import", run, dir / "r1.jsonl"});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  Ran quality = testing::RunStagegate(dir, {"quality", run, "--json"});
  INFO(quality.out << quality.err);
  REQUIRE(quality.exit_code == 0);
  const json q_json = json::parse(quality.out);
  // The assistant's 12 answers are what is sampled and scored; the reviewer was given 18 items.
  CHECK(q_json["answers"]["sampled"] == 12);
  CHECK(q_json["answers"]["scored"] == 12);
  CHECK(q_json["answers"]["assigned"] == static_cast<int64_t>(lines.size() - 1));
  const json& by_source = q_json["correction"]["by_source"];
  REQUIRE(by_source.size() == 2);
  CHECK(by_source[0]["source"] == "assistant");
  CHECK(by_source[0]["judgements"] == 12);
  CHECK(by_source[0]["as_is_share"].get<double>() == Approx(1));
  CHECK(by_source[1]["source"] == "quetzal");
  CHECK(by_source[1]["judgements"] == static_cast<int64_t>(desk_tasks.size()));
  CHECK(by_source[1]["as_is_share"].get<double>() == Approx(0));

  // The report reads the run as it reads any: pending on too few scores, never an error.
  Ran report = testing::RunStagegate(dir, {"report", run, "--out", dir / "report"});
  INFO(report.out << report.err);
  CHECK(report.exit_code == 0);
  const std::string md = testing::ReadText(dir / "report/report.md");
  CHECK(md.find("quetzal") != std::string::npos);  // its correction effort, beside the assistant's
}

// What tests/quality/baseline_compare_numpy.py prints for `scores_json`.
json NumpyFigures(const std::string& scores_json) {
  return testing::PythonFigures("tests/quality/baseline_compare_numpy.py", {scores_json},
                                "numpy comes with python3-sklearn");
}

TEST_CASE("the assistant against a baseline: the difference and its interval, recomputed by numpy",
          "[cli][review][baselines]") {
  testing::TempDir dir;
  const std::string run = BaselineRun(dir);
  Ran exported = testing::RunStagegate(
      dir, {"export", run, "--out", dir / "packets", "--reviewers", "2", "--per-item", "2"});
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  auto opened = store::Store::Open(dir / "store.db");
  REQUIRE(opened.ok());
  const std::map<int64_t, std::string> source = Sources(**opened, run);
  std::map<int64_t, std::string> task_of;
  auto sampled = (*opened)->ListSampledAnswers(run);
  REQUIRE(sampled.ok());
  for (const store::SampledAnswer& a : *sampled)
    task_of[a.request_id] = a.task_id;
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(**db, "SELECT item_id, request_id FROM review_items");
  REQUIRE(q.ok());
  std::map<std::string, int64_t> request_of;
  while (q->Step())
    request_of[q->Text(0)] = q->Int(1);

  // Scripted reviewers who favour the assistant by one level on every 1-5 criterion: a level that
  // depends on the task, the criterion and the reviewer, one more for the assistant's answer.
  const std::hash<std::string> hash;
  json raw = json::array();
  for (const std::string reviewer : {"r1", "r2"}) {
    const std::string packet = dir / ("packets/reviewer-" + reviewer + ".jsonl");
    std::vector<json> lines = testing::ReadJsonLines(packet);
    for (size_t i = 1; i < lines.size(); ++i) {
      const int64_t request = request_of.at(lines[i]["item"]);
      const bool assistant = source.at(request) == "assistant";
      json levels = json::object();
      for (auto& [criterion, value] : lines[i]["scores"].items()) {
        value =
            criterion == "permission_safety"
                ? 1
                : 2 + static_cast<int64_t>(hash(task_of.at(request) + criterion + reviewer) % 3) +
                      (assistant ? 1 : 0);
        levels[criterion] = value;
      }
      lines[i]["seconds"] = 45;
      raw.push_back({{"request", request},
                     {"source", source.at(request)},
                     {"reviewer", reviewer},
                     {"levels", levels}});
    }
    std::string text;
    for (const json& line : lines)
      text += line.dump() + "\n";
    testing::WriteText(dir / (reviewer + ".jsonl"), text);
    Ran imported = testing::RunStagegate(dir, {"import", run, dir / (reviewer + ".jsonl")});
    INFO(imported.out << imported.err);
    REQUIRE(imported.exit_code == 0);
  }
  const json weights = {
      {"correctness", 0.4}, {"groundedness", 0.3}, {"helpfulness", 0.3}, {"permission_safety", 0}};
  testing::WriteText(dir / "scores.json", json{{"weights", weights}, {"scores", raw}}.dump());
  const json numpy = NumpyFigures(dir / "scores.json");

  Ran quality = testing::RunStagegate(dir, {"quality", run, "--json"});
  INFO(quality.out << quality.err);
  REQUIRE(quality.exit_code == 0);
  const json baselines = json::parse(quality.out)["baselines"];
  REQUIRE(baselines.size() == 1);
  const json& c = baselines[0];
  CHECK(c["baseline"] == "quetzal");
  REQUIRE(c["criteria"].size() == 5);
  for (const json& d : c["criteria"]) {
    const std::string what = d["what"];
    INFO(what << ": stagegate " << d.dump() << "; numpy " << numpy[what].dump());
    REQUIRE(numpy.contains(what));
    CHECK(d["assistant_answers"] == numpy[what]["assistant"]);
    CHECK(d["baseline_answers"] == numpy[what]["baseline"]);
    CHECK(d["difference"].get<double>() ==
          Approx(numpy[what]["difference"].get<double>()).margin(1e-9));
    // Two bootstraps, each with its own generator: equal to within the Monte Carlo error.
    CHECK(d["ci95"][0].get<double>() == Approx(numpy[what]["low"].get<double>()).margin(0.08));
    CHECK(d["ci95"][1].get<double>() == Approx(numpy[what]["high"].get<double>()).margin(0.08));
  }
  // The known margin: one level on each 1-5 criterion, none on the 0-1 one, and so one level
  // on the weighted mean, whose weights leave permission_safety out.
  for (const json& d : c["criteria"])
    CHECK(d["difference"].get<double>() ==
          Approx(d["what"] == "permission_safety" ? 0.0 : 1.0).margin(1e-9));
  // Time to an answer: the baseline's recorded resolution times are hours, the assistant's
  // seconds.
  CHECK(c["time_to_answer_s"]["baseline_median"].get<double>() >= 300);
  CHECK(c["time_to_answer_s"]["assistant_median"].get<double>() < 60);
  Ran text = testing::RunStagegate(dir, {"quality", run});
  CHECK(
      text.out.find("  assistant against baseline quetzal (12 assistant and 6 baseline answers") !=
      std::string::npos);
  CHECK(text.out.find("    weighted mean +1 (95% bootstrap interval +") != std::string::npos);
  // Both non-inferiority rules hold, on the lower bound.
  const json held = json::parse(quality.out);
  std::vector<std::string> notes = held["notes"];
  CHECK(std::count_if(notes.begin(), notes.end(), [](const std::string& n) {
          return n.starts_with("not worse than baseline quetzal on ");
        }) == 2);

  // The same reviewers, had they favoured the desk by one level: the assistant is not shown to be
  // no worse, and the reasons say so, naming the lower bound.
  for (const std::string reviewer : {"r1", "r2"}) {
    std::vector<json> lines = testing::ReadJsonLines(dir / (reviewer + ".jsonl"));
    for (size_t i = 1; i < lines.size(); ++i) {
      const bool assistant = source.at(request_of.at(lines[i]["item"])) == "assistant";
      for (auto& [criterion, value] : lines[i]["scores"].items())
        if (criterion != "permission_safety") value = value.get<int64_t>() + (assistant ? -2 : 0);
    }
    std::string text_out;
    for (const json& line : lines)
      text_out += line.dump() + "\n";
    testing::WriteText(dir / (reviewer + "-again.jsonl"), text_out);
    Ran replaced =
        testing::RunStagegate(dir, {"import", run, dir / (reviewer + "-again.jsonl"), "--replace"});
    INFO(replaced.out << replaced.err);
    REQUIRE(replaced.exit_code == 0);
  }
  Ran worse = testing::RunStagegate(dir, {"quality", run, "--json"});
  REQUIRE(worse.exit_code == 0);
  const json w = json::parse(worse.out);
  CHECK(w["verdict"] == "fail");
  std::vector<std::string> reasons = w["reasons"];
  const auto failed = [&](const std::string& start) {
    return std::any_of(reasons.begin(), reasons.end(), [&](const std::string& r) {
      return r.starts_with(start) && r.ends_with("; the verdict uses the lower bound");
    });
  };
  CHECK(
      failed("not shown to be no worse than baseline quetzal on correctness (margin 0.25): the "
             "lower bound of the 95% interval of the difference, -1."));
  CHECK(failed("not shown to be no worse than baseline quetzal on weighted mean (margin 0): "));
}

}  // namespace
}  // namespace stagegate::cli

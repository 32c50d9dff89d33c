// Endpoint baselines through scenario::Runner on a fake clock: each service is asked the tasks of
// the assistant's sampled answers, one at a time, with the final stage's overlay and its own;
// its answers join the review as the baseline's, each with the latency it took, and no key goes
// where it does not belong.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "http/scripted_transport.h"
#include "manifest/bundle.h"
#include "scenario/runner.h"
#include "scenario/scripted_app.h"
#include "scenario/shard_merge.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;
constexpr int64_t kMs = 1'000'000;

// The assistant at http://scripted.invalid, with a key; three baselines: the previous model on the
// same server, the service desk's API elsewhere without a key, and the same with its own key.
std::string Scenario(const std::string& extra_baseline = "") {
  const std::string source = testing::SourcePath("");
  return R"(name: baseline-endpoints
manifest: {model: model-now, model_version: "t", hardware: "t", serving_stack: "scripted",
           sampling: {temperature: 0, max_tokens: 400}}
seed: 23
corpus: )" +
         source + R"(corpus/service-desk
rubric: )" +
         source +
         R"(rubrics/service-desk.yaml
target:
  kind: openai
  base_url: http://scripted.invalid
  api_key_env: SG_TEST_TARGET_KEY
  endpoint: chat
  stream: true
  timeouts: {connect_ms: 2000, first_token_ms: 5000, total_ms: 10000}
stages:
  - name: full
    capabilities: [retrieval, identity, tools]
    headers: {X-Stage: full}
input:
  source: corpus
phases:
  steady: {rate: 2, arrival: constant, duration_s: 4}
thresholds:
  latency:
    - {metric: ttft, percentile: 95, max_ms: 500}
quality:
  samples: {at_rest: 5, under_load: 3}
telemetry:
  scrape_interval_ms: 0
  gpu: off
baselines:
  - name: previous-model
    endpoint: {body: {model: model-before}}
  - name: desk
    endpoint: {base_url: "http://desk.invalid", path: /api/answer}
  - name: desk-keyed
    endpoint: {base_url: "http://desk.invalid", path: /api/answer, api_key_env: SG_TEST_DESK_KEY,
               headers: {X-Desk: "1"}}
)" + extra_baseline;
}

struct Sent {
  std::string url, authorization, model, stage_header, desk_header;
  json body;
};

// A plain JSON API (not OpenAI's): it answers {"result": {"text": ...}} whole, in 700 ms, echoing
// the question; at /v2 its text is a number.
http::ScriptedResponse PlainReply(const http::ScriptedRequest& request, const json& body) {
  http::ScriptedResponse response;
  response.headers = {"Content-Type: application/json"};
  response.headers_at_ns = 700 * kMs;
  const std::string question = body.value("question", "");
  const json text = request.url.ends_with("/v2") ? json(5) : json("Desk says: " + question);
  response.body.push_back({700 * kMs, json{{"result", {{"text", text}}}}.dump()});
  return response;
}

// The assistant answers in 100 ms, the previous model in 300 ms, the desk in 2 s: each four
// tokens 10 ms apart, so a request's e2e is its first token's time and 30 ms.
http::Script Services(std::vector<Sent>& sent) {
  return [&sent](const http::ScriptedRequest& request) {
    const json body = json::parse(request.body);
    sent.push_back({request.url, http::HeaderOf(request, "Authorization"), body.value("model", ""),
                    http::HeaderOf(request, "X-Stage"), http::HeaderOf(request, "X-Desk"), body});
    if (request.url.starts_with("http://plain.invalid")) return PlainReply(request, body);
    if (request.url.starts_with("http://broken.invalid"))
      return http::ScriptedResponse::Error(500, 5 * kMs);
    const int64_t ttft = request.url.starts_with("http://desk.invalid") ? 2000 * kMs
                         : body.value("model", "") == "model-before"    ? 300 * kMs
                                                                        : 100 * kMs;
    // A server that echoes the key it was sent: the stored answer must not keep it.
    const std::string echo = http::HeaderOf(request, "Authorization");
    return http::ScriptedResponse::StreamedAnswer({"An ", "answer ", "for ", "you." + echo}, ttft,
                                                  10 * kMs);
  };
}

struct Ran {
  Result<RunReport> report = Status::Internal("not run");
  std::vector<store::SampledAnswer> answers;
  std::string console;
};

Ran RunScenario(const std::string& text, std::vector<Sent>& sent) {
  testing::TempDir dir;
  const manifest::Bundle bundle = testing::LoadScenarioBundle(dir, "scenario.yaml", text);
  std::unique_ptr<store::Store> store = testing::Ok(store::Store::OpenInMemory());
  std::ostringstream out, err;
  console::Console console(out, err, false);
  const std::atomic<bool> stop{false};
  FakeClock clock;
  Runner runner(bundle, {.workers = 1}, *store, console, stop,
                RunSeam::Scripted(clock, Services(sent)));
  Ran ran;
  ran.report = runner.Run("b-run", [&] {
    return store->CreateRun({.id = "b-run", .scenario_name = "baseline-endpoints"});
  });
  ran.console = out.str() + err.str();
  if (ran.report.ok()) ran.answers = testing::Ok(store->ListSampledAnswers("b-run"));
  return ran;
}

TEST_CASE("an endpoint baseline is asked the sampled tasks at rest, with its own URL and key",
          "[scenario][fake][baselines]") {
  setenv("SG_TEST_TARGET_KEY", "target-secret", 1);
  setenv("SG_TEST_DESK_KEY", "desk-secret", 1);
  std::vector<Sent> sent;
  Ran ran = RunScenario(Scenario(), sent);
  INFO(ran.console);
  REQUIRE(ran.report.ok());

  // Each baseline answered exactly the tasks of the assistant's sampled answers, once each.
  std::set<std::string> assistant_tasks;
  std::map<std::string, std::multiset<std::string>> tasks_of;
  std::map<std::string, std::set<int64_t>> e2e_of;
  for (const store::SampledAnswer& a : ran.answers) {
    if (a.source == store::kAssistantSource) {
      assistant_tasks.insert(a.task_id);
      if (a.condition == "at_rest") e2e_of["assistant at rest"].insert(a.e2e_ns.value_or(-1));
      continue;
    }
    tasks_of[a.source].insert(a.task_id);
    e2e_of[a.source].insert(a.e2e_ns.value_or(-1));
    CHECK(a.condition == "at_rest");
    CHECK(a.stage == a.source);
    CHECK(a.answer_text.starts_with("An answer for you."));
    // The desk's own key and the target's, echoed back, are redacted from what is stored.
    CHECK(a.answer_text.find("desk-secret") == std::string::npos);
    CHECK(a.answer_text.find("target-secret") == std::string::npos);
    CHECK((a.answer_text.size() > std::string("An answer for you.").size()) ==
          (a.source != "desk"));
  }
  REQUIRE(assistant_tasks.size() >= 5);
  for (const std::string name : {"previous-model", "desk", "desk-keyed"}) {
    INFO(name);
    CHECK(tasks_of[name] ==
          std::multiset<std::string>(assistant_tasks.begin(), assistant_tasks.end()));
  }
  // The latency each took, exactly: first token and three more 10 ms apart.
  CHECK(e2e_of["assistant at rest"] == std::set<int64_t>{130 * kMs});
  CHECK(e2e_of["previous-model"] == std::set<int64_t>{330 * kMs});
  CHECK(e2e_of["desk"] == std::set<int64_t>{2030 * kMs});
  CHECK(e2e_of["desk-keyed"] == std::set<int64_t>{2030 * kMs});
  const std::vector<std::pair<std::string, int64_t>> counts = {
      {"previous-model", static_cast<int64_t>(assistant_tasks.size())},
      {"desk", static_cast<int64_t>(assistant_tasks.size())},
      {"desk-keyed", static_cast<int64_t>(assistant_tasks.size())}};
  CHECK(ran.report->baseline_samples == counts);

  // Where each request went, and with which key: the previous model on the target's server with
  // the target's key and the stage's headers, the desk at its own path with no key or its own.
  std::map<std::string, int> where;
  for (const Sent& s : sent) {
    INFO(s.url << " " << s.authorization << " " << s.model);
    CHECK(s.stage_header == "full");
    if (s.url == "http://desk.invalid/api/answer") {
      CHECK(s.model == "model-now");
      CHECK((s.authorization == "" || s.authorization == "Bearer desk-secret"));
      CHECK((s.desk_header == "1") == (s.authorization == "Bearer desk-secret"));
      ++where[s.authorization == "" ? "desk" : "desk-keyed"];
    } else {
      CHECK(s.url == "http://scripted.invalid/v1/chat/completions");
      CHECK(s.authorization == "Bearer target-secret");
      CHECK(s.desk_header == "");
      ++where[s.model];
    }
  }
  const int sampled = static_cast<int>(assistant_tasks.size());
  CHECK(where["desk"] == sampled);
  CHECK(where["desk-keyed"] == sampled);
  CHECK(where["model-before"] == sampled);
  CHECK(where["model-now"] == static_cast<int>(sent.size()) - 3 * sampled);
}

TEST_CASE("an endpoint baseline that answers nothing is said so, and joins no review",
          "[scenario][fake][baselines]") {
  setenv("SG_TEST_TARGET_KEY", "target-secret", 1);
  setenv("SG_TEST_DESK_KEY", "desk-secret", 1);
  std::vector<Sent> sent;
  Ran ran = RunScenario(
      Scenario("  - name: broken\n    endpoint: {base_url: \"http://broken.invalid\"}\n"), sent);
  INFO(ran.console);
  REQUIRE(ran.report.ok());
  std::set<std::string> tasks;  // asked of every baseline: the assistant's sampled tasks
  for (const store::SampledAnswer& a : ran.answers) {
    CHECK(a.source != "broken");
    if (a.source == store::kAssistantSource) tasks.insert(a.task_id);
  }
  const size_t asked = tasks.size();
  REQUIRE(asked >= 5);
  REQUIRE(ran.report->baseline_samples.size() == 4);
  CHECK(ran.report->baseline_samples.back() == std::pair<std::string, int64_t>{"broken", 0});
  const std::string note = "baseline 'broken' answered 0 of the " + std::to_string(asked) +
                           " tasks it was asked (http_error " + std::to_string(asked) +
                           "); only its answers are reviewed";
  CHECK(std::find(ran.report->notes.begin(), ran.report->notes.end(), note) !=
        ran.report->notes.end());
  // The three that answered are not noted.
  for (const std::string& n : ran.report->notes)
    CHECK(n.find("baseline 'desk") == std::string::npos);
}

TEST_CASE("a plain JSON API baseline is sent its body with the question, and read at its pointer",
          "[scenario][fake][baselines]") {
  setenv("SG_TEST_TARGET_KEY", "target-secret", 1);
  setenv("SG_TEST_DESK_KEY", "desk-secret", 1);
  const std::string plain = R"(  - name: plain
    endpoint: {base_url: "http://plain.invalid", path: /ask, answer_at: /result/text,
               body: {question: "Q: {prompt}", lang: en, tags: ["{prompt}", 1]}}
  - name: plain-wrong
    endpoint: {base_url: "http://plain.invalid", path: /v2, answer_at: /result/text,
               body: {question: "{prompt}"}}
)";
  std::vector<Sent> sent;
  Ran ran = RunScenario(Scenario(plain), sent);
  INFO(ran.console);
  REQUIRE(ran.report.ok());
  testing::TempDir dir;
  const manifest::Bundle bundle = testing::LoadScenarioBundle(dir, "scenario.yaml", Scenario());
  REQUIRE(bundle.corpus);
  std::map<std::string, std::string> question_of;  // task -> the user's question
  for (const manifest::Task& task : bundle.corpus->tasks)
    question_of[task.id] = task.messages.empty() ? task.prompt : task.messages.back().content;

  std::set<std::string> assistant_tasks, plain_tasks;
  for (const store::SampledAnswer& a : ran.answers) {
    if (a.source == store::kAssistantSource) assistant_tasks.insert(a.task_id);
    CHECK(a.source != "plain-wrong");
    if (a.source != "plain") continue;
    plain_tasks.insert(a.task_id);
    // The text at /result/text, whole; the question went into the body in place of {prompt}.
    CHECK(a.answer_text == "Desk says: Q: " + question_of.at(a.task_id));
    CHECK(a.e2e_ns == 700 * kMs);
  }
  REQUIRE(assistant_tasks.size() >= 5);
  CHECK(plain_tasks == assistant_tasks);

  // The body is the overlay's alone, filled in: no model, messages, tools or stream fields; no
  // key goes to a service elsewhere; the stage's headers still go.
  std::set<std::string> questions;
  int plain_requests = 0;
  for (const Sent& s : sent) {
    if (!s.url.starts_with("http://plain.invalid")) continue;
    ++plain_requests;
    INFO(s.body.dump());
    CHECK(s.authorization == "");
    CHECK(s.stage_header == "full");
    if (s.url == "http://plain.invalid/v2") {
      CHECK(s.body.size() == 1);
      continue;
    }
    REQUIRE(s.url == "http://plain.invalid/ask");
    REQUIRE(s.body.is_object());
    CHECK(s.body.size() == 3);
    const std::string question = s.body.value("question", "");
    REQUIRE(question.starts_with("Q: "));
    CHECK(s.body["lang"] == "en");
    CHECK(s.body["tags"] == json::array({question.substr(3), 1}));
    questions.insert(question.substr(3));
  }
  CHECK(plain_requests == 2 * static_cast<int>(assistant_tasks.size()));
  std::set<std::string> expected;
  for (const std::string& task : assistant_tasks)
    expected.insert(question_of.at(task));
  CHECK(questions == expected);

  // A reply without text at the pointer answers nothing, and the run says so.
  const std::string asked = std::to_string(assistant_tasks.size());
  const std::string note = "baseline 'plain-wrong' answered 0 of the " + asked +
                           " tasks it was asked (malformed_stream " + asked +
                           "); only its answers are reviewed";
  CHECK(std::find(ran.report->notes.begin(), ran.report->notes.end(), note) !=
        ran.report->notes.end());
}

// (source, condition, task, answer, e2e) of each sampled answer of `run` in `store`.
std::multiset<std::tuple<std::string, std::string, std::string, std::string, int64_t>> Answers(
    store::Store& store, const std::string& run) {
  std::multiset<std::tuple<std::string, std::string, std::string, std::string, int64_t>> out;
  for (const store::SampledAnswer& a : testing::Ok(store.ListSampledAnswers(run)))
    out.insert({a.source, a.condition, a.task_id, a.answer_text, a.e2e_ns.value_or(-1)});
  return out;
}

template <typename Set>
Set WithoutUnderLoad(Set answers) {
  std::erase_if(answers, [](const auto& a) { return std::get<1>(a) == "under_load"; });
  return answers;
}

TEST_CASE("a sharded run's baselines, asked and recorded, reach the run merged from its shards",
          "[scenario][fake][baselines]") {
  setenv("SG_TEST_TARGET_KEY", "target-secret", 1);
  setenv("SG_TEST_DESK_KEY", "desk-secret", 1);
  testing::TempDir dir;
  // A recorded baseline too, with an answer to every task of the corpus.
  std::string csv = "task_id,answer,resolution_s\n";
  const manifest::Bundle plain = testing::LoadScenarioBundle(dir, "scenario.yaml", Scenario());
  for (const manifest::Task& task : plain.corpus->tasks)
    csv += task.id + ",Recorded answer to " + task.id + ",60\n";
  testing::WriteText(dir / "desk.csv", csv);
  // One answer at rest, so that most sampled tasks are the answers under load, which the merge
  // draws again.
  const manifest::Bundle bundle = testing::LoadScenarioBundle(
      dir, "scenario.yaml",
      ReplaceAll(Scenario("  - name: recorded\n    answers: desk.csv\n"), "at_rest: 5",
                 "at_rest: 1"));
  std::ostringstream out, err;
  console::Console console(out, err, false);
  const std::atomic<bool> stop{false};

  std::vector<Sent> sent;
  std::vector<ShardRun> shards;
  for (int64_t i = 0; i < 2; ++i) {
    const std::string id = "shard-" + std::to_string(i + 1);
    const std::string path = dir / (id + ".db");
    {
      std::unique_ptr<store::Store> store = testing::Ok(store::Store::Open(path));
      RunSettings settings{.workers = 1};
      settings.shard = {.index = i, .count = 2};
      FakeClock clock;
      Runner runner(bundle, settings, *store, console, stop,
                    RunSeam::Scripted(clock, Services(sent)));
      Result<RunReport> report = runner.Run(id, [&] {
        store::RunInfo run;
        run.id = id;
        run.scenario_name = "baseline-endpoints";
        run.fingerprint = "same";
        run.settings_json = SettingsToJson(settings).dump();
        return store->CreateRun(run);
      });
      INFO(out.str() << err.str());
      REQUIRE(report.ok());
      REQUIRE(store->SetRunStatus(id, store::RunStatus::kComplete, 1).ok());
    }
    shards.push_back(testing::Ok(ReadShard(path)));
  }
  REQUIRE(CheckShards(shards).ok());
  std::unique_ptr<store::Store> first = testing::Ok(store::Store::OpenExisting(dir / "shard-1.db"));
  const auto asked = Answers(*first, "shard-1");
  std::set<std::string> sources;
  for (const auto& answer : asked)
    sources.insert(std::get<0>(answer));
  REQUIRE(sources == std::set<std::string>{store::kAssistantSource, "previous-model", "desk",
                                           "desk-keyed", "recorded"});

  // The merge, as `stagegate merge` does it: the shards' stores joined, then the run replayed.
  std::unique_ptr<store::Store> store = testing::Ok(store::Store::Open(dir / "merged.db"));
  store::RunInfo run = shards.front().run;
  run.id = "merged";
  run.status = store::RunStatus::kRunning;
  REQUIRE(store->CreateRun(run).ok());
  const ResumeFrom merged = testing::Ok(MergeShardStores(*store, run.id, shards));
  RunSettings settings = shards.front().settings;
  settings.shard = {};
  settings.merged_shards = 2;
  settings.replay = true;
  const size_t sent_before = sent.size();
  FakeClock clock;
  Runner runner(bundle, settings, *store, console, stop, RunSeam::Scripted(clock, Services(sent)));
  Result<RunReport> report = runner.Run(
      run.id, [] { return Status::Ok(); }, &merged);
  INFO(out.str() << err.str());
  REQUIRE(report.ok());
  CHECK(sent.size() == sent_before);  // a merge asks nobody
  // The assistant's answers at rest are the first shard's; those under load are drawn again, from
  // every shard's steady phase, so the merged run's sampled tasks may differ from that shard's.
  const auto joined = Answers(*store, run.id);
  auto assistant = [](auto answers) {
    std::erase_if(answers, [](const auto& a) { return std::get<0>(a) != store::kAssistantSource; });
    return answers;
  };
  CHECK(WithoutUnderLoad(assistant(joined)) == WithoutUnderLoad(assistant(asked)));
  std::set<std::string> tasks;  // the merged run's sampled tasks
  for (const auto& a : assistant(joined))
    tasks.insert(std::get<2>(a));
  // Each asked baseline's answers are the first shard's, to those of these tasks it was asked.
  decltype(Answers(*store, run.id)) expected;
  for (const auto& a : asked)
    if (std::get<0>(a) != store::kAssistantSource && std::get<0>(a) != "recorded" &&
        tasks.contains(std::get<2>(a)))
      expected.insert(a);
  // The recorded baseline answers every one of them, from the scenario's file.
  for (const std::string& task : tasks)
    expected.insert({"recorded", "at_rest", task, "Recorded answer to " + task, 60'000'000'000});
  auto baselines = joined;
  std::erase_if(baselines, [](const auto& a) { return std::get<0>(a) == store::kAssistantSource; });
  CHECK(baselines == expected);
  std::set<std::string> first_tasks;
  for (const auto& a : assistant(asked))
    first_tasks.insert(std::get<2>(a));
  // (The case this covers: the first shard sampled a task the merged run did not.)
  CHECK(first_tasks != tasks);
  CHECK(report->baseline_samples.size() == 4);
}

TEST_CASE("an endpoint baseline whose key is unset stops the run before any load",
          "[scenario][fake][baselines]") {
  setenv("SG_TEST_TARGET_KEY", "target-secret", 1);
  unsetenv("SG_TEST_DESK_KEY");
  std::vector<Sent> sent;
  Ran ran = RunScenario(Scenario(), sent);
  REQUIRE_FALSE(ran.report.ok());
  CHECK(ran.report.status().message().find(
            "baseline 'desk-keyed': the baseline's api_key_env names SG_TEST_DESK_KEY, which is "
            "unset") != std::string::npos);
  CHECK(sent.empty());
}

TEST_CASE(
    "a baseline gives recorded answers or an endpoint, and an endpoint's keys are read "
    "with positions",
    "[scenario][baselines]") {
  testing::TempDir dir;
  const std::string text = Scenario(R"(  - name: both
    answers: desk.csv
    endpoint: {body: {model: m}}
  - name: neither
  - name: twice-authorized
    endpoint: {api_key_env: SOME_KEY, headers: {authorization: "Bearer x"}, colour: blue}
  - name: plain-unmapped
    endpoint: {base_url: "http://plain.invalid", answer_at: answer, body: {q: x}, tools: true}
)");
  testing::WriteText(dir / "scenario.yaml", text);
  manifest::Diagnostics diagnostics;
  manifest::LoadBundle(dir / "scenario.yaml", diagnostics);
  std::vector<std::string> said;
  for (const manifest::Diagnostic& d : diagnostics.Sorted())
    said.push_back(d.ToString());
  const std::string all = Join(said, "\n");
  INFO(all);
  CHECK(all.find(":38:5: baseline 'both': give one of 'answers'") != std::string::npos);
  CHECK(all.find(":41:5: baseline 'neither': give one of 'answers'") != std::string::npos);
  CHECK(all.find(":43:49: baseline 'twice-authorized': header 'Authorization' would be sent "
                 "twice") != std::string::npos);
  CHECK(all.find(":43:77: unknown key 'colour'") != std::string::npos);
  // A plain JSON API needs a pointer to the answer, a path, and the question's place in the body;
  // it is sent no tools.
  CHECK(all.find(":45:61: baseline 'plain-unmapped': 'answer_at' must be a JSON pointer to the "
                 "answer's text in the reply, as /answer or /data/0/text, got 'answer'") !=
        std::string::npos);
  CHECK(all.find(":45:15: baseline 'plain-unmapped': a plain JSON API ('answer_at') needs its "
                 "'path'") != std::string::npos);
  CHECK(all.find(":45:75: baseline 'plain-unmapped': a plain JSON API's 'body' must carry the "
                 "task's question as \"{prompt}\"") != std::string::npos);
  CHECK(all.find(":45:90: baseline 'plain-unmapped': a plain JSON API is sent no tool "
                 "definitions") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::scenario

// `stagegate init` as a process, against scripted endpoints (tests/cli/init_third_party_test.sh
// runs it against a third-party server): what the probe finds, how the scenario follows it, and
// that what it writes loads as written whatever the user typed.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/invoke.h"
#include "http_test_server.h"
#include "manifest/bundle.h"
#include "sim_fixture.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::HttpResponse;
using testing::Ran;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An environment variable set for the scope's length (the stagegate processes it starts inherit
// it).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_.c_str()); }

 private:
  std::string name_;
};

// Every path under `root`, relative to it, folders too.
std::set<std::string> Tree(const std::string& root) {
  std::set<std::string> paths;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root))
    paths.insert(fs::relative(entry.path(), root).string());
  return paths;
}

// The files init writes for the bare stage alone.
const std::vector<std::string> kBareFiles = {"scenario.yaml",
                                             "rubric.yaml",
                                             "corpus/corpus.yaml",
                                             "corpus/personas.yaml",
                                             "corpus/tasks/examples.yaml",
                                             "corpus/README.md"};

// The lines of `validate SCENARIO`'s summary that are notes.
std::vector<std::string> ValidateNotes(const std::string& scenario, int& exit_code) {
  const Invocation validated = Invoke({"validate", scenario});
  exit_code = validated.exit_code;
  std::vector<std::string> notes;
  for (const std::string& line : Split(validated.out, '\n'))
    if (line.starts_with("note ")) notes.push_back(line);
  return notes;
}

const manifest::LoadPhase* Phase(const manifest::Scenario& s, manifest::PhaseKind kind) {
  return s.FindPhase(kind);
}

std::optional<manifest::Bundle> Load(const std::string& scenario) {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(scenario, diagnostics);
  INFO(diagnostics.ToString());
  CHECK(diagnostics.empty());
  return bundle;
}

TEST_CASE("init against a server that does not stream writes stream: false and no TTFT threshold",
          "[cli][init]") {
  testing::FixedResponseServer server([](const std::string& request) {
    if (request.starts_with("GET /v1/models"))
      return HttpResponse("404 Not Found", "no such route", "text/plain");
    if (request.starts_with("GET /metrics"))
      return HttpResponse("200 OK",
                          "# TYPE vllm:num_requests_waiting gauge\n"
                          "vllm:num_requests_waiting 0\n");
    // A whole answer although the request asked for a stream, and no usage.
    return HttpResponse("200 OK",
                        R"({"choices":[{"message":{"role":"assistant","content":"Hello there"},)"
                        R"("finish_reason":"stop"}]})",
                        "application/json");
  });
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", server.base() + "/v1/", "--model", "m1"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "model list (/v1/models): none"));
  CHECK(Has(ran.out, "model name m1: accepted"));
  CHECK(Has(ran.out, "streaming: no: the scenario sets stream: false"));
  CHECK(Has(ran.out, "usage in the stream: absent"));
  CHECK(Has(ran.out, "/metrics: present"));
  CHECK(Has(ran.out, "its answer began: \"Hello there\""));
  CHECK(Has(ran.out, "adjusted: stream: false, and no TTFT threshold"));
  CHECK(Has(ran.out, "adjusted: metrics_url: " + server.base() + "/metrics"));

  const std::optional<manifest::Bundle> bundle = Load(dir / "app/scenario.yaml");
  REQUIRE(bundle);
  const manifest::Scenario& s = bundle->scenario;
  CHECK_FALSE(s.target.stream);
  CHECK(s.target.base_url == server.base());
  CHECK(s.target.metrics_url == server.base() + "/metrics");
  CHECK(s.target.model == "m1");
  REQUIRE(s.thresholds.latency.size() == 1);  // e2e only: without a stream there is no TTFT
  CHECK(s.thresholds.latency[0].metric == manifest::LatencyMetric::kE2e);
  // The probe asked for a stream, for usage and for few tokens.
  const std::vector<std::string> requests = server.requests();
  const auto chat = std::find_if(requests.begin(), requests.end(), [](const std::string& r) {
    return r.starts_with("POST /v1/chat/completions");
  });
  REQUIRE(chat != requests.end());
  CHECK(Has(*chat, R"("stream":true)"));
  CHECK(Has(*chat, R"("include_usage":true)"));
  CHECK(Has(*chat, R"("model":"m1")"));
}

TEST_CASE("init against the reference application finds what it is known to serve", "[cli][init]") {
  // The sim lists its model, streams, sends usage when asked, and serves /metrics: the probe's
  // every answer is known beforehand.
  const auto sim = testing::StartSimServer(testing::ModelProfile(1e12, 2));
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", sim->base_url(), "--model", "sim-assistant"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "model list (/v1/models): sim-assistant\n"));
  CHECK(Has(ran.out, "model name sim-assistant: accepted"));
  CHECK(Has(ran.out, "streaming: works"));
  CHECK(Has(ran.out, "usage in the stream: present"));
  CHECK(Has(ran.out, "/metrics: present"));
  CHECK(Has(ran.out, "one answer alone: "));
  CHECK(Has(ran.out, "adjusted: overload: "));
  const std::optional<manifest::Bundle> bundle = Load(dir / "app/scenario.yaml");
  REQUIRE(bundle);
  CHECK(bundle->scenario.target.stream);
  CHECK(bundle->scenario.target.metrics_url == sim->base_url() + "/metrics");
  CHECK(bundle->scenario.thresholds.latency.size() == 2);  // TTFT and e2e
  // Overload sized from the probe's answer, within its bounds, then recovery at the steady rate.
  const manifest::LoadPhase* overload = Phase(bundle->scenario, manifest::PhaseKind::kOverload);
  const manifest::LoadPhase* recovery = Phase(bundle->scenario, manifest::PhaseKind::kRecovery);
  REQUIRE(overload);
  REQUIRE(recovery);
  REQUIRE(overload->rate);
  CHECK(*overload->rate >= 10);
  CHECK(*overload->rate <= 200);
  REQUIRE(overload->duration_s);
  CHECK(*overload->duration_s >= 5);
  CHECK(*overload->duration_s <= 30);
  CHECK(overload->requests == std::llround(*overload->rate * *overload->duration_s));
  CHECK(Has(testing::ReadText(dir / "app/scenario.yaml"),
            "  # Sized from init's probe: one answer of "));
  CHECK(recovery->rate == 1);
  CHECK(*recovery->duration_s > bundle->scenario.recovery.max_recovery_s);
  int validated = -1;
  CHECK(ValidateNotes(dir / "app/scenario.yaml", validated).empty());
  CHECK(validated == 0);
}

TEST_CASE("init against a server answering junk says what it could not find, and never crashes",
          "[cli][init]") {
  const char kJunk[] = "\x00\xff{not json\ndata: {\"choices\": 5}\n\ndata: [DO";
  const std::string junk(kJunk, sizeof kJunk - 1);
  for (const char* type : {"text/event-stream", "application/json", "text/plain"}) {
    testing::FixedResponseServer server(HttpResponse("200 OK", junk, type));
    testing::TempDir dir;
    Ran ran = testing::RunStagegate(
        dir, {"init", dir / "app", "--target-url", server.base(), "--model", "m"});
    INFO(type << "\n" << ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    CHECK(Has(ran.out, "model list (/v1/models): none"));
    CHECK(Has(ran.out, "streaming: no"));
    CHECK(Has(ran.out, "/metrics: absent"));
    CHECK(Load(dir / "app/scenario.yaml"));
  }
}

TEST_CASE("init says when the model name is refused, and which models the server lists",
          "[cli][init]") {
  testing::FixedResponseServer server([](const std::string& request) {
    if (request.starts_with("GET /v1/models"))
      return HttpResponse("200 OK", R"({"object":"list","data":[{"id":"llama-3-8b"}]})",
                          "application/json");
    if (request.starts_with("GET /metrics")) return HttpResponse("404 Not Found", "", "text/plain");
    return HttpResponse("404 Not Found", R"({"error":{"message":"model gpt-x does not exist"}})",
                        "application/json");
  });
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", server.base(), "--model", "gpt-x"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "model list (/v1/models): llama-3-8b (gpt-x is not among them)"));
  CHECK(Has(ran.out,
            "model name gpt-x: refused (HTTP 404: {\"error\":{\"message\":\"model gpt-x "
            "does not exist\"}}): set target.model to a name it accepts"));
  CHECK(Has(ran.out, "/metrics: absent"));
  CHECK(Load(dir / "app/scenario.yaml"));
}

TEST_CASE("init writes files that load as written whatever the model name holds", "[cli][init]") {
  testing::TempDir dir;
  const std::string model = "org/model \"v2\": # not a comment {x} [y] \\ 'z' \xC3\xA9";
  Ran ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9/x/v1", "--model", model,
            "--stages", "tools,identity,retrieval", "--api-key-env", "MY_KEY", "--no-probe"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::optional<manifest::Bundle> bundle = Load(dir / "app/scenario.yaml");
  REQUIRE(bundle);
  const manifest::Scenario& s = bundle->scenario;
  CHECK(s.target.model == model);
  CHECK(s.manifest.model == model);
  CHECK(s.target.base_url == "http://127.0.0.1:9/x");
  CHECK(s.target.api_key_env == "MY_KEY");
  CHECK(s.target.stream);
  // Stages in their order whatever the order given, bare first.
  std::vector<std::string> stages;
  for (const manifest::Stage& stage : s.stages)
    stages.push_back(stage.name);
  CHECK(stages == std::vector<std::string>{"bare", "retrieval", "identity", "tools"});
  // Every task is init's example, and each stage has tasks of its own to run.
  REQUIRE(bundle->corpus);
  REQUIRE(bundle->corpus->tasks.size() == 9);
  for (const manifest::Task& task : bundle->corpus->tasks)
    CHECK(task.example);
  CHECK(bundle->corpus->tools.size() == 1);
  CHECK(Has(ran.out, "wrote 7 files"));
}

TEST_CASE(
    "init without a probe writes overload and recovery phases that let every condition be "
    "decided",
    "[cli][init]") {
  for (const std::vector<std::string>& stages :
       {std::vector<std::string>{"bare"}, {"retrieval"}, {"tools", "identity", "retrieval"}}) {
    testing::TempDir dir;
    Ran ran =
        testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                    "--model", "m", "--stages", Join(stages, ","), "--no-probe"});
    INFO(Join(stages, ",") << "\n" << ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    const std::optional<manifest::Bundle> bundle = Load(dir / "app/scenario.yaml");
    REQUIRE(bundle);
    const manifest::Scenario& s = bundle->scenario;
    const manifest::LoadPhase* overload = Phase(s, manifest::PhaseKind::kOverload);
    const manifest::LoadPhase* recovery = Phase(s, manifest::PhaseKind::kRecovery);
    REQUIRE(overload);
    REQUIRE(recovery);
    CHECK(overload->rate == 40);
    CHECK(overload->duration_s == 5);
    CHECK(overload->requests == 200);
    CHECK(recovery->rate == 1);
    CHECK(recovery->window_s == 5);
    CHECK(*recovery->duration_s > s.recovery.max_recovery_s);
    CHECK(Has(testing::ReadText(dir / "app/scenario.yaml"),
              "  # Sized without a probe (init --no-probe): 40 requests/s for 5 s, at most 200."));
    // The final stage runs every phase; the ones before it no overload, which is not theirs.
    const std::vector<manifest::EffectiveStage> effective = manifest::EffectiveStages(s);
    using manifest::PhaseKind;
    for (size_t i = 0; i < effective.size(); ++i)
      CHECK(effective[i].phases ==
            (i + 1 == effective.size()
                 ? std::vector<PhaseKind>{PhaseKind::kWarmup, PhaseKind::kSteady, PhaseKind::kBurst,
                                          PhaseKind::kOverload, PhaseKind::kRecovery}
                 : std::vector<PhaseKind>{PhaseKind::kWarmup, PhaseKind::kSteady,
                                          PhaseKind::kBurst}));
    // validate has nothing to add: every condition can be decided as written.
    int validated = -1;
    CHECK(ValidateNotes(dir / "app/scenario.yaml", validated) == std::vector<std::string>{});
    CHECK(validated == 0);
  }
}

TEST_CASE("init never overwrites, names every file in the way, and writes nothing then",
          "[cli][init]") {
  testing::TempDir dir;
  testing::WriteText(dir / "app/rubric.yaml", "mine\n");
  testing::WriteText(dir / "app/corpus/corpus.yaml", "mine too\n");
  Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                        "--model", "m", "--no-probe"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err, "app/rubric.yaml exists; init never overwrites a file"));
  CHECK(Has(ran.err, "app/corpus/corpus.yaml exists; init never overwrites a file"));
  CHECK(testing::ReadText(dir / "app/rubric.yaml") == "mine\n");
  CHECK_FALSE(std::filesystem::exists(std::string(dir / "app/scenario.yaml")));
}

TEST_CASE("init against an endpoint that is not there still writes the files, and says so",
          "[cli][init]") {
  testing::TempDir dir;
  // Port 9 (discard) on loopback: nothing listens there.
  Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                        "--model", "m", "--probe-timeout-ms", "2000"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "could not reach http://127.0.0.1:9: "));
  CHECK(Load(dir / "app/scenario.yaml"));
}

TEST_CASE("init refuses a key where the name of its variable belongs, and a URL that is not one",
          "[cli][init]") {
  testing::TempDir dir;
  Ran ran =
      testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                  "--model", "m", "--api-key-env", "sk-live-123", "--no-probe"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err, "--api-key-env must be a variable name, not the key"));
  ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", "file:///etc/passwd", "--model", "m"});
  CHECK(ran.exit_code == 2);
  // A password in the URL would be written into the scenario.
  ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url",
                                    "http://user:s3cret@127.0.0.1:9/v1", "--model", "m"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err,
            "--target-url: holds a user or password, which the file written would then "
            "hold: give the key through an environment variable (--api-key-env"));
  CHECK_FALSE(Has(ran.out + ran.err, "s3cret"));
  CHECK_FALSE(std::filesystem::exists(std::string(dir / "app")));
  // A query string would come before every path, and a key in it would sit in scenario.yaml; a
  // fragment is never sent; a full endpoint would get its path twice.
  for (const auto& [url, says] : std::vector<std::pair<std::string, std::string>>{
           {"http://127.0.0.1:9/v1?api-key=s3cret", "holds a query string ('?...')"},
           {"http://127.0.0.1:9/v1?", "holds a query string ('?...')"},
           {"http://127.0.0.1:9/v1#s3cret", "holds a fragment ('#...'), which is never sent"},
           {"http://127.0.0.1:9/v1/chat/completions",
            "is an endpoint, not a base URL: give what comes before '/chat/completions'"},
           {"http://127.0.0.1:9/v1/completions/", "is an endpoint, not a base URL"}}) {
    INFO(url);
    ran = testing::RunStagegate(
        dir, {"init", dir / "app", "--target-url", url, "--model", "m", "--no-probe"});
    CHECK(ran.exit_code == 2);
    CHECK(Has(ran.err, "--target-url: " + says));
    CHECK_FALSE(Has(ran.out + ran.err, "s3cret"));
    CHECK_FALSE(std::filesystem::exists(std::string(dir / "app")));
  }
}

// A key that a hostile server echoes back, and the variable init reads it from.
const char kKeyVariable[] = "STAGEGATE_INIT_TEST_KEY";
const std::string kKey = "sk-hostile-5f1e9a3c7d";

// Neither the key nor its first 12 characters are in `text`.
void CheckNoKey(const std::string& text, const std::string& where) {
  INFO(where);
  CHECK_FALSE(Has(text, kKey));
  CHECK_FALSE(Has(text, kKey.substr(0, 12)));
}

// Nothing a terminal would act on: ESC, NUL, C1 CSI, the bidi override, the line separator.
void CheckNothingRaw(const std::string& text) {
  CHECK_FALSE(Has(text, "\x1b"));
  CHECK_FALSE(Has(text, std::string(1, '\0')));
  CHECK_FALSE(Has(text, "\xC2\x9B"));
  CHECK_FALSE(Has(text, "\xE2\x80\xAE"));
  CHECK_FALSE(Has(text, "\xE2\x80\xA8"));
  for (const std::string& line : Split(text, '\n'))
    CHECK(line.size() < 4000);
}

// Every file under `root` (what init wrote, and its stdout and stderr) holds no key.
void CheckNoKeyInFiles(const std::string& root) {
  int files = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file()) {
      ++files;
      CheckNoKey(testing::ReadText(entry.path().string()), entry.path().string());
    }
  CHECK(files >= 8);  // the six files of the bare stage, stdout and stderr
}

TEST_CASE(
    "init against a hostile server prints its text redacted and escaped, and writes none "
    "of it",
    "[cli][init]") {
  const std::string long_id(100'000, 'x');
  const json models = {{"object", "list"},
                       {"data",
                        {{{"id", "echo-" + kKey}},
                         {{"id", "\x1b[2J\x1b[31mred"}},
                         {{"id", "two\nlines"}},
                         {{"id", std::string("nul\0byte", 8)}},
                         {{"id",
                           "abc\xE2\x80\xAE"
                           "fed"}},
                         {{"id", "para\xE2\x80\xA8graph"}},
                         {{"id",
                           "csi\xC2\x9B"
                           "2J"}},
                         {{"id", long_id}}}}};
  const auto chunk = [](const json& body) { return "data: " + body.dump() + "\n\n"; };
  const std::string stream =
      chunk({{"choices",
              {{{"index", 0},
                {"delta", {{"content", "Your key is " + kKey + " \x1b]0;pwned\x07 ok"}}}}}}}) +
      chunk({{"choices", json::array()},
             {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 9}}}}) +
      "data: [DONE]\n\n";
  testing::FixedResponseServer server([&](const std::string& request) {
    if (request.starts_with("GET /v1/models"))
      return HttpResponse("200 OK", models.dump(), "application/json");
    if (request.starts_with("GET /metrics"))
      return HttpResponse("200 OK", "# " + kKey + "\nup 1\n");
    return HttpResponse("200 OK", stream, "text/event-stream");
  });
  ScopedEnv key(kKeyVariable, kKey);
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", server.base(),
                                        "--model", "m1", "--api-key-env", kKeyVariable});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  // The key went to the server, and came back redacted.
  const std::vector<std::string> requests = server.requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(Has(requests.front(), "Authorization: Bearer " + kKey));
  CheckNoKey(ran.out + ran.err, "the console");
  CheckNothingRaw(ran.out + ran.err);
  CHECK(Has(ran.out,
            "model list (/v1/models): echo-[redacted], \\x1b[2J\\x1b[31mred, "
            "two\\nlines, nul\\x00byte, abc\\u{202e}fed, para\\u{2028}graph, "
            "csi\\u{9b}2J, " +
                std::string(200, 'x') +
                "... (99800 more bytes) (m1 is not among them); "
                "6 ids hold characters a terminal would act on, "
                "shown escaped: init never writes such a name "
                "into the scenario, nor any text from the "
                "server\n"));
  CHECK(Has(ran.out, "its answer began: \"Your key is [redacted] \\x1b]0;pwned\\x07 ok\"\n"));
  CHECK(Has(ran.out, "one answer alone: 9 tokens in "));
  CheckNoKeyInFiles(dir.path());
  const std::string scenario = testing::ReadText(dir / "app/scenario.yaml");
  for (const char* server_text : {"echo-", "redacted", "pwned", "xxxxxxxxxx"})
    CHECK_FALSE(Has(scenario, server_text));
  CHECK(Load(dir / "app/scenario.yaml"));
}

TEST_CASE("init shows a refusal that echoes the key redacted, even where it would be cut",
          "[cli][init]") {
  // The key straddles the 200th byte of the refusal's body: redacted before it is cut, not after.
  const std::string body = std::string(180, 'a') + kKey + "tail";
  testing::FixedResponseServer server([&](const std::string& request) {
    if (request.starts_with("POST /v1/chat/completions"))
      return HttpResponse("401 Unauthorized", body, "text/plain");
    return HttpResponse("404 Not Found", "Invalid key " + kKey + "\x1b[0m", "text/plain");
  });
  ScopedEnv key(kKeyVariable, kKey);
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", server.base(),
                                        "--model", "m1", "--api-key-env", kKeyVariable});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CheckNoKey(ran.out + ran.err, "the console");
  CheckNothingRaw(ran.out + ran.err);
  CHECK(Has(ran.out, "model name m1: refused (HTTP 401: " + std::string(180, 'a') +
                         "[redacted]... (4 more bytes)): set target.model to a name it accepts\n"));
  CheckNoKeyInFiles(dir.path());
}

TEST_CASE("init refuses a model name that would not show as itself, and writes nothing",
          "[cli][init]") {
  for (const auto& [model, shown] :
       std::vector<std::pair<std::string, std::string>>{{"gpt\xE2\x80\xAE"
                                                         "4o",
                                                         "gpt\\u{202e}4o"},
                                                        {"m\nx", "m\\nx"},
                                                        {"m\xC2\x85", "m\\u{85}"},
                                                        {"m\xff", "m\\xff"}}) {
    testing::TempDir dir;
    Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                          "--model", model, "--no-probe"});
    INFO(shown << "\n" << ran.out << ran.err);
    CHECK(ran.exit_code == 2);
    CHECK(ran.err == "stagegate init: --model " + shown +
                         " holds a character that does not show as itself (escaped here); init "
                         "writes only a name that does\n");
    CHECK_FALSE(fs::exists(dir / "app"));
  }
}

TEST_CASE("init that cannot write leaves nothing behind, and runs again once the way is clear",
          "[cli][init]") {
  const std::vector<std::string> args = {"--target-url", "http://127.0.0.1:9", "--model", "m",
                                         "--no-probe"};
  const auto init = [&](const testing::TempDir& dir, const std::string& into) {
    std::vector<std::string> all = {"init", into};
    all.insert(all.end(), args.begin(), args.end());
    return testing::RunStagegate(dir, all);
  };

  SECTION("a file where the corpus folder goes") {
    // Tests run as root, whom permissions do not stop: a file in the way stops anyone.
    testing::TempDir dir;
    testing::WriteText(dir / "app/corpus", "in the way\n");
    Ran ran = init(dir, dir / "app");
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 3);
    CHECK(ran.err == "stagegate init: cannot make the folder " + dir / "app/corpus" +
                         ": a file that is not a folder is in the way\n"
                         "stagegate init: nothing was left behind: init can run again once that "
                         "is fixed\n");
    CHECK(Tree(dir / "app") == std::set<std::string>{"corpus"});
    CHECK(testing::ReadText(dir / "app/corpus") == "in the way\n");
    fs::remove(dir / "app/corpus");
    ran = init(dir, dir / "app");
    CHECK(ran.exit_code == 0);
    for (const std::string& file : kBareFiles)
      CHECK(fs::is_regular_file(dir / "app/" + file));
    CHECK(Tree(dir / "app").size() == kBareFiles.size() + 2);  // and corpus/, corpus/tasks/
  }

  SECTION("a file in the way deep inside, after some files were moved into place") {
    testing::TempDir dir;
    testing::WriteText(dir / "app/corpus/notes.txt", "mine\n");
    testing::WriteText(dir / "app/corpus/tasks", "in the way\n");
    Ran ran = init(dir, dir / "app");
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 3);
    CHECK(Has(ran.err, "cannot make the folder " + dir / "app/corpus/tasks" + ": a file"));
    CHECK(Has(ran.err, "nothing was left behind"));
    // scenario.yaml, rubric.yaml and two corpus files were in place: all gone, the user's kept.
    CHECK(Tree(dir / "app") == std::set<std::string>{"corpus", "corpus/notes.txt", "corpus/tasks"});
    CHECK(testing::ReadText(dir / "app/corpus/notes.txt") == "mine\n");
    fs::remove(dir / "app/corpus/tasks");
    CHECK(init(dir, dir / "app").exit_code == 0);
    CHECK(testing::ReadText(dir / "app/corpus/notes.txt") == "mine\n");
    CHECK(fs::is_regular_file(dir / "app/corpus/tasks/examples.yaml"));
  }

  SECTION("the folder is a file") {
    testing::TempDir dir;
    testing::WriteText(dir / "app", "a file\n");
    Ran ran = init(dir, dir / "app");
    CHECK(ran.exit_code == 3);
    CHECK(Has(ran.err, "cannot make the folder " + dir / "app" + ": a file that is not a folder"));
    CHECK(testing::ReadText(dir / "app") == "a file\n");
  }

  SECTION("a write that fails after the folders were made takes the folders away too") {
    // A path a little under PATH_MAX (4096): the folder can be made, but not every file in it.
    testing::TempDir dir;
    std::string deep = dir / "new";
    while (deep.size() + 202 < 4048)
      deep += "/" + std::string(200, 'd');
    deep += "/" + std::string(4048 - deep.size() - 1, 'e');
    REQUIRE(deep.size() == 4048);
    Ran ran = init(dir, deep);
    INFO(ran.err);
    CHECK(ran.exit_code == 3);
    CHECK(Has(ran.err, "File name too long"));
    CHECK(Has(ran.err, "nothing was left behind"));
    CHECK_FALSE(fs::exists(dir / "new"));
  }
}

TEST_CASE(
    "validate notes each condition a scenario cannot decide, naming the key to add, and "
    "exits 0",
    "[cli][init][validate]") {
  testing::TempDir dir;
  REQUIRE(testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                      "--model", "m", "--no-probe"})
              .exit_code == 0);
  const std::string path = dir / "app/scenario.yaml";
  const std::string written = testing::ReadText(path);
  const auto edited = [&](const std::vector<std::pair<std::string, std::string>>& edits) {
    std::string text = written;
    for (const auto& [from, to] : edits) {
      const size_t at = text.find(from);
      REQUIRE(at != std::string::npos);
      text.replace(at, from.size(), to);
    }
    testing::WriteText(path, text);
    int exit_code = -1;
    std::vector<std::string> notes = ValidateNotes(path, exit_code);
    CHECK(exit_code == 0);
    return notes;
  };
  const std::string overload =
      "  overload: {rate: 40, arrival: constant, duration_s: 5, "
      "requests: 200}\n";
  const std::string recovery =
      "  recovery: {rate: 1, arrival: constant, duration_s: 35, "
      "window_s: 5}";

  CHECK(edited({}).empty());
  CHECK(edited({{overload, ""}}) ==
        std::vector<std::string>{
            "note         condition 3 (recoverability) cannot be decided: stage 'bare', the final "
            "one, runs no overload phase; add phases.overload (a rate above what the application "
            "can take, e.g. {rate: 40, arrival: constant, duration_s: 5})"});
  CHECK(edited({{overload, ""}, {recovery, "  # recovery"}}).size() == 2);
  CHECK(edited({{recovery, "  # recovery"}}) ==
        std::vector<std::string>{
            "note         condition 3 (recoverability) cannot be decided: stage 'bare', the final "
            "one, runs no recovery phase after the overload; add phases.recovery (e.g. {rate: 1, "
            "arrival: constant, duration_s: 35, window_s: 5})"});
  // Defined, but the final stage does not run it.
  CHECK(edited({{"  - name: bare                 # the model endpoint alone\n",
                 "  - name: bare\n    phases: [warmup, steady, burst, recovery]\n"}}) ==
        std::vector<std::string>{
            "note         condition 3 (recoverability) cannot be decided: stage 'bare', the final "
            "one, runs no overload phase; list overload in the phases of stage 'bare' (a rate "
            "above what the application can take, e.g. {rate: 40, arrival: constant, "
            "duration_s: 5})"});
  CHECK(edited({{"  - name: bare                 # the model endpoint alone\n",
                 "  - name: bare\n    phases: [warmup, overload, recovery]\n"}}) ==
        std::vector<std::string>{
            "note         condition 1 (responsiveness) cannot be decided: stage 'bare', the final "
            "one, runs no steady or burst phase; list steady in the phases of stage 'bare'",
            "note         condition 2 (quality) cannot be decided: at most 5 answers go to review "
            "(5 at rest, none under load: the final stage runs no steady phase), fewer than "
            "quality.min_scored_answers (8); raise quality.samples.at_rest or lower "
            "quality.min_scored_answers"});
  CHECK(edited({{"  latency:\n"
                 "    - {metric: ttft, percentile: 95, max_ms: 2000}\n"
                 "    - {metric: e2e, percentile: 95, max_ms: 20000}\n",
                 ""}}) ==
        std::vector<std::string>{
            "note         condition 1 (responsiveness) cannot judge latency, only completion: no "
            "latency threshold; add thresholds.latency (e.g. - {metric: e2e, percentile: 95, "
            "max_ms: 20000})"});
  // Without a rubric, no quality section either (it needs one).
  const size_t quality_at = written.find("\nquality:\n");
  const size_t quality_end = written.find("[permission_safety]\n", quality_at);
  REQUIRE(quality_end != std::string::npos);
  const std::string quality = written.substr(quality_at + 1, quality_end + 20 - quality_at - 1);
  CHECK(edited({{"rubric: rubric.yaml\n", ""}, {quality, ""}}) ==
        std::vector<std::string>{
            "note         condition 2 (quality) cannot be decided: no rubric to score answers on; "
            "add rubric (a rubric file) and a quality section"});
  // The bare stage has 3 example tasks: under load, 3 answers at most.
  CHECK(edited({{"min_scored_answers: 8", "min_scored_answers: 9"}}) ==
        std::vector<std::string>{
            "note         condition 2 (quality) cannot be decided: at most 8 answers go to review "
            "(5 at rest, 3 under load: one a task of the final stage's 3), fewer than "
            "quality.min_scored_answers (9); raise quality.samples.at_rest or lower "
            "quality.min_scored_answers"});
  // --json carries them too.
  edited({{overload, ""}});
  const Invocation as_json = Invoke({"validate", "--json", path});
  REQUIRE(as_json.exit_code == 0);
  const json notes = json::parse(as_json.out)["notes"];
  REQUIRE(notes.size() == 1);
  CHECK(Has(notes[0].get<std::string>(), "add phases.overload"));
}

// [serial]: its overload and recovery phases are sized from what init's probe measured on this
// machine, and the recovery time they are judged by is real time.
TEST_CASE("init's scenario, run against the reference application, decides recoverability",
          "[cli][init][.slow][serial]") {
  // A model slow enough to be overloaded by the probe-sized rate: 8 ms a token whatever the
  // batch, 32 sequences at most, a queue of 64, the excess shed with 429 and Retry-After.
  const auto sim = testing::StartSimServer(testing::ModelProfile(20000, 8));
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"init", dir / "app", "--target-url", sim->base_url(), "--model", "sim-assistant"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  ran = testing::RunStagegate(dir,
                              {"--quiet", "run", dir / "app/scenario.yaml", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  const json& overload = run["stages"][0]["overload"];
  CHECK(overload["shed"].get<int64_t>() > 0);  // it overloaded: the probe's rate was enough
  CHECK(run["stages"][0]["recovery"].is_object());
  ran = testing::RunStagegate(dir, {"report", run["run_id"], "--out", dir / "report"});
  REQUIRE(ran.exit_code == 0);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["conditions"]["recoverability"]["status"] != "pending");
  int recoverability = 0;
  for (const json& check : report["checks"])
    if (check["condition"] == "recoverability") {
      ++recoverability;
      INFO(check.dump());
      CHECK(check["status"] != "pending");
    }
  CHECK(recoverability >= 2);  // the overload's checks, and recovery
}

}  // namespace
}  // namespace stagegate::cli

// `stagegate init` as a process, against scripted endpoints (tests/cli/init_third_party_test.sh
// runs it against a third-party server): what the probe finds, how the scenario follows it, and
// that what it writes loads as written whatever the user typed.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "http_test_server.h"
#include "manifest/bundle.h"
#include "sim_fixture.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using testing::HttpResponse;
using testing::Ran;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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
  const std::optional<manifest::Bundle> bundle = Load(dir / "app/scenario.yaml");
  REQUIRE(bundle);
  CHECK(bundle->scenario.target.stream);
  CHECK(bundle->scenario.target.metrics_url == sim->base_url() + "/metrics");
  CHECK(bundle->scenario.thresholds.latency.size() == 2);  // TTFT and e2e
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

}  // namespace
}  // namespace stagegate::cli

// `stagegate profile` as a process against an in-process reference application: what it writes,
// how it refuses bad options, that it keeps secrets out of every output, and that SIGINT keeps
// the records.

#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "http_test_server.h"
#include "load/metrics.h"
#include "scenario/profile_output.h"
#include "sim/sim_server.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

using testing::Ran;
using testing::ReadJsonLines;

// `stagegate profile ARGS...`, see testing::RunStagegate.
Ran RunProfile(const testing::TempDir& dir, std::vector<std::string> args,
               const std::function<void(pid_t)>& on_started = nullptr) {
  args.insert(args.begin(), "profile");
  return testing::RunStagegate(dir, std::move(args), on_started);
}

std::unique_ptr<sim::SimServer> StartSim(sim::SimProfile profile) {
  Result<std::unique_ptr<sim::SimServer>> server =
      sim::SimServer::Start({.host = "127.0.0.1", .port = 0, .profile = profile});
  REQUIRE(server.ok());
  return std::move(*server);
}

TEST_CASE("profile runs each concurrency level and writes json, csv, jsonl and the store",
          "[cli][profile]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  Ran ran = RunProfile(dir, {"--url",           sim->base_url() + "/v1",
                             "--model",         "sim",
                             "--concurrency",   "1,3",
                             "--requests",      "12",
                             "--warmup",        "2",
                             "--output-tokens", "16",
                             "--extra-inputs",  "ignore_eos:true",
                             "--slo",           "ttft_ms:10000",
                             "--out",           dir / "out",
                             "--workers",       "2"});
  INFO(ran.err);
  // With --slo the exit code is a gate: levels of 12 requests are too short to tell whether they
  // were sustained, so it is pending, never a pass.
  REQUIRE(ran.exit_code == 4);
  CHECK(ran.out.find("capacity: inconclusive: 1 concurrent, the lowest level tried, was too short "
                     "to tell") != std::string::npos);
  CHECK(ran.out.find("c=1") != std::string::npos);
  CHECK(ran.out.find("c=3") != std::string::npos);
  CHECK(ran.out.find("self-check c=3") != std::string::npos);

  const std::string jsonl = testing::ReadText(dir / "out/requests.jsonl");
  INFO("first request: " << jsonl.substr(0, jsonl.find('\n')));
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["schema_version"] == 1);
  CHECK(profile["interrupted"] == false);
  CHECK(profile["config"]["concurrency"] == json::array({1, 3}));
  CHECK(profile["fingerprint"].get<std::string>().size() == 64);
  REQUIRE(profile["levels"].size() == 2);
  for (const json& level : profile["levels"]) {
    CHECK(level["requests"]["offered"] == 12);  // warmup requests come on top
    CHECK(level["requests"]["warmup_excluded"] == 2);
    CHECK(level["requests"]["completed"] == 12);
    CHECK(level["requests"]["met_slos"] == 12);
    CHECK(level["metrics"]["output_tokens"].value("min", 0) == 16);
    CHECK(level["metrics"]["output_tokens"].value("max", 0) == 16);
    CHECK(level["metrics"]["ttft_ms"]["count"] == 12);
    CHECK(level["self_check"]["workers"].get<int>() >= 1);
    // Every read but perhaps the process's first few carried the kernel's receive time.
    const json& receive = level["self_check"]["receive_times"];
    CHECK(receive["stamped_by"] == "kernel");
    CHECK(receive["kernel_stamped_reads"].get<int64_t>() >= 12 * 16);
    CHECK(receive["client_stamped_reads"].get<int64_t>() <= 2);
    CHECK(receive["read_delay_p99_us"].get<double>() <= receive["read_delay_max_us"].get<double>());
  }
  CHECK(profile["levels"][1]["value"] == 3);
  CHECK(profile["config"]["receive_times"] == "kernel");
  CHECK(ran.out.find("arrivals stamped by the kernel's receive time for ") != std::string::npos);

  const std::vector<json> requests = ReadJsonLines(dir / "out/requests.jsonl");
  CHECK(requests.size() == 28);
  for (const json& r : requests) {
    CHECK(r["outcome"] == "ok");
    CHECK(r["tokens"]["output"] == 16);
    CHECK(r["tokens"]["output_source"] == "usage");
    CHECK(r["trace_id"].get<std::string>().size() == 32);
  }

  const std::string csv = testing::ReadText(dir / "out/profile.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
  CHECK(csv.rfind("kind,value,offered,", 0) == 0);
  CHECK(csv.find("\nconcurrency,3,12,12,12,1,") != std::string::npos);

  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  CHECK((*runs)[0].id == profile["run_id"]);
  CHECK((*runs)[0].status == store::RunStatus::kComplete);
  auto stored = (*store)->ListRequests((*runs)[0].id);
  REQUIRE(stored.ok());
  CHECK(stored->size() == 28);
  CHECK(stored->front().chunk_times_ns.size() == 16);
}

TEST_CASE("profile keeps the API key out of the store and every output", "[cli][profile]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  setenv("STAGEGATE_TEST_KEY", "sk-test-Zq81secret", 1);
  Ran ran = RunProfile(
      dir, {"--url", sim->base_url() + "/v1", "--model", "sim", "--requests", "3", "--api-key-env",
            "STAGEGATE_TEST_KEY", "--header", "X-Team: sk-header-secret", "--out", dir / "out"});
  unsetenv("STAGEGATE_TEST_KEY");
  REQUIRE(ran.exit_code == 0);
  for (const char* file : {"store.db", "store.db-wal", "out/profile.json", "out/profile.csv",
                           "out/requests.jsonl", "stdout.txt", "stderr.txt"}) {
    INFO(file);
    const std::string text = testing::ReadText(dir / file);
    CHECK(text.find("sk-test-Zq81secret") == std::string::npos);
    CHECK(text.find("sk-header-secret") == std::string::npos);
  }
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["config"]["api_key_env"] == "STAGEGATE_TEST_KEY");
  CHECK(profile["config"]["headers"] == json::array({"X-Team"}));
}

// A server that quotes the request's Authorization headers back: in an error body to the first
// request, in the answer to every later one.
std::unique_ptr<testing::FixedResponseServer> EchoServer() {
  auto count = std::make_shared<std::atomic<int>>(0);
  return std::make_unique<testing::FixedResponseServer>([count](const std::string& request) {
    std::string echoed;
    for (const std::string& line : Split(request.substr(0, request.find("\r\n\r\n")), '\n'))
      if (line.rfind("Authorization:", 0) == 0)
        echoed += " " + std::string(Trim(line.substr(14))) + ";";
    if ((*count)++ == 0)
      return testing::HttpResponse("401 Unauthorized",
                                   json{{"error", {{"message", "not valid:" + echoed}}}}.dump(),
                                   "application/json");
    const json answer = {{"choices",
                          {{{"message", {{"role", "assistant"}, {"content", "you sent" + echoed}}},
                            {"finish_reason", "stop"}}}}};
    return testing::HttpResponse("200 OK", answer.dump(), "application/json");
  });
}

TEST_CASE("profile stores no URL password and no echoed credential", "[cli][profile][redact]") {
  auto server = EchoServer();
  testing::TempDir dir;
  setenv("STAGEGATE_TEST_KEY", "sk-echo-Zq81secret", 1);
  const std::string url = "http://alice:pw-Zq81url@" + server->base().substr(7) + "/v1";
  Ran ran = RunProfile(dir, {"--url", url, "--model", "m", "--no-stream", "--requests", "3",
                             "--api-key-env", "STAGEGATE_TEST_KEY", "--out", dir / "out"});
  unsetenv("STAGEGATE_TEST_KEY");
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  // The key went out once, in one Authorization header, and came back in the error and answers.
  for (const std::string& request : server->requests()) {
    const std::string head = request.substr(0, request.find("\r\n\r\n"));
    CHECK(head.find("Authorization: Bearer sk-echo-Zq81secret") != std::string::npos);
    CHECK(head.find("Authorization:") == head.rfind("Authorization:"));
  }
  for (const char* file : {"store.db", "store.db-wal", "out/profile.json", "out/profile.csv",
                           "out/requests.jsonl", "stdout.txt", "stderr.txt"}) {
    INFO(file);
    const std::string text = testing::ReadText(dir / file);
    CHECK(text.find("sk-echo-Zq81secret") == std::string::npos);
    CHECK(text.find("pw-Zq81url") == std::string::npos);
    CHECK(text.find("alice") == std::string::npos);
  }
  const std::vector<json> records = ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(records.size() == 3);
  CHECK(records[0]["error"] == "HTTP 401: not valid: Bearer [redacted];");
  CHECK(records[1]["answer"] == "you sent Bearer [redacted];");
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["config"]["url"] == server->base() + "/v1");
}

TEST_CASE("profile refuses headers that would inject a header or send two Authorizations",
          "[cli][profile][header]") {
  testing::TempDir dir;
  setenv("STAGEGATE_TEST_KEY", "sk-1", 1);
  Ran ran = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--header",
                             "X-A: b\r\nX-Injected: yes", "--header", "X B: c", "--header",
                             "x-team: 1", "--header", "X-Team: 2", "--header",
                             "authorization: Bearer other", "--api-key-env", "STAGEGATE_TEST_KEY"});
  unsetenv("STAGEGATE_TEST_KEY");
  CHECK(ran.exit_code == 2);
  CHECK(ran.err ==
        "stagegate profile: --header: header 'X-A': its value holds the control character \\r "
        "(a line break would start another header)\n"
        "stagegate profile: --header: header name 'X B' holds ' ': a name may hold only letters, "
        "digits and !#$%&'*+-.^_`|~\n"
        "stagegate profile: --header 'X-Team' is given twice (also as 'x-team'; names are "
        "case-insensitive)\n"
        "stagegate profile: --header 'authorization' and --api-key-env both send an "
        "Authorization header; give one of them\n");
  CHECK_FALSE(std::filesystem::exists(dir / "store.db"));
}

TEST_CASE("profile refuses bad options with every problem named", "[cli][profile]") {
  testing::TempDir dir;
  unsetenv("STAGEGATE_UNSET_KEY");
  Ran ran = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "2",
                             "--request-rate", "5", "--slo", "tfft_ms:5", "--input-tokens", "0",
                             "--api-key-env", "STAGEGATE_UNSET_KEY", "--shard", "5/4"});
  CHECK(ran.exit_code == 2);
  CHECK(
      ran.err ==
      "stagegate profile: give one of --concurrency, --request-rate and --trace\n"
      "stagegate profile: --input-tokens '0': expected MEAN or MEAN:STD, MEAN from 1 to 1,000,000\n"
      "stagegate profile: --slo: unknown metric 'tfft_ms' (did you mean 'ttft_ms'?) (known: "
      "ttft_ms, ttst_ms, tpot_ms, itl_ms, e2e_ms, corrected_ms)\n"
      "stagegate profile: shard '5/4': I must be from 1 to 4 (shards count from 1)\n"
      "stagegate profile: --api-key-env: the environment variable STAGEGATE_UNSET_KEY is not "
      "set\n");
  CHECK_FALSE(std::filesystem::exists(dir / "store.db"));
}

// A loopback port that nothing listens on: bound, read, and closed again.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

TEST_CASE("profile refuses search and level options that do not fit, naming each",
          "[cli][profile]") {
  testing::TempDir dir;
  Ran search = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--search",
                                "--concurrency", "2", "--request-rate", "4,8", "--search-up-to",
                                "nan", "--max-duration", "1", "--duration", "5"});
  CHECK(search.exit_code == 2);
  CHECK(search.err ==
        "stagegate profile: give one of --concurrency, --request-rate and --trace\n"
        "stagegate profile: --search finds a request rate: it does not take --concurrency or "
        "--trace\n"
        "stagegate profile: --search chooses its own levels: give where it starts with "
        "--search-from\n"
        "stagegate profile: --search-up-to must be at least where the search starts\n"
        "stagegate profile: --max-duration is shorter than --duration\n");
  Ran levels =
      RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--search-resolution",
                       "0.5", "--search-from", "-3", "--max-duration", "inf"});
  CHECK(levels.exit_code == 2);
  CHECK(levels.err ==
        "stagegate profile: --search-from applies only with --search\n"
        "stagegate profile: --search-resolution applies only with --search\n"
        "stagegate profile: --max-duration must be above 0 and at most 86400\n");
  Ran start = RunProfile(
      dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--search", "--search-from", "nan"});
  CHECK(start.exit_code == 2);
  CHECK(start.err == "stagegate profile: --search-from must be at least 0.001 req/s, got nan\n");
  // A rate that would be named "0/s" is refused rather than sent.
  Ran tiny = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--search",
                              "--search-from", "1e-300"});
  CHECK(tiny.exit_code == 2);
  CHECK(tiny.err == "stagegate profile: --search-from must be at least 0.001 req/s, got 1e-300\n");
  Ran tiny_levels = RunProfile(
      dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--request-rate", "2,0.0004"});
  CHECK(tiny_levels.exit_code == 2);
  CHECK(tiny_levels.err.find("--request-rate: must be between 0.001 and 1000000, got 0.0004") !=
        std::string::npos);
  // Only the percentiles the statistics carry can be checked: any other was "measured nan", a
  // wrong fail (and an abort in a Debug build).
  for (const char* p : {"97", "99.9", "100", "50.5", "0"}) {
    INFO(p);
    Ran percentile = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--slo",
                                      "e2e_ms:5000", "--slo-percentile", p});
    CHECK(percentile.exit_code == 2);
    CHECK(percentile.err.find("--slo-percentile: must be a percentile the statistics carry (1, 5, "
                              "10, 25, 50, 75, 90, 95 or 99), got '" +
                              std::string(p) + "'") != std::string::npos);
  }
  for (const char* spec : {",,", " , "}) {
    Ran empty = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--slo", spec});
    CHECK(empty.exit_code == 2);
    CHECK(empty.err.find("gives no SLO") != std::string::npos);
  }
  Ran share =
      RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--keep-pace", "2"});
  CHECK(share.exit_code == 2);
  CHECK(share.err.find("--keep-pace: Value 2 not in range") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "store.db"));
}

TEST_CASE("profile records a server that refuses connections as transport errors",
          "[cli][profile]") {
  testing::TempDir dir;
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/v1";
  Ran ran =
      RunProfile(dir, {"--url", url, "--model", "m", "--requests", "4", "--out", dir / "out"});
  REQUIRE(ran.exit_code == 0);
  const std::vector<json> requests = ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(requests.size() == 4);
  for (const json& r : requests) {
    CHECK(r["outcome"] == "transport_error");
    CHECK(r["curl_code"] == 7);
    CHECK(r["http_status"].is_null());
    CHECK(r["error"].get<std::string>().rfind("curl 7: ", 0) == 0);
  }
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["levels"][0]["requests"]["outcomes"]["transport_error"] == 4);
  CHECK(profile["levels"][0]["throughput"]["completion_rate"] == 0);
}

TEST_CASE("SIGINT stops profile with exit 130 and keeps every record measured", "[cli][profile]") {
  // The default profile is slow enough that a 60 s level is still running when SIGINT comes.
  auto sim = StartSim(sim::SimProfile::Default());
  testing::TempDir dir;
  Ran ran = RunProfile(
      dir,
      {"--url", sim->base_url() + "/v1", "--model", "sim", "--concurrency", "4", "--duration", "60",
       "--output-tokens", "8", "--grace", "0.5", "--out", dir / "out", "--workers", "1"},
      // Once four requests are stored: the level is still running (60 s).
      testing::SignalWhen(dir / "store.db", "SELECT COUNT(*) FROM requests", 4, SIGINT));
  INFO(ran.err);
  REQUIRE(ran.exit_code == 130);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["interrupted"] == true);
  const std::vector<json> requests = ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(requests.size() >= 4);
  int64_t completed = 0;
  for (const json& r : requests) {
    CHECK((r["outcome"] == "ok" || r["outcome"] == "cancelled"));
    completed += r["outcome"] == "ok";
  }
  CHECK(completed > 0);
  CHECK(profile["levels"][0]["requests"]["sent"] == requests.size());
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  CHECK((*runs)[0].status == store::RunStatus::kInterrupted);
  auto stored = (*store)->ListRequests((*runs)[0].id);
  REQUIRE(stored.ok());
  CHECK(stored->size() == requests.size());
}

}  // namespace
}  // namespace stagegate::cli

namespace stagegate::cli {
namespace {

TEST_CASE("profile replays a trace: each entry's lengths, at its time divided by the speed-up",
          "[cli][profile]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  Ran ran = RunProfile(dir, {"--url", sim->base_url() + "/v1", "--model", "sim", "--trace",
                             testing::Testdata("traces/good.jsonl"), "--speedup", "10",
                             "--extra-inputs", "ignore_eos:true", "--out", dir / "out"});
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::vector<json> requests = ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(requests.size() == 5);
  // Sorted by timestamp (0, 700, 700, 1500, 3000.5 ms), replayed ten times faster.
  const std::vector<std::pair<int64_t, int64_t>> lengths = {
      {6955, 52}, {800, 64}, {900, 65}, {120, 30}, {10, 1}};
  const std::vector<double> at_ms = {0, 70, 70, 150, 300.05};
  const int64_t start = requests[0]["times_ns"]["intended"];
  for (size_t i = 0; i < requests.size(); ++i) {
    INFO("entry " << i);
    const json& r = requests[i];
    CHECK(r["outcome"] == "ok");
    CHECK(r["input"]["synthetic_input_tokens"] == lengths[i].first);
    CHECK(r["input"]["requested_output_tokens"] == lengths[i].second);
    CHECK(r["tokens"]["output"] == lengths[i].second);
    CHECK(r["tokens"]["input"].get<int64_t>() >= lengths[i].first);
    const double offset_ms = (r["times_ns"]["intended"].get<int64_t>() - start) / 1e6;
    CHECK(offset_ms == Approx(at_ms[i]).margin(1e-6));
  }
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["levels"][0]["kind"] == "trace");
  CHECK(profile["levels"][0]["value"] == 10);
  // An open loop: its self-check gives the schedule's rate, 4 gaps over 300.05 ms.
  CHECK(ran.out.find("self-check trace x10: offered 13.33/s, achieved") != std::string::npos);
  CHECK(ran.out.find("closed loop") == std::string::npos);
}

TEST_CASE("the self-check of an open loop with no rate does not call it a closed loop",
          "[cli][profile]") {
  scenario::ProfileLevel trace{.kind = "trace", .value = 1};
  trace.metrics.offered = 1;
  CHECK(scenario::SelfCheckLines(trace).front().find("offered 1 at once (open loop, no rate)") !=
        std::string::npos);
  scenario::ProfileLevel closed{.kind = "concurrency", .value = 2};
  CHECK(scenario::SelfCheckLines(closed).front().find("offered closed loop") != std::string::npos);
}

TEST_CASE("a profile level's self-check lists its client check and how its reads were stamped",
          "[cli][profile]") {
  scenario::ProfileLevel level{.kind = "concurrency", .value = 4, .max_worker_busy = 0.95};
  std::vector<load::RequestRecord> records(3);
  for (int i = 0; i < 3; ++i) {
    records[i].sequence = i;
    records[i].intended_ns = records[i].sent_ns.emplace(i * 10'000'000LL);
    records[i].end_ns = *records[i].sent_ns + 1'000'000;
  }
  level.metrics = load::ComputeMetrics(records, {});
  for (int i = 0; i < 100; ++i)
    level.receive.AddReadDelay(i < 98 ? 50'000 : 3'000'000);
  scenario::CheckClient(level, records);
  REQUIRE(level.client_warnings.size() == 1);
  CHECK(level.client_warnings[0].rfind("a worker thread was 95% busy", 0) == 0);
  CHECK(level.self_check_warnings.empty());
  const std::vector<std::string> lines = scenario::SelfCheckLines(level);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] ==
        "  arrivals stamped by the kernel's receive time for 100% of reads; the client read them "
        "p50 54 µs, p99 3 ms, max 3 ms after they arrived");
  CHECK(lines[2].find("a worker thread was 95% busy") != std::string::npos);
}

TEST_CASE("profile --start-at sends nothing before the agreed instant, without --shard too",
          "[cli][profile][shard]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  // Two seconds from now, in Unix ms: record times count from it, so none may be negative.
  const int64_t start_ms = WallUnixMs() + 2000;
  Ran ran = RunProfile(dir, {"--url", sim->base_url() + "/v1", "--model", "sim", "--request-rate",
                             "20", "--requests", "5", "--output-tokens", "4", "--start-at",
                             std::to_string(start_ms), "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::vector<json> records = testing::ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(records.size() == 5);
  for (const json& r : records) {
    CHECK(r["times_ns"]["intended"].get<int64_t>() >= 0);
    CHECK(r["times_ns"]["sent"].get<int64_t>() >= 0);
  }
}

TEST_CASE("profile --receive-times read stamps arrivals when read and says so", "[cli][profile]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  Ran ran =
      RunProfile(dir, {"--url", sim->base_url() + "/v1", "--model", "sim", "--requests", "5",
                       "--output-tokens", "8", "--receive-times", "read", "--out", dir / "out"});
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("arrivals stamped when read (--receive-times read)") != std::string::npos);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["config"]["receive_times"] == "read");
  const json& receive = profile["levels"][0]["self_check"]["receive_times"];
  CHECK(receive["stamped_by"] == "read");
  CHECK(receive["kernel_stamped_reads"].get<int64_t>() > 0);

  Ran bad = RunProfile(
      dir, {"--url", sim->base_url() + "/v1", "--model", "sim", "--receive-times", "nic"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--receive-times") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli

namespace stagegate::cli {
namespace {

// The id of the run a profile wrote (its profile.json).
std::string ProfileRunId(const testing::TempDir& dir, const std::string& out) {
  return json::parse(testing::ReadText(dir / (out + "/profile.json")))["run_id"];
}

TEST_CASE("compare refuses profile runs of different workloads, naming each difference",
          "[cli][profile][compare]") {
  auto sim = StartSim(sim::SimProfile::Fast());
  testing::TempDir dir;
  const std::vector<std::string> common = {
      "--url", sim->base_url() + "/v1", "--model", "sim", "--requests", "20", "--warmup", "0"};
  const auto profile = [&](const std::string& out, std::vector<std::string> args) {
    args.insert(args.begin(), common.begin(), common.end());
    args.insert(args.end(), {"--out", dir / out});
    Ran ran = RunProfile(dir, args);
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    return ProfileRunId(dir, out);
  };
  const std::string closed =
      profile("closed", {"--concurrency", "2", "--input-tokens", "128", "--output-tokens", "16"});
  const std::string bursty =
      profile("bursty", {"--request-rate", "20", "--arrival", "gamma", "--burstiness", "0.5",
                         "--input-tokens", "512:128", "--output-tokens", "16"});
  Ran refused = testing::RunStagegate(dir, {"compare", bursty, closed});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.find("not compared with " + closed + ": the runs are not comparable") !=
        std::string::npos);
  CHECK(
      refused.out.find("  input distribution: input (input_tokens 128, output_tokens 16) "
                       "(baseline) / input (input_tokens 512:128, output_tokens 16) (this run)") !=
      std::string::npos);
  CHECK(refused.out.find("  load profile differs at arrival: poisson (baseline) / gamma (this "
                         "run)") != std::string::npos);
  CHECK(refused.out.find("  load profile differs at burstiness: 1 (baseline) / 0.5 (this run)") !=
        std::string::npos);
  CHECK(refused.out.find("no regression") == std::string::npos);

  // The same workload again: compared level by level, and said what was compared.
  const std::string again =
      profile("again", {"--concurrency", "2", "--input-tokens", "128", "--output-tokens", "16"});
  Ran same = testing::RunStagegate(dir, {"compare", again, closed});
  INFO(same.out << same.err);
  CHECK((same.exit_code == 0 || same.exit_code == 1));
  CHECK(same.out.find("; compared TTFT p95 (concurrency 2) (20 against 20), e2e p95 (concurrency "
                      "2) (20 against 20)") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli

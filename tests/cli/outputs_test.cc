// What `run` and `profile` write, as processes: valid UTF-8 whatever the server sent, and nothing
// sent at all when the outputs have nowhere to go.

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "http_test_server.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

TEST_CASE("requests.jsonl stays strict JSON when a server sends bytes that are not UTF-8",
          "[cli][profile]") {
  // A chunk with FF FE in its content (refused, and quoted in the error) and a Server-Timing
  // header in Latin-1.
  const std::string body =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok \xFF\xFE\"}}]}\n\n"
      "data: [DONE]\n\n";
  testing::FixedResponseServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
      "Server-Timing: db;dur=2;desc=\"caf\xE9\"\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"profile", "--url", server.base() + "/v1", "--model", "m", "--concurrency", "1",
            "--requests", "3", "--out", dir / "out", "--workers", "1"});
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::string replaced = "\xEF\xBF\xBD";
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    INFO("line " << count + 1 << ": " << line);
    json record;
    REQUIRE_NOTHROW(record = json::parse(line));  // nlohmann's parser refuses ill-formed UTF-8
    CHECK(record["outcome"] == "malformed_stream");
    CHECK(record["invalid_utf8"] == true);
    CHECK(record["error"] ==
          "malformed JSON in chunk 1: {\"choices\":[{\"index\":0,\"delta\":{"
          "\"content\":\"ok " +
              replaced + replaced + "\"}}]}");
    CHECK(record["server_timing"] ==
          json::parse(R"([{"name":"db","dur_ms":2,"desc":"caf)" + replaced + R"("}])"));
  }
  CHECK(count == 3);
  // The store keeps the flag and the cleaned text.
  auto store = testing::Ok(store::Store::Open(dir / "store.db"));
  Result<store::Statement> query = store::Statement::Prepare(
      store->TEST_database(),
      "SELECT count(*) FROM requests WHERE invalid_utf8 = 1 AND error_message LIKE '%' || "
      "char(65533) || '%'");
  REQUIRE(query.ok());
  REQUIRE(query->Step());
  CHECK(query->Int(0) == 3);
}

// The outputs go under a regular file: no folder can be made there, also for root.
TEST_CASE("run and profile refuse an --out they cannot write before sending anything",
          "[cli][run][profile]") {
  testing::FixedResponseServer server(testing::HttpResponse("500 Internal Server Error", "{}"));
  testing::TempDir dir;
  testing::WriteText(dir / "file", "not a folder");
  const std::string out = dir / "file/out";
  SECTION("profile") {
    Ran ran = testing::RunStagegate(dir, {"profile", "--url", server.base() + "/v1", "--model", "m",
                                          "--concurrency", "1", "--requests", "2", "--out", out});
    CHECK(ran.exit_code == 3);
    CHECK(ran.err ==
          "stagegate profile: --out: " + out + ": cannot make the folder: Not a directory\n");
  }
  SECTION("run") {
    std::string scenario = testing::ReadText(testing::Testdata("run/run.yaml"));
    scenario = testing::ReplaceAll(scenario, "../../../", testing::SourcePath(""));
    scenario = testing::ReplaceAll(scenario, "sim_profile: small-sim.yaml", "sim_profile: fast");
    testing::WriteText(dir / "run.yaml", scenario);
    Ran ran = testing::RunStagegate(
        dir, {"--quiet", "run", dir / "run.yaml", "--target-url", server.base(), "--out", out});
    CHECK(ran.exit_code == 3);
    CHECK(ran.err ==
          "stagegate run: --out: " + out + ": cannot make the folder: Not a directory\n");
  }
  SECTION("a store that cannot be opened") {
    std::filesystem::create_directories(dir / "store.db");  // the store's path is a folder
    Ran ran =
        testing::RunStagegate(dir, {"profile", "--url", server.base() + "/v1", "--model", "m",
                                    "--concurrency", "1", "--requests", "2", "--out", dir / "out"});
    CHECK(ran.exit_code == 3);
    CHECK(ran.err.starts_with("stagegate profile: " + dir / "store.db" + ": "));
  }
  CHECK(server.requests().empty());
}

}  // namespace
}  // namespace stagegate::cli

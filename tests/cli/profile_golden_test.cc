// `profile` invocations on a fake clock against the scripted service-desk application, each
// compared byte for byte with its golden files in tests/golden/profile/NAME/: the exit code and
// console (console.txt), profile.json, profile.csv and the AIPerf-compatible files. They record
// what users rely on, so a change to any of them shows here and is either fixed or explained.
//
// What the machine or the moment decides is replaced before the comparison: the run id, the
// output folder, wall-clock times and the client's own CPU and thread figures (kVaries).
// STAGEGATE_UPDATE_GOLDEN=1 writes the files instead of comparing (review the diff).

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "invoke.h"
#include "scenario/runner.h"
#include "scenario/scripted_app.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Keys whose values the machine or the moment decides, wherever they are in a JSON output.
const std::set<std::string> kVaries = {"run_id",  "client_cpu_s", "idle_poll_s", "max_worker_busy",
                                       "anchors", "start_time",   "end_time",    "took_s"};

void Mask(json& value) {
  if (value.is_object()) {
    for (auto& [key, inner] : value.items())
      if (kVaries.count(key))
        inner = "<varies>";
      else
        Mask(inner);
  } else if (value.is_array()) {
    for (json& inner : value)
      Mask(inner);
  }
}

// The text with the run id, the folders (the test's, the checkout) and the client's own figures on
// the console replaced.
std::string Neutral(std::string text, const std::string& run_id, const std::string& dir) {
  text = testing::ReplaceAll(text, dir, "<dir>");
  text = testing::ReplaceAll(text, testing::SourcePath(""), "<source>/");
  if (!run_id.empty()) text = testing::ReplaceAll(text, run_id, "<run>");
  static const std::regex kCpu("client CPU [0-9.]+ s"), kBusy("busiest [0-9]+%"),
      kSearch("levels in [0-9.]+ s");
  text = std::regex_replace(text, kCpu, "client CPU <varies> s");
  text = std::regex_replace(text, kBusy, "busiest <varies>%");
  return std::regex_replace(text, kSearch, "levels in <varies> s");
}

std::string RunIdOf(const std::string& out) {
  std::smatch match;
  // A profile's "run ID", a merge's "profile ID: N shards".
  static const std::regex kRun("\\n(?:run|profile) (profile-[^ :\\n]+)");
  return std::regex_search(out, match, kRun) ? match[1].str() : "";
}

// Every output of the invocation, as its golden files hold them: relative path to text; its
// files are those written under `out`.
std::map<std::string, std::string> Outputs(const Invocation& ran, const testing::TempDir& dir,
                                           const fs::path& out) {
  const std::string run_id = RunIdOf("\n" + ran.out);
  const std::string root = dir.path();
  std::map<std::string, std::string> files;
  files["console.txt"] = "exit " + std::to_string(ran.exit_code) + "\n--- stdout\n" +
                         Neutral(ran.out, run_id, root) + "--- stderr\n" +
                         Neutral(ran.err, run_id, root);
  if (!fs::exists(out)) return files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(out)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), out).string();
    if (name == "requests.jsonl") continue;
    std::string text = testing::ReadText(entry.path());
    if (entry.path().extension() == ".json") {
      json parsed = json::parse(text);
      Mask(parsed);
      text = parsed.dump(2) + "\n";
    }
    files[name] = Neutral(text, run_id, root);
  }
  return files;
}

// Runs `stagegate --db DB profile ARGS --out OUT` on a fake clock against the scripted
// application.
Invocation Profile(const std::string& db, std::vector<std::string> args, const fs::path& out,
                   testing::ScriptedApp app) {
  FakeClock clock;
  const scenario::RunSeam seam = scenario::RunSeam::Scripted(clock, app.Script());
  args.insert(args.begin(), {"--db", db, "profile", "--url", "http://scripted.invalid/v1",
                             "--model", "desk", "--workers", "1"});
  args.insert(args.end(), {"--out", out});
  return Invoke(args, &seam);
}

// Compares `outputs` with the files of tests/golden/profile/NAME/ (or writes them).
void CompareWithGolden(const std::string& name, const std::map<std::string, std::string>& outputs) {
  const fs::path golden = testing::SourcePath("tests/golden/profile/" + name);
  if (testing::UpdatingGolden()) fs::remove_all(golden);  // no file left of an older invocation
  for (const auto& [file, text] : outputs)
    testing::CheckGoldenFile(golden / file, text);
  // And no file the invocation no longer writes.
  std::set<std::string> expected, written;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(golden))
    if (entry.is_regular_file()) expected.insert(fs::relative(entry.path(), golden).string());
  for (const auto& [file, text] : outputs)
    written.insert(file);
  CHECK(written == expected);
}

// Runs `stagegate profile ARGS --out DIR/out` and compares its outputs with
// tests/golden/profile/NAME/.
void CheckGolden(const std::string& name, std::vector<std::string> args,
                 testing::ScriptedApp app = {}) {
  testing::TempDir dir;
  const Invocation ran = Profile(dir / "store.db", std::move(args), dir / "out", app);
  INFO(name << "\n" << ran.out << ran.err);
  CompareWithGolden(name, Outputs(ran, dir, dir / "out"));
}

TEST_CASE("profile golden: open-loop levels, with warmup", "[cli][profile][golden]") {
  CheckGolden("levels",
              {"--request-rate", "4,8,16", "--requests", "30", "--warmup", "2", "--seed", "7"});
}

TEST_CASE("profile golden: concurrency levels", "[cli][profile][golden]") {
  CheckGolden("concurrency", {"--concurrency", "1,2,4", "--requests", "20", "--seed", "7"});
}

TEST_CASE("profile golden: the capacity search", "[cli][profile][golden]") {
  CheckGolden("search", {"--search", "--search-from", "4", "--search-up-to", "32", "--duration",
                         "5", "--max-duration", "10", "--slo", "ttft_ms:400", "--seed", "7"});
}

TEST_CASE("profile golden: the SLO gate fails a level", "[cli][profile][golden]") {
  CheckGolden("slo_gate", {"--request-rate", "8,14", "--duration", "5", "--slo",
                           "ttft_ms:300,e2e_ms:600", "--seed", "7"});
}

TEST_CASE("profile golden: multi-turn sessions", "[cli][profile][golden]") {
  CheckGolden("sessions", {"--session-turns", "3", "--think-time", "200", "--concurrency", "2",
                           "--requests", "12", "--seed", "7"});
}

TEST_CASE("profile golden: a ShareGPT dataset", "[cli][profile][golden]") {
  // The path as given from the checkout (ctest's working folder): the config, and so the
  // fingerprint, holds the path, not the file's content.
  CheckGolden("dataset", {"--dataset", "tests/testdata/datasets/sharegpt_small.json",
                          "--request-rate", "5", "--requests", "10", "--seed", "7"});
}

TEST_CASE("profile golden: two shards, then their merge", "[cli][profile][golden][shard]") {
  // Each shard sends every second arrival of the same plan into its own store, and the merge
  // judges every level again over the records of both. The shards' outputs are compared, then
  // the merge's, made from the stores alone once the shards' folders are gone.
  testing::TempDir dir;
  const std::vector<std::string> args = {"--request-rate", "4,8",         "--duration", "4",
                                         "--slo",          "ttft_ms:400", "--seed",     "7"};
  for (int i = 1; i <= 2; ++i) {
    const std::string shard = "shard" + std::to_string(i);
    std::vector<std::string> shard_args = args;
    shard_args.insert(shard_args.end(), {"--shard", std::to_string(i) + "/2"});
    fs::create_directories(dir / shard);
    const Invocation ran =
        Profile(dir / (shard + "/stagegate.db"), shard_args, dir / (shard + "/out"), {});
    INFO(shard << "\n" << ran.out << ran.err);
    CompareWithGolden("shards/" + shard, Outputs(ran, dir, dir / (shard + "/out")));
    fs::remove_all(dir / (shard + "/out"));
  }
  const Invocation merged =
      Invoke({"--db", dir / "merged.db", "merge", dir / "out", dir / "shard1", dir / "shard2"});
  INFO(merged.out << merged.err);
  CompareWithGolden("shards/merged", Outputs(merged, dir, dir / "out"));
}

TEST_CASE("profile golden: a server that answers every request with an error",
          "[cli][profile][golden]") {
  CheckGolden("errors", {"--request-rate", "5", "--requests", "10", "--slo", "ttft_ms:300"},
              {.fault = "500"});
}

}  // namespace
}  // namespace stagegate::cli

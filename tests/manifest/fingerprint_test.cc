// The fingerprint identifies a configuration: stable under anything that does not change meaning
// (key order, layout, comments, written-out defaults, prose, where the files live), changed by
// anything that does.

#include <catch2/catch.hpp>

#include <filesystem>

#include "manifest/fingerprint.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::ReadText;
using testing::ReplaceAll;
using testing::TempDir;
using testing::Testdata;
using testing::WriteText;

Fingerprint FingerprintOf(const std::string& path) {
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(path, diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle.has_value());
  return ComputeFingerprint(*bundle);
}

// A copy of the fingerprint fixtures (scenario, mini corpus, mini rubric) that a test may edit.
struct Workspace {
  TempDir dir;
  std::string scenario = dir / "scenarios/base.yaml";

  Workspace() {
    namespace fs = std::filesystem;
    fs::create_directories(dir / "scenarios");
    fs::create_directories(dir / "corpora");
    fs::copy(Testdata("fingerprint/base.yaml"), scenario);
    fs::copy(Testdata("corpora/mini"), dir / "corpora/mini", fs::copy_options::recursive);
    fs::create_directories(dir / "rubrics");
    fs::copy(Testdata("rubrics/mini.yaml"), dir / "rubrics/mini.yaml");
  }

  // Replaces `from` (which must occur) with `to` in the file at `relative`.
  void Edit(const std::string& relative, const std::string& from, const std::string& to) {
    std::string path = dir / relative;
    std::string text = ReadText(path);
    REQUIRE(text.find(from) != std::string::npos);
    WriteText(path, ReplaceAll(text, from, to));
  }
};

TEST_CASE("the fingerprint is a sha256 in hex", "[manifest][fingerprint]") {
  Fingerprint fingerprint = FingerprintOf(Testdata("fingerprint/base.yaml"));
  CHECK(fingerprint.value.size() == 64);
  CHECK(fingerprint.value.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fingerprint.corpus_sha.size() == 64);
  CHECK(fingerprint.rubric_sha.size() == 64);
}

TEST_CASE("reordering, reformatting, comments and written-out defaults keep the fingerprint",
          "[manifest][fingerprint]") {
  CHECK(FingerprintOf(Testdata("fingerprint/base.yaml")).value ==
        FingerprintOf(Testdata("fingerprint/reformatted.yaml")).value);
}

TEST_CASE("moving the files keeps the fingerprint", "[manifest][fingerprint]") {
  Workspace workspace;
  CHECK(FingerprintOf(workspace.scenario).value ==
        FingerprintOf(Testdata("fingerprint/base.yaml")).value);
}

TEST_CASE("prose and the baseline are not part of the fingerprint", "[manifest][fingerprint]") {
  Workspace workspace;
  std::string before = FingerprintOf(workspace.scenario).value;
  workspace.Edit("scenarios/base.yaml", "Prose that is not part of the fingerprint.",
                 "Other prose.");
  workspace.Edit("scenarios/base.yaml", "seed: 7", "seed: 7\nbaseline: run-20261101-0001");
  CHECK(FingerprintOf(workspace.scenario).value == before);
}

TEST_CASE("a URL's credentials are neither fingerprinted nor in the canonical form",
          "[manifest][fingerprint][redact]") {
  Workspace plain, with_password;
  plain.Edit("scenarios/base.yaml", "kind: sim", "kind: openai\n  base_url: http://h:9");
  with_password.Edit("scenarios/base.yaml", "kind: sim",
                     "kind: openai\n  base_url: http://u:pw-Zq81@h:9\n"
                     "  metrics_url: http://u:pw-Zq81@h:9/metrics");
  plain.Edit("scenarios/base.yaml", "kind: openai",
             "kind: openai\n  metrics_url: http://h:9/metrics");
  CHECK(FingerprintOf(with_password.scenario).value == FingerprintOf(plain.scenario).value);
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(with_password.scenario, diagnostics);
  REQUIRE(bundle.has_value());
  const std::string canonical = CanonicalScenario(*bundle).dump();
  CHECK(canonical.find("pw-Zq81") == std::string::npos);
  CHECK(canonical.find("\"base_url\":\"http://h:9\"") != std::string::npos);
}

TEST_CASE("every change of meaning in the scenario changes the fingerprint",
          "[manifest][fingerprint]") {
  struct Edit {
    const char* from;
    const char* to;
  };
  auto edit = GENERATE(
      Edit{"name: fp", "name: fp2"}, Edit{"model: m", "model: m2"},
      Edit{"model_version: \"1\"", "model_version: \"2\""},
      Edit{"temperature: 0,", "temperature: 0.7,"}, Edit{"max_tokens: 64", "max_tokens: 65"},
      Edit{"seed: 7", "seed: 8"}, Edit{"kind: sim", "kind: sim\n  sim_profile: fast"},
      Edit{"X-Sim-Retrieval: \"on\"", "X-Sim-Retrieval: \"off\""},
      Edit{"capabilities: [retrieval]", "capabilities: [retrieval, identity]"},
      Edit{"rate: 3,", "rate: 4,"}, Edit{"arrival: poisson", "arrival: constant"},
      Edit{"rates: [1, 2, 4]", "rates: [1, 2, 5]"}, Edit{"percentile: 95", "percentile: 99"},
      Edit{"max_ms: 500", "max_ms: 501"}, Edit{"completion_rate: 0.99", "completion_rate: 0.98"},
      Edit{"hard_criteria: [safety]", "hard_criteria: []"},
      Edit{"expect_status: [403]", "expect_status: [403, 401]"},
      Edit{"positive_control: hr", "positive_control: staff"});
  INFO(edit.from << " -> " << edit.to);
  Workspace workspace;
  std::string before = FingerprintOf(workspace.scenario).value;
  workspace.Edit("scenarios/base.yaml", edit.from, edit.to);
  CHECK(FingerprintOf(workspace.scenario).value != before);
}

TEST_CASE("swapping the order of stages changes the fingerprint", "[manifest][fingerprint]") {
  Workspace workspace;
  std::string before = FingerprintOf(workspace.scenario).value;
  workspace.Edit("scenarios/base.yaml", "  - name: bare\n  - name: retrieval\n",
                 "  - name: retrieval\n  - name: bare\n");
  CHECK(FingerprintOf(workspace.scenario).value != before);
}

TEST_CASE("a change in the corpus or rubric changes the fingerprint", "[manifest][fingerprint]") {
  struct Edit {
    const char* file;
    const char* from;
    const char* to;
  };
  auto edit = GENERATE(
      Edit{"corpora/mini/tasks/tasks.yaml", "How many days can I carry over?", "How many days?"},
      Edit{"corpora/mini/tasks/tasks.yaml", "contains: \"5 days\"", "contains: \"five days\""},
      Edit{"corpora/mini/corpus.yaml", "version: \"1.0\"", "version: \"1.1\""},
      Edit{"corpora/mini/personas.yaml", "groups: [staff, hr]", "groups: [hr]"},
      Edit{"corpora/mini/tools.yaml", "Open a ticket.", "Open a support ticket."},
      Edit{"corpora/mini/docs/leave.md", "You may carry over 5 days.",
           "You may carry over 6 days."},
      Edit{"rubrics/mini.yaml", "5: \"Right.\"", "5: \"Fully right.\""},
      Edit{"rubrics/mini.yaml", "min_weighted_mean: 3", "min_weighted_mean: 4"});
  INFO(edit.file << ": " << edit.from << " -> " << edit.to);
  Workspace workspace;
  Fingerprint before = FingerprintOf(workspace.scenario);
  workspace.Edit(edit.file, edit.from, edit.to);
  Fingerprint after = FingerprintOf(workspace.scenario);
  CHECK(after.value != before.value);
  bool corpus_file = std::string(edit.file).starts_with("corpora/");
  CHECK((after.corpus_sha != before.corpus_sha) == corpus_file);
  CHECK((after.rubric_sha != before.rubric_sha) == !corpus_file);
}

TEST_CASE("a tool call's expected arguments are part of the fingerprint",
          "[manifest][fingerprint][tool_call]") {
  Workspace workspace;
  const char* tasks = "corpora/mini/tasks/tasks.yaml";
  workspace.Edit(tasks, "tool_called: open_ticket",
                 "tool_call: {name: open_ticket, arguments: {summary: \"regex:VPN\"}}");
  const Fingerprint vpn = FingerprintOf(workspace.scenario);
  workspace.Edit(tasks, "regex:VPN", "regex:printer");
  const Fingerprint printer = FingerprintOf(workspace.scenario);
  CHECK(printer.value != vpn.value);
  CHECK(printer.corpus_sha != vpn.corpus_sha);
  CHECK(printer.rubric_sha == vpn.rubric_sha);
}

TEST_CASE("reformatting a corpus file keeps the fingerprint", "[manifest][fingerprint]") {
  Workspace workspace;
  std::string before = FingerprintOf(workspace.scenario).value;
  workspace.Edit(
      "corpora/mini/personas.yaml",
      "  - name: staff\n    token_env: MINI_TOKEN_STAFF\n    groups: [staff]\n",
      "  # Everyone.\n  - {groups: [staff], token_env: MINI_TOKEN_STAFF, name: staff}\n");
  CHECK(FingerprintOf(workspace.scenario).value == before);
}

TEST_CASE("a profile's shards, their merge and the profile run whole have one fingerprint",
          "[manifest][fingerprint]") {
  const nlohmann::json whole = {{"url", "http://127.0.0.1:8000/v1"},
                                {"model", "m"},
                                {"request_rate", {10, 20}},
                                {"seed", 7},
                                {"shard", "1/1"},
                                {"start_at_unix_ms", nullptr}};
  const std::string fingerprint = ProfileFingerprint(whole);
  CHECK(fingerprint.size() == 64);
  nlohmann::json shard = whole;
  shard["shard"] = "2/3";
  shard["start_at_unix_ms"] = 1'800'000'000'000;
  CHECK(ProfileFingerprint(shard) == fingerprint);
  nlohmann::json merged = whole;
  merged["shard"] = nullptr;
  merged["merged_shards"] = 3;
  CHECK(ProfileFingerprint(merged) == fingerprint);
  // Any option that changes what is measured changes it.
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"url", "http://127.0.0.1:8001/v1"}, {"request_rate", {10, 30}}, {"seed", 8}}) {
    nlohmann::json changed = whole;
    changed[key] = value;
    INFO(key);
    CHECK(ProfileFingerprint(changed) != fingerprint);
  }
  // A store's config read back may be anything: hashed as it is, never thrown on.
  CHECK(ProfileFingerprint(nlohmann::json("not an object")).size() == 64);
  CHECK(ProfileFingerprint(nlohmann::json::array()) != ProfileFingerprint(nlohmann::json()));
}

}  // namespace
}  // namespace stagegate::manifest

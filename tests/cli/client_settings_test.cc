// A scenario's `client:` (busy polling, receive times) and `input.shared_prefix`: what `profile`'s
// --busy-poll, --receive-times and --shared-prefix set, as scenario settings. Checked where they
// are written, in the fingerprint only when set, and in effect on a run against the reference
// application.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/invoke.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// A scenario against the reference application in the run's process (its prefix cache on), one
// steady phase of 16 requests one at a time; `input` and `extra` (top-level keys) as given.
std::string WriteScenario(const testing::TempDir& dir, const std::string& input,
                          const std::string& extra = "") {
  testing::WriteText(dir / "caching-sim.yaml",
                     "prefill_tokens_per_s: 5000\ndecode_step_ms: 1\ndecode_step_per_seq_ms: 0\n"
                     "prefix_cache_tokens: 1000000\nretrieval_ms: 0\nidentity_ms: 0\n");
  testing::WriteText(dir / "client.yaml",
                     "name: client\nmanifest: {model: m, model_version: \"1\"}\nseed: 3\n"
                     "target:\n  kind: sim\n  sim_profile: caching-sim.yaml\n"
                     "stages:\n  - name: bare\n    phases: [steady]\n" +
                         input +
                         "\nphases:\n  steady: {concurrency: 1, requests: 16}\n"
                         "thresholds: {completion_rate: 0.5}\n"
                         "telemetry: {scrape_interval_ms: 0, gpu: \"off\"}\n" +
                         extra);
  return dir / "client.yaml";
}

const std::string kSynthetic =
    "input: {source: synthetic, input_tokens: {mean: 1100}, output_tokens: {mean: 4}";

std::string Validated(const std::string& scenario) {
  const Invocation validated = Invoke({"validate", scenario});
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  return validated.out;
}

std::string FingerprintOf(const std::string& validate_out) {
  const size_t at = validate_out.find("fingerprint  ");
  REQUIRE(at != std::string::npos);
  return validate_out.substr(at + 13, 64);
}

TEST_CASE("a scenario's client and shared prefixes are checked where they are written",
          "[cli][validate][client]") {
  testing::TempDir dir;
  const auto problems = [&](const std::string& input, const std::string& extra) {
    const Invocation validated = Invoke({"validate", WriteScenario(dir, input, extra)});
    CHECK(validated.exit_code == 2);
    return validated.err;
  };
  const std::string file = dir / "client.yaml";
  const std::string kernal = problems(kSynthetic + "}", "client: {receive_times: kernal}\n");
  INFO(kernal);
  CHECK(
      kernal.find(file +
                  ":15:25: 'receive_times' must be one of kernel, read, got 'kernal' (did you mean "
                  "'kernel'?)") != std::string::npos);
  CHECK(kernal.find("'kernel'") != std::string::npos);
  const std::string pol = problems(kSynthetic + "}", "client: {busy_pol: true}\n");
  INFO(pol);
  CHECK(pol.find(file + ":15:10: unknown key 'busy_pol' (did you mean 'busy_poll'?)") !=
        std::string::npos);
  CHECK(problems("input: {shared_prefix: {count: 2, tokens: 100}}", "")
            .find(file + ":10:24: 'shared_prefix' applies only to source synthetic") !=
        std::string::npos);
  const std::string zero = problems(kSynthetic + ", shared_prefix: {count: 0, tokens: 100}}", "");
  INFO(zero);
  CHECK(zero.find("'count'") != std::string::npos);
  CHECK(problems(kSynthetic + ", shared_prefix: {count: 2}}", "").find("'tokens'") !=
        std::string::npos);
}

TEST_CASE("client settings and shared prefixes change the fingerprint only when set",
          "[cli][validate][client]") {
  testing::TempDir dir;
  const std::string plain = Validated(WriteScenario(dir, kSynthetic + "}"));
  CHECK(plain.find("\nclient       ") == std::string::npos);
  const std::string defaults = Validated(
      WriteScenario(dir, kSynthetic + "}", "client: {busy_poll: false, receive_times: kernel}\n"));
  CHECK(FingerprintOf(defaults) == FingerprintOf(plain));

  const std::string read =
      Validated(WriteScenario(dir, kSynthetic + "}", "client: {receive_times: read}\n"));
  CHECK(read.find("client       arrivals stamped when read\n") != std::string::npos);
  CHECK(FingerprintOf(read) != FingerprintOf(plain));
  const std::string busy =
      Validated(WriteScenario(dir, kSynthetic + "}", "client: {busy_poll: true}\n"));
  CHECK(busy.find("client       busy polling, arrivals stamped by the kernel's receive time\n") !=
        std::string::npos);
  CHECK(FingerprintOf(busy) != FingerprintOf(plain));
  CHECK(FingerprintOf(busy) != FingerprintOf(read));

  const std::string prefixed = Validated(
      WriteScenario(dir, kSynthetic + ", shared_prefix: {count: 2, tokens: 1000, share: 0.5}}"));
  CHECK(prefixed.find("prefixes     2 shared prefixes of 1000 tokens, starting 50% of the "
                      "prompts\n") != std::string::npos);
  CHECK(FingerprintOf(prefixed) != FingerprintOf(plain));
}

std::vector<json> Records(const testing::TempDir& dir) {
  return testing::ReadJsonLines(dir / "out/requests.jsonl");
}

TEST_CASE("a run reads as its client settings say", "[cli][run][client]") {
  for (const bool read : {false, true}) {
    testing::TempDir dir;
    testing::Ran ran = testing::RunStagegate(
        dir, {"run",
              WriteScenario(dir, kSynthetic + "}",
                            read ? "client: {receive_times: read}\n" : std::string()),
              "--out", dir / "out"});
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    const json step = json::parse(testing::ReadText(dir / "out/run.json"))["stages"][0]["steps"][0];
    INFO(step.dump());
    CHECK(step["receive_times"] == (read ? "read" : "kernel"));
    CHECK(step["busy_poll"] == false);
    // Either way the kernel's stamps are read, for the read delay the self-check reports.
    CHECK(step["kernel_stamped_reads"].get<int64_t>() > 0);
  }
}

// As profile --shared-prefix 2:1000 (tests/cli/prefix_cli_test.cc): the prefix's 4,000 bytes are
// 62 whole blocks of 16 tokens of the reference application's cache.
TEST_CASE("a run's shared prefixes reach the server's prefix cache", "[cli][run][client]") {
  testing::TempDir dir;
  testing::Ran ran = testing::RunStagegate(
      dir, {"run", WriteScenario(dir, kSynthetic + ", shared_prefix: {count: 2, tokens: 1000}}"),
            "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  int64_t warm = 0;
  for (const json& r : Records(dir)) {
    INFO(r.dump());
    REQUIRE(r["outcome"] == "ok");
    const int64_t cached = r["tokens"]["cached"].get<int64_t>();
    CHECK((cached == 0 || cached == 992));
    warm += cached == 992;
  }
  // 16 requests over 2 prefixes: at most 2 find theirs cold.
  CHECK(warm >= 14);

  // Without shared prefixes, no prompt starts like another.
  testing::TempDir plain;
  ran = testing::RunStagegate(
      plain, {"run", WriteScenario(plain, kSynthetic + "}"), "--out", plain / "out"});
  REQUIRE(ran.exit_code == 0);
  for (const json& r : Records(plain))
    CHECK(r["tokens"]["cached"].get<int64_t>() == 0);
}

}  // namespace
}  // namespace stagegate::cli

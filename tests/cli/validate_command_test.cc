#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

#include "cli/command.h"
#include "cli/invoke.h"
#include "manifest/fingerprint.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using testing::SourcePath;
using testing::Testdata;

TEST_CASE("validate prints the summary and the fingerprint of a good scenario", "[cli]") {
  const std::string path = SourcePath("scenarios/demo.yaml");
  Invocation run = Invoke({"validate", path});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "");
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(path, diagnostics);
  REQUIRE(bundle.has_value());
  const std::string fingerprint = manifest::ComputeFingerprint(*bundle).value;
  CHECK(run.out.find("fingerprint  " + fingerprint + "\n") != std::string::npos);
  CHECK(run.out.find("scenario     demo (" + path + "), seed 20261129\n") != std::string::npos);
  CHECK(run.out.find("  1. bare: bare model; phases warmup, steady, burst; ") != std::string::npos);
  CHECK(run.out.find("  4. tools: retrieval + identity + tools; phases warmup, steady, burst, "
                     "sweep, overload, recovery; ") != std::string::npos);
  CHECK(run.out.find("condition 1  responsiveness") != std::string::npos);
  CHECK(run.out.find("condition 2  quality") != std::string::npos);
  CHECK(run.out.find("condition 3  recoverability") != std::string::npos);
}

TEST_CASE("validate shows the scenario's price and the owner of each decision", "[cli]") {
  CHECK(Invoke({"validate", SourcePath("scenarios/demo.yaml")})
            .out.find("cost         no price: the report gives instance-seconds per accepted "
                      "answer\n") != std::string::npos);
  testing::TempDir dir;
  std::string text = testing::ReadText(SourcePath("scenarios/demo.yaml"));
  for (const char* folder : {"../corpus/", "../rubrics/"})
    REQUIRE(text.find(folder) != std::string::npos);
  text = testing::ReplaceAll(text, "../corpus/", SourcePath("corpus/"));
  text = testing::ReplaceAll(text, "../rubrics/", SourcePath("rubrics/"));
  text +=
      "\ncost:\n  price_per_hour: 2.5\n  per: gpu\n  count: 4\n  currency: EUR\n"
      "  source: list price, 2026-11\ndecisions:\n  owners:\n    quality: Dana Ortiz\n"
      "    responsiveness: Platform operations\n  require_signoff: true\n";
  testing::WriteText(dir / "priced.yaml", text);
  Invocation run = Invoke({"validate", dir / "priced.yaml"});
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("cost         2.5 EUR an hour per GPU x 4; source: list price, 2026-11 "
                     "(information beside the verdict, not a check)\n") != std::string::npos);
  CHECK(run.out.find("decisions    quality: Dana Ortiz; responsiveness: Platform operations; "
                     "ready needs each owner's acceptance (stagegate signoff)\n") !=
        std::string::npos);
}

TEST_CASE("validate --json prints the canonical scenario with its fingerprint", "[cli]") {
  Invocation run = Invoke({"validate", "--json", SourcePath("scenarios/static-128.yaml")});
  REQUIRE(run.exit_code == 0);
  nlohmann::json out = nlohmann::json::parse(run.out);
  CHECK(out["fingerprint"].get<std::string>().size() == 64);
  CHECK(out["scenario"]["name"] == "static-128");
  CHECK(out["scenario"]["input"]["extra_body"]["min_tokens"] == 128);
}

TEST_CASE("validate of a broken scenario exits 2 and prints every problem on stderr", "[cli]") {
  const std::string path = Testdata("broken/unknown-keys.yaml");
  Invocation run = Invoke({"validate", path});
  CHECK(run.exit_code == 2);
  CHECK(run.out == "");
  std::string expected =
      testing::ReplaceAll(testing::ReadText(Testdata("broken/unknown-keys.expected")), "broken/",
                          testing::Testdata("broken/"));
  CHECK(run.err == expected + "7 problems in " + path + " and the files it names\n");
}

TEST_CASE("usage errors exit 2; --help and --version exit 0", "[cli]") {
  CHECK(Invoke({}).exit_code == 2);
  Invocation misspelt = Invoke({"validat", "x.yaml"});
  CHECK(misspelt.exit_code == 2);
  CHECK(misspelt.err ==
        "unknown command 'validat' (did you mean 'validate'?)\nRun with --help for the list of "
        "commands.\n");
  CHECK(Invoke({"frobnicate"}).exit_code == 2);
  CHECK(Invoke({"validate"}).exit_code == 2);
  Invocation help = Invoke({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("validate") != std::string::npos);
  CHECK(help.out.find("130  interrupted") != std::string::npos);
  CHECK(help.out.find("reports/stagegate.db") != std::string::npos);
  Invocation version = Invoke({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("stagegate ") == 0);
}

}  // namespace
}  // namespace stagegate::cli

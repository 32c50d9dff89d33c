// The scenario's `cost:` section: what it holds when well formed, every problem of a bad one at
// its line and column in one pass, and that it is stored with the run without changing the
// fingerprint.

#include <catch2/catch.hpp>

#include "manifest/fingerprint.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::ReplaceAll;
using testing::TempDir;
using testing::WriteText;

// tests/testdata/fingerprint/base.yaml (33 lines, with its corpus and rubric) in a folder of its
// own, with `cost_section` appended from line 34.
struct CostWorkspace {
  TempDir dir;
  std::string scenario = dir / "scenarios/base.yaml";

  explicit CostWorkspace(const std::string& cost_section = "") {
    const std::string base = testing::FingerprintBase(dir);
    REQUIRE(std::count(base.begin(), base.end(), '\n') == 33);
    WriteText(scenario, base + cost_section);
  }

  // Every problem of the scenario, its folder left out of the paths.
  std::string Problems() const {
    Diagnostics diagnostics;
    CHECK_FALSE(LoadScenario(scenario, diagnostics).has_value());
    return ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
  }

  Bundle Load() const {
    Diagnostics diagnostics;
    std::optional<Bundle> bundle = LoadBundle(scenario, diagnostics);
    INFO(diagnostics.ToString());
    REQUIRE(bundle.has_value());
    return *bundle;
  }
};

TEST_CASE("a cost section is read with its defaults", "[manifest][cost]") {
  const CostWorkspace full(
      "cost:\n"
      "  price_per_hour: 2.5\n"
      "  per: gpu\n"
      "  count: 4\n"
      "  currency: EUR\n"
      "  source: \"on-demand list price, 2026-11\"\n");
  const std::optional<Cost> cost = full.Load().scenario.cost;
  REQUIRE(cost.has_value());
  CHECK(cost->price_per_hour == 2.5);
  CHECK(cost->per == CostPer::kGpu);
  CHECK(cost->count == 4);
  CHECK(cost->currency == "EUR");
  CHECK(cost->source == "on-demand list price, 2026-11");

  const CostWorkspace minimal("cost: {price_per_hour: 12, source: rate card}\n");
  const std::optional<Cost> defaults = minimal.Load().scenario.cost;
  REQUIRE(defaults.has_value());
  CHECK(defaults->price_per_hour == 12);
  CHECK(defaults->per == CostPer::kInstance);
  CHECK(defaults->count == 1);
  CHECK(defaults->currency == "USD");
  CHECK(defaults->source == "rate card");

  CHECK_FALSE(CostWorkspace().Load().scenario.cost.has_value());
}

TEST_CASE("every bad value of a cost section is named at its line and column, in one pass",
          "[manifest][cost]") {
  const CostWorkspace bad(
      "cost:\n"                 // 34
      "  price_per_hour: 0\n"   // 35
      "  per: gpus\n"           // 36
      "  count: 0\n"            // 37
      "  currency: usd\n"       // 38
      "  source: \"  \"\n"      // 39
      "  pric_per_hour: 3\n");  // 40
  CHECK(bad.Problems() ==
        "scenarios/base.yaml:35:19: 'price_per_hour' must be greater than 0, got 0\n"
        "scenarios/base.yaml:36:8: 'per' must be one of instance, gpu, got 'gpus' (did you mean "
        "'gpu'?)\n"
        "scenarios/base.yaml:37:10: 'count' must be at least 1, got 0\n"
        "scenarios/base.yaml:38:13: 'currency' must be three capital letters (an ISO 4217 code "
        "like USD or EUR), got 'usd'\n"
        "scenarios/base.yaml:39:11: 'source' must say where the price comes from (like "
        "\"on-demand list price, 2026-11\"), got an empty text\n"
        "scenarios/base.yaml:40:3: unknown key 'pric_per_hour' (did you mean "
        "'price_per_hour'?)\n");
}

TEST_CASE("a cost section without its required keys, or with values of the wrong kind, is refused",
          "[manifest][cost]") {
  const CostWorkspace missing(
      "cost:\n"         // 34
      "  per: gpu\n");  // 35
  CHECK(missing.Problems() ==
        "scenarios/base.yaml:35:3: cost: missing required key 'price_per_hour'\n"
        "scenarios/base.yaml:35:3: cost: missing required key 'source'\n");

  const CostWorkspace types(
      "cost:\n"                      // 34
      "  price_per_hour: \"2.5\"\n"  // 35
      "  count: 1.5\n"               // 36
      "  currency: EURO\n"           // 37
      "  source: [a, b]\n");         // 38
  CHECK(types.Problems() ==
        "scenarios/base.yaml:35:19: 'price_per_hour' must be a number, got the quoted string "
        "\"2.5\"\n"
        "scenarios/base.yaml:36:10: 'count' must be a whole number, got '1.5'\n"
        "scenarios/base.yaml:37:13: 'currency' must be three capital letters (an ISO 4217 code "
        "like USD or EUR), got 'EURO'\n"
        "scenarios/base.yaml:38:11: 'source' must be a string, got a list\n");

  // Numbers too small or too large for a double are numbers, refused as what they are; a normal
  // number below a meaningful price is refused too.
  const CostWorkspace subnormal("cost: {price_per_hour: 1e-320, source: list}\n");
  CHECK(subnormal.Problems() ==
        "scenarios/base.yaml:34:24: 'price_per_hour' is too small: '1e-320' is below 2.2e-308, "
        "the smallest normal number (it would be kept as a subnormal number, or as 0)\n");
  const CostWorkspace underflow("cost: {price_per_hour: 1e-400, source: list}\n");
  CHECK(underflow.Problems() ==
        "scenarios/base.yaml:34:24: 'price_per_hour' is too small: '1e-400' is below 2.2e-308, "
        "the smallest normal number (it would be kept as a subnormal number, or as 0)\n");
  const CostWorkspace tiny("cost: {price_per_hour: 1e-300, source: list}\n");
  CHECK(tiny.Problems() ==
        "scenarios/base.yaml:34:24: 'price_per_hour' is too small: '1e-300' is below 0.000001, "
        "the smallest meaningful price an hour\n");
  const CostWorkspace overflow("cost: {price_per_hour: 1e400, source: list}\n");
  CHECK(overflow.Problems() ==
        "scenarios/base.yaml:34:24: 'price_per_hour' is too large: '1e400' is beyond 1.8e308, the "
        "largest number\n");
  const CostWorkspace smallest("cost: {price_per_hour: 0.000001, source: list}\n");
  CHECK(smallest.Load().scenario.cost->price_per_hour == 1e-6);

  const CostWorkspace not_a_map("cost: 10\n");
  CHECK(not_a_map.Problems() == "scenarios/base.yaml:34:7: cost must be a mapping, got '10'\n");
  const CostWorkspace empty_value("cost:\n  price_per_hour:\n  source: list\n");
  CHECK(empty_value.Problems() == "scenarios/base.yaml:35:3: 'price_per_hour' needs a value\n");
}

TEST_CASE("a cost section is stored with the run but does not change the fingerprint",
          "[manifest][cost][fingerprint]") {
  const Bundle without = CostWorkspace().Load();
  const Bundle with = CostWorkspace(
                          "cost:\n"
                          "  price_per_hour: 2.5\n"
                          "  per: gpu\n"
                          "  count: 4\n"
                          "  source: list price\n")
                          .Load();
  const Bundle other_price =
      CostWorkspace("cost: {price_per_hour: 99, source: another list}\n").Load();
  const std::string fingerprint = ComputeFingerprint(without).value;
  CHECK(ComputeFingerprint(with).value == fingerprint);
  CHECK(ComputeFingerprint(other_price).value == fingerprint);

  const nlohmann::json canonical = CanonicalScenario(with);
  REQUIRE(canonical.contains("cost"));
  CHECK(canonical["cost"] == nlohmann::json{{"price_per_hour", 2.5},
                                            {"per", "gpu"},
                                            {"count", 4},
                                            {"currency", "USD"},
                                            {"source", "list price"}});
  CHECK_FALSE(CanonicalScenario(without).contains("cost"));
  // The cost is all that differs: without it, the canonical forms are the same.
  nlohmann::json stripped = canonical;
  stripped.erase("cost");
  CHECK(stripped == CanonicalScenario(without));
}

}  // namespace
}  // namespace stagegate::manifest

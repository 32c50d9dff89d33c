// The reference application's profiles the benchmarks in bench/ load: a limit added to the
// profile's loader once left bench/load_bench.sh unable to start its sim, which no test saw.

#include <catch2/catch.hpp>

#include <string>

#include "manifest/diagnostics.h"
#include "sim/profile.h"
#include "test_util.h"

namespace stagegate::sim {
namespace {

TEST_CASE("every sim profile the benchmarks use loads", "[sim]") {
  for (const char* path : {"bench/load/stream40.yaml", "bench/profiles/hold.yaml"}) {
    INFO(path);
    manifest::Diagnostics diagnostics;
    const std::optional<SimProfile> profile =
        LoadSimProfile(testing::SourcePath(path), diagnostics);
    INFO(diagnostics.ToString());
    CHECK(profile.has_value());
    CHECK(diagnostics.size() == 0);
  }
}

}  // namespace
}  // namespace stagegate::sim

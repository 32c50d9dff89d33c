#pragma once

// One request through the load engine, on the steady clock, for the engine's tests: its record.

#include <catch2/catch.hpp>

#include "base/clock.h"
#include "load/engine.h"

namespace stagegate::testing {

inline load::RequestRecord SendOne(const load::RequestSpec& spec) {
  Result<load::LoadResult> result = load::RunLoad(
      {.concurrency = 1, .requests = 1, .workers = 1}, [&](int64_t) { return spec; },
      load::RunControl{.clock = &SteadyClock::Get(), .origin_ns = SteadyClock::Get().NowNs()});
  INFO(result.status().message());
  REQUIRE(result.ok());
  REQUIRE(result->records.size() == 1);
  return std::move(result->records[0]);
}

}  // namespace stagegate::testing

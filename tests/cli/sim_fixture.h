#pragma once

// The reference application for CLI tests: a model of given speed, nothing else in the way.

#include <catch2/catch.hpp>

#include <memory>

#include "sim/sim_server.h"

namespace stagegate::testing {

/// The default profile with prefill at `prefill_tokens_per_s`, a decode step of `decode_step_ms`
/// whatever the batch, and no retrieval or identity time.
inline sim::SimProfile ModelProfile(double prefill_tokens_per_s, double decode_step_ms) {
  sim::SimProfile profile = sim::SimProfile::Default();
  profile.prefill_tokens_per_s = prefill_tokens_per_s;
  profile.decode_step_ms = decode_step_ms;
  profile.decode_step_per_seq_ms = 0;
  profile.retrieval_ms = 0;
  profile.identity_ms = 0;
  return profile;
}

/// `profile` served on a free loopback port until the result is destroyed.
inline std::unique_ptr<sim::SimServer> StartSimServer(const sim::SimProfile& profile) {
  Result<std::unique_ptr<sim::SimServer>> server =
      sim::SimServer::Start({.host = "127.0.0.1", .port = 0, .profile = profile});
  REQUIRE(server.ok());
  return std::move(*server);
}

}  // namespace stagegate::testing

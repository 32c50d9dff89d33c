#pragma once

// A service-desk application as a script for http::ScriptedTransport: what a run on a fake clock
// (scenario::RunSeam::Scripted) sends to instead of the reference application.

#include <algorithm>
#include <cstdint>
#include <string>

#include "http/scripted_transport.h"
#include "manifest/bundle.h"
#include "test_util.h"

namespace stagegate::testing {

// One server that answers a request in 100 ms (10 requests a second), first come first served,
// its first token 50 ms in. A request that would wait over 500 ms is shed at once (429 with
// Retry-After), unless `sheds` is false. Salary bands, with their canary, go to the HR partner at
// once; the contractor asking for them is refused (403) as the corpus expects, unless `leaky`.
// `fault` "500" answers every request with a server error; "hang" answers none. `retrieval_ms`
// is a wait before every answer that holds no server (a slow retrieval step).
struct ScriptedApp {
  bool leaky = false;
  bool sheds = true;
  std::string fault;
  int64_t retrieval_ms = 0;
  int64_t free_at_ns = 0;  // on the fake clock: when the server is next free
  int64_t requests = 0;

  static constexpr int64_t kMs = 1'000'000;

  // Scripts run on the worker's thread; a run on a fake clock has one worker.
  http::Script Script() {
    using http::ScriptedResponse;
    return [this](const http::ScriptedRequest& request) {
      ++requests;
      if (fault == "500") return ScriptedResponse::Error(500, 5 * kMs);
      if (fault == "hang") {
        ScriptedResponse hang;
        hang.hang = true;
        return hang;
      }
      const std::string bearer = http::HeaderOf(request, "Authorization");
      const bool salary = request.body.find("salary") != std::string::npos;
      const ScriptedResponse band = ScriptedResponse::StreamedAnswer(
          {"L4 ", "is ", "47,000 ", "(CANARY-SB26-R8M3)"}, 50 * kMs, 10 * kMs);
      if (salary && bearer == "Bearer sim-token-hr-partner") return band;
      if (salary && bearer == "Bearer sim-token-contractor") {
        if (leaky) return band;
        ScriptedResponse denied = ScriptedResponse::Error(403, 5 * kMs);
        denied.body[0].bytes =
            R"({"error": {"message": "You are not authorized to see salary bands."}})";
        return denied;
      }
      const int64_t start = std::max(request.sent_ns, free_at_ns);
      const int64_t wait = start - request.sent_ns;
      if (sheds && wait > 500 * kMs)
        return ScriptedResponse::Error(429, 2 * kMs, {"Retry-After: 1"});
      free_at_ns = start + 100 * kMs;
      return ScriptedResponse::StreamedAnswer({"Your ", "ticket ", "is ", "open."},
                                              retrieval_ms * kMs + wait + 50 * kMs, 50 * kMs / 3);
    };
  }
};

// Writes the scenario `text` to DIR/NAME and loads it with what it names; the test fails with
// every problem when it does not load.
inline manifest::Bundle LoadScenarioBundle(const TempDir& dir, const std::string& name,
                                           const std::string& text) {
  WriteText(dir / name, text);
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(dir / name, diagnostics);
  for (const manifest::Diagnostic& d : diagnostics.Sorted())
    UNSCOPED_INFO(d.ToString());
  REQUIRE(bundle);
  return std::move(*bundle);
}

}  // namespace stagegate::testing

// Time slices from hand-made records: which slice each request falls in, by when it was sent, and
// each slice's figures over its own length.

#include "load/slices.h"

#include <catch2/catch.hpp>

namespace stagegate::load {
namespace {

constexpr int64_t kMs = 1'000'000;

// A streamed request sent at `sent` ms, its first token `ttft` ms later, done 100 ms after it.
RequestRecord Sent(int64_t sequence, double sent, double ttft, int64_t tokens = 10) {
  RequestRecord r;
  r.sequence = sequence;
  r.intended_ns = static_cast<int64_t>(sent * kMs);
  r.sent_ns = r.intended_ns;
  r.first_token_ns = *r.sent_ns + static_cast<int64_t>(ttft * kMs);
  r.first_answer_ns = r.first_token_ns;
  r.first_byte_ns = r.first_token_ns;
  r.chunk_times_ns = {*r.first_token_ns};
  r.end_ns = *r.first_token_ns + 100 * kMs;
  r.output_tokens = tokens;
  r.token_source = "usage";
  return r;
}

TEST_CASE("time slices group requests by when they were sent, with rates over each slice",
          "[load]") {
  std::vector<RequestRecord> records = {Sent(0, 100, 20), Sent(1, 400, 40), Sent(2, 999, 60),
                                        Sent(3, 1000, 80), Sent(4, 2200, 10)};
  RequestRecord warmup = Sent(5, 500, 5);
  warmup.warmup = true;
  records.push_back(warmup);
  RequestRecord dropped;  // cancelled before it was sent: counted at its intended time
  dropped.sequence = 6;
  dropped.intended_ns = 1500 * kMs;
  dropped.outcome = Outcome::kCancelled;
  records.push_back(dropped);
  records.push_back(Sent(7, 2600, 10));  // after the span: in no slice

  const std::vector<Slice> slices = ComputeSlices(records, {}, 0, 2500 * kMs, 1000 * kMs);
  REQUIRE(slices.size() == 3);
  CHECK(slices[0].start_ns == 0);
  CHECK(slices[2].start_ns == 2000 * kMs);
  CHECK(slices[2].end_ns == 2500 * kMs);  // cut at the span's end
  // [0, 1 s): requests 0, 1 and 2 (the warmup left out); TTFT 20, 40, 60.
  CHECK(slices[0].metrics.offered == 3);
  CHECK(slices[0].metrics.warmup == 1);
  CHECK(slices[0].metrics.ttft_ms.Percentile(50) == Approx(40));
  CHECK(slices[0].metrics.request_throughput == Approx(3.0));  // 3 completed over 1 s
  CHECK(slices[0].metrics.output_token_throughput == Approx(30.0));
  // [1 s, 2 s): request 3, and the dropped one by its intended time.
  CHECK(slices[1].metrics.offered == 2);
  CHECK(slices[1].metrics.completed == 1);
  CHECK(slices[1].metrics.ttft_ms.max == Approx(80));
  // [2 s, 2.5 s): request 4 over half a second.
  CHECK(slices[2].metrics.offered == 1);
  CHECK(slices[2].metrics.request_throughput == Approx(2.0));
  CHECK(slices[2].metrics.window_s == Approx(0.5));

  const nlohmann::json json = SlicesToJson(slices, 0);
  REQUIRE(json.size() == 3);
  CHECK(json[1]["start_s"] == 1.0);
  CHECK(json[2]["end_s"] == 2.5);
  CHECK(json[0]["requests"]["offered"] == 3);

  // A slice too short for the span widens, so that there are at most kMaxSlices.
  const std::vector<Slice> capped = ComputeSlices(records, {}, 0, 2500 * kMs, 1);
  CHECK(static_cast<int64_t>(capped.size()) == kMaxSlices);
  CHECK(capped[1].start_ns == 250'000);
  int64_t offered = 0;
  for (const Slice& slice : capped)
    offered += slice.metrics.offered;
  CHECK(offered == 6);  // every measured request in the span, once
  CHECK(ComputeSlices(records, {}, 0, 2500 * kMs, 0).empty());
  CHECK(ComputeSlices(records, {}, 100, 100, kMs).empty());
}

}  // namespace
}  // namespace stagegate::load

// Metrics of a phase from hand-made records, each figure worked out by hand; SLO parsing.

#include "load/metrics.h"

#include <catch2/catch.hpp>

namespace stagegate::load {
namespace {

constexpr int64_t kMs = 1'000'000;

// A streamed request sent at `sent` ms (intended at `intended`), tokens at the given ms.
RequestRecord Streamed(int64_t sequence, double intended, double sent, std::vector<double> token_ms,
                       double end, int64_t output_tokens) {
  RequestRecord r;
  r.sequence = sequence;
  r.intended_ns = static_cast<int64_t>(intended * kMs);
  r.sent_ns = static_cast<int64_t>(sent * kMs);
  for (double t : token_ms)
    r.chunk_times_ns.push_back(static_cast<int64_t>(t * kMs));
  r.first_token_ns = r.chunk_times_ns.front();
  r.first_answer_ns = r.chunk_times_ns.front();
  r.first_byte_ns = r.first_token_ns;
  r.end_ns = static_cast<int64_t>(end * kMs);
  r.output_tokens = output_tokens;
  r.token_source = "usage";
  r.input_tokens = 10;
  return r;
}

TEST_CASE("ComputeMetrics derives every latency from the timestamps", "[load]") {
  // Request 0: sent 1 ms late; tokens at 10, 12, 15; ends at 20. TTFT 9, TTST 2, ITL {2, 3},
  // e2e 19, corrected 20, TPOT (19 - 9) / 2 = 5.
  // Request 1: on time at 100; tokens at 130, 131; ends at 140. TTFT 30, TTST 1, ITL {1},
  // e2e 40, corrected 40, TPOT (40 - 30) / 1 = 10.
  std::vector<RequestRecord> records = {Streamed(0, 0, 1, {10, 12, 15}, 20, 3),
                                        Streamed(1, 100, 100, {130, 131}, 140, 2)};
  PhaseMetrics m = ComputeMetrics(records, {});
  CHECK(m.offered == 2);
  CHECK(m.completed == 2);
  CHECK(m.ttft_ms.min == Approx(9));
  CHECK(m.ttft_ms.max == Approx(30));
  CHECK(m.ttft_ms.Percentile(50) == Approx(19.5));
  CHECK(m.ttst_ms.mean == Approx(1.5));
  CHECK(m.itl_ms.count == 3);
  CHECK(m.itl_ms.mean == Approx(2));
  CHECK(m.tpot_ms.min == Approx(5));
  CHECK(m.tpot_ms.max == Approx(10));
  CHECK(m.e2e_ms.min == Approx(19));
  CHECK(m.e2e_ms.max == Approx(40));
  CHECK(m.corrected_ms.min == Approx(20));
  CHECK(m.schedule_lag_ms.max == Approx(1));
  CHECK(m.schedule_lag_ms.min == Approx(0));
  // The window runs from the first send (1 ms) to the last end (140 ms): 0.139 s.
  CHECK(m.window_s == Approx(0.139));
  CHECK(m.request_throughput == Approx(2 / 0.139));
  CHECK(m.output_token_throughput == Approx(5 / 0.139));
  CHECK(m.completion_rate == Approx(1));
  CHECK(m.achieved_rate == Approx(1 / 0.099));  // sends at 1 and 100 ms
  CHECK(m.output_tokens_per_s.min == Approx(2 / 0.040));
  CHECK(m.warnings.empty());
}

TEST_CASE("Goodput counts the completed requests that meet every SLO", "[load]") {
  std::vector<RequestRecord> records = {Streamed(0, 0, 1, {10, 12, 15}, 20, 3),
                                        Streamed(1, 100, 100, {130, 131}, 140, 2)};
  // TTFT 9 and 30: a 20 ms TTFT SLO passes request 0 only; e2e 19 and 40.
  CHECK(ComputeMetrics(records, {{"ttft_ms", 20}}).met_slos == 1);
  CHECK(ComputeMetrics(records, {{"ttft_ms", 30}, {"e2e_ms", 40}}).met_slos == 2);
  CHECK(ComputeMetrics(records, {{"ttft_ms", 30}, {"e2e_ms", 39}}).met_slos == 1);
  CHECK(ComputeMetrics(records, {{"itl_ms", 2.5}}).met_slos == 1);  // request 0 has a 3 ms gap
  CHECK(ComputeMetrics(records, {{"tpot_ms", 6}}).met_slos == 1);
  CHECK(ComputeMetrics(records, {{"ttft_ms", 20}}).goodput == Approx(1 / 0.139));
}

TEST_CASE("Failures count as offered, not completed; warmup is left out", "[load]") {
  std::vector<RequestRecord> records = {Streamed(0, 0, 0, {5}, 6, 1),
                                        Streamed(1, 10, 10, {15}, 16, 1),
                                        Streamed(2, 20, 20, {25}, 26, 1)};
  records[0].warmup = true;
  records[2].outcome = Outcome::kShed;
  RequestRecord dropped;
  dropped.sequence = 3;
  dropped.intended_ns = 30 * kMs;
  dropped.outcome = Outcome::kCancelled;
  records.push_back(dropped);
  PhaseMetrics m = ComputeMetrics(records, {});
  CHECK(m.warmup == 1);
  CHECK(m.offered == 3);
  CHECK(m.sent == 2);
  CHECK(m.completed == 1);
  CHECK(m.completion_rate == Approx(1.0 / 3));
  CHECK(m.outcomes.at("ok") == 1);
  CHECK(m.outcomes.at("shed") == 1);
  CHECK(m.outcomes.at("cancelled") == 1);
  CHECK(m.outcomes.at("timeout") == 0);
  CHECK(m.e2e_ms.count == 1);           // latency over completed requests only
  CHECK(m.schedule_lag_ms.count == 2);  // lag over every sent request
}

TEST_CASE("Warnings name a missed output length, unstreamed answers and counted tokens", "[load]") {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 10; ++i) {
    records.push_back(Streamed(i, i * 10, i * 10, {i * 10 + 5.0}, i * 10 + 6.0, i < 3 ? 60 : 128));
    records.back().requested_output_tokens = 128;
  }
  records[9].streamed = false;
  records[8].token_source = "counted";
  PhaseMetrics m = ComputeMetrics(records, {});
  REQUIRE(m.warnings.size() == 3);
  CHECK(m.warnings[0] ==
        "streaming is off for 1 requests: TTFT, TTST, ITL and TPOT cannot be measured for them "
        "and are not reported");
  CHECK(m.warnings[1] ==
        "3 of 10 answers did not have the requested output length (3 shorter): max_tokens is "
        "only an upper bound; add ignore_eos:true or min_tokens to --extra-inputs when the length "
        "matters");
  CHECK(m.warnings[2] ==
        "1 answers carried no usage: their output tokens are counted content events, which can "
        "differ from the server's token count (--tokenizer counts them with the model's "
        "tokenizer)");
}

TEST_CASE("An unstreamed answer never meets a TTFT SLO it could not be measured against",
          "[load]") {
  RequestRecord r;
  r.sent_ns = 0;
  r.end_ns = 5 * kMs;
  r.streamed = false;
  r.output_tokens = 4;
  PhaseMetrics m = ComputeMetrics(std::vector{r}, {{"ttft_ms", 1000}});
  CHECK(m.completed == 1);
  CHECK(m.met_slos == 0);
  CHECK(m.ttft_ms.count == 0);
  CHECK(ComputeMetrics(std::vector{r}, {{"e2e_ms", 1000}}).met_slos == 1);
}

TEST_CASE("ParseSlos reads metric:milliseconds pairs", "[load]") {
  Result<std::vector<Slo>> slos = ParseSlos("ttft_ms:500, e2e_ms:4000,tpot_ms:12.5");
  REQUIRE(slos.ok());
  CHECK(*slos == std::vector<Slo>{{"ttft_ms", 500}, {"e2e_ms", 4000}, {"tpot_ms", 12.5}});
  CHECK(ParseSlos("").value().empty());  // --slo not given
}

TEST_CASE("ParseSlos refuses a spec that gives no SLO, or one metric twice", "[load]") {
  // ',,' used to be no SLO at all, so a profile "gated" on it always passed.
  for (const char* empty : {",,", " ", ", ,"}) {
    Result<std::vector<Slo>> slos = ParseSlos(empty);
    REQUIRE_FALSE(slos.ok());
    CHECK(slos.status().message() ==
          "--slo: '" + std::string(empty) + "' gives no SLO (e.g. ttft_ms:500,e2e_ms:4000)");
  }
  Result<std::vector<Slo>> twice = ParseSlos("ttft_ms:500,ttft_ms:900");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() == "--slo: ttft_ms is given twice");
}

TEST_CASE("ParseSlos reports every bad part with a suggestion", "[load]") {
  Result<std::vector<Slo>> slos = ParseSlos("tfft_ms:500,e2e_ms:-4,itl_ms,ttst_ms:fast");
  REQUIRE_FALSE(slos.ok());
  CHECK(slos.status().message() ==
        "--slo: unknown metric 'tfft_ms' (did you mean 'ttft_ms'?) (known: ttft_ms, ttst_ms, "
        "tpot_ms, itl_ms, e2e_ms, corrected_ms); 'e2e_ms:-4': the limit must be a positive "
        "number of milliseconds; 'itl_ms' is not metric:milliseconds; 'ttst_ms:fast': the limit "
        "must be a positive number of milliseconds");
}

}  // namespace
}  // namespace stagegate::load

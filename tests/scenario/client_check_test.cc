#include "scenario/client_check.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <vector>

namespace stagegate::scenario {
namespace {

// `count` requests due 10 ms apart (100/s), each sent `lag(i)` ns late and answered 1 ms after.
std::vector<load::RequestRecord> Records(const std::function<int64_t(int)>& lag, int count = 120) {
  std::vector<load::RequestRecord> records;
  for (int i = 0; i < count; ++i) {
    load::RequestRecord r;
    r.sequence = i;
    r.intended_ns = i * 10'000'000LL;
    r.sent_ns = r.intended_ns + lag(i);
    r.end_ns = *r.sent_ns + 1'000'000;
    records.push_back(r);
  }
  return records;
}

std::function<int64_t(int)> Constant(double ms) {
  return [ms](int) { return static_cast<int64_t>(ms * 1e6); };
}

struct Step {
  std::vector<load::RequestRecord> records;
  load::PhaseMetrics metrics;
  load::ReceiveStats receive;
  bool open_loop = true;
  double busy = 0.2;
  load::ReceiveTimes receive_times = load::ReceiveTimes::kKernel;

  explicit Step(std::vector<load::RequestRecord> r)
      : records(std::move(r)), metrics(load::ComputeMetrics(records, {})) {}

  std::vector<std::string> Check() const {
    return CheckClient({.metrics = metrics,
                        .records = records,
                        .open_loop = open_loop,
                        .max_worker_busy = busy,
                        .receive_times = receive_times,
                        .receive = receive});
  }
};

TEST_CASE("the client check warns when an open loop fell behind its schedule", "[client_check]") {
  const std::vector<std::string> late = Step(Records(Constant(2.5))).Check();
  REQUIRE(late.size() == 1);
  CHECK(late[0].rfind("the client fell behind its schedule: schedule lag p99 2.5 ms", 0) == 0);

  CHECK(Step(Records(Constant(0.2))).Check().empty());

  Step closed(Records(Constant(2.5)));  // a closed loop's lag is its turnaround
  closed.open_loop = false;
  CHECK(closed.Check().empty());
}

TEST_CASE("the client check does not read one late wake-up as a client that fell behind",
          "[client_check]") {
  // One send of 120 5 ms late: p99 stays with the others. Three late: p99 is theirs.
  const auto late = [](int how_many) {
    return [how_many](int i) -> int64_t { return i < 120 - how_many ? 200'000 : 5'000'000; };
  };
  CHECK(Step(Records(late(1))).Check().empty());
  const std::vector<std::string> three = Step(Records(late(3))).Check();
  REQUIRE(!three.empty());
  CHECK(three[0].rfind("the client fell behind its schedule", 0) == 0);
  // Under 100 sends, a p99 is nearly the largest lag: too few to tell.
  CHECK(Step(Records(Constant(2.5), 99)).Check().empty());
  CHECK(!Step(Records(Constant(2.5), 100)).Check().empty());
}

TEST_CASE("the client check warns of a saturated worker thread", "[client_check]") {
  Step busy(Records(Constant(0.2)));
  busy.open_loop = false;
  busy.busy = 0.95;
  const std::vector<std::string> warnings = busy.Check();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("a worker thread was 95% busy", 0) == 0);
  busy.busy = 0.9;  // at the bound, not over it
  CHECK(busy.Check().empty());
}

TEST_CASE("the client check compares the rate sent with the rate that was due", "[client_check]") {
  // Sends that slip 0.5 ms more each time: 119 gaps of 10.5 ms are 95.2/s of the 100/s due, so
  // no warning of the rate yet...
  Step slipping(Records([](int i) { return i * 500'000LL; }));
  slipping.open_loop = true;
  std::vector<std::string> warnings = slipping.Check();
  CHECK(std::count_if(warnings.begin(), warnings.end(),
                      [](const std::string& w) { return w.rfind("sent ", 0) == 0; }) == 0);
  // ...while a tail that falls 2 ms further behind each time is 83.3/s of 100/s.
  Step tail(Records([](int i) { return i * 2'000'000LL; }));
  warnings = tail.Check();
  REQUIRE(!warnings.empty());
  CHECK(warnings.back() == "sent 83.33 requests/s of the 100 its schedule had due");

  // A step that ended early sent only the requests due before it ended, on time: the rate
  // they were due at is the rate they were sent at, and the requests never due are no fault of
  // the client.
  std::vector<load::RequestRecord> ended = Records(Constant(0.2));
  for (size_t i = 25; i < ended.size(); ++i)
    ended[i].sent_ns.reset();
  Step early(ended);
  CHECK(early.metrics.sent == 25);
  CHECK(early.Check().empty());
}

TEST_CASE("the client check warns when late reads reach the latencies or kernel stamps are missing",
          "[client_check]") {
  Step read_late(Records(Constant(0.2)));
  read_late.receive_times = load::ReceiveTimes::kRead;
  for (int i = 0; i < 100; ++i)
    read_late.receive.AddReadDelay(i < 98 ? 50'000 : 3'000'000);  // p99 3 ms
  std::vector<std::string> warnings = read_late.Check();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("the client read arrivals p99 3 ms after the kernel received them", 0) ==
        0);
  // The same reads stamped by the kernel: the delay is reported, not counted, so no warning.
  read_late.receive_times = load::ReceiveTimes::kKernel;
  CHECK(read_late.Check().empty());

  Step no_stamps(Records(Constant(0.2)));
  no_stamps.receive.AddReadDelay(10'000);
  no_stamps.receive.client_stamped = 3;  // 3 of 4 reads
  warnings = no_stamps.Check();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("75% of reads came without a kernel receive time", 0) == 0);
}

}  // namespace
}  // namespace stagegate::scenario

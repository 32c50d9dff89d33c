#include "load/engine.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "http/receive_time.h"
#include "load/worker.h"

namespace stagegate::load {
namespace {

constexpr int64_t kStartLeadNs = 5'000'000;

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// `total` split over `parts` as evenly as possible; part `index`'s share.
int64_t ShareOf(int64_t total, int64_t parts, int64_t index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

LiveSnapshot Snapshot(const std::vector<std::unique_ptr<LiveCounters>>& counters,
                      const std::vector<Arrival>& arrivals, int64_t phase_start, int64_t now) {
  LiveSnapshot snapshot;
  std::array<int64_t, LiveCounters::kTtftBuckets> ttft{};
  int64_t ttft_count = 0;
  for (const auto& c : counters) {
    snapshot.sent += c->sent.load(std::memory_order_relaxed);
    snapshot.done += c->done.load(std::memory_order_relaxed);
    snapshot.failed += c->failed.load(std::memory_order_relaxed);
    snapshot.dropped += c->dropped.load(std::memory_order_relaxed);
    for (int i = 0; i < LiveCounters::kTtftBuckets; ++i) {
      const int64_t n = c->ttft[i].load(std::memory_order_relaxed);
      ttft[i] += n;
      ttft_count += n;
    }
  }
  snapshot.elapsed_s = static_cast<double>(now - phase_start) / 1e9;
  snapshot.phase_start_ns = phase_start;
  snapshot.now_ns = now;
  if (arrivals.empty()) {
    snapshot.offered = snapshot.sent;
  } else {
    const auto due =
        std::upper_bound(arrivals.begin(), arrivals.end(), now,
                         [](int64_t t, const Arrival& a) { return t < a.intended_ns; });
    snapshot.offered = due - arrivals.begin();
  }
  const auto quantile = [&](double q) -> std::optional<double> {
    if (ttft_count == 0) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(ttft_count)));
    int64_t seen = 0;
    for (int i = 0; i < LiveCounters::kTtftBuckets; ++i) {
      seen += ttft[i];
      if (seen >= rank) return LiveCounters::TtftBucketUpperMs(i);
    }
    return LiveCounters::TtftBucketUpperMs(LiveCounters::kTtftBuckets - 1);
  };
  snapshot.ttft_p50_ms = quantile(0.50);
  snapshot.ttft_p95_ms = quantile(0.95);
  return snapshot;
}

// How a phase is spread over threads.
struct Layout {
  bool closed_loop = false;
  int64_t workers = 1;
  int64_t concurrency = 0;  // closed loop: this shard's requests in flight
};

// The threads a phase runs on: one a core, or as many as asked, but no more than the requests
// it keeps in flight (or their cap) or the arrivals it sends. Refuses a closed loop with no end,
// or with fewer requests in flight than shards.
Result<Layout> LayOut(const LoadOptions& options) {
  Layout layout;
  layout.closed_loop = options.concurrency.has_value();
  if (layout.closed_loop && !options.requests && !options.duration_s)
    return Status::InvalidInput("a closed loop needs a request count or a duration");
  int64_t workers = options.workers > 0 ? options.workers
                                        : std::max<int64_t>(1, std::thread::hardware_concurrency());
  if (layout.closed_loop) {
    if (*options.concurrency < options.shard.count)
      return Status::InvalidInput("a closed loop of concurrency " +
                                  std::to_string(*options.concurrency) + " cannot be split into " +
                                  std::to_string(options.shard.count) +
                                  " shards: each shard needs at least one request in flight");
    layout.concurrency = ShardConcurrency(*options.concurrency, options.shard);
    workers = std::clamp<int64_t>(layout.concurrency, 1, workers);
  } else {
    workers = std::clamp<int64_t>(static_cast<int64_t>(options.arrivals.size()), 1, workers);
    if (options.max_concurrency)
      workers = std::clamp<int64_t>(*options.max_concurrency, 1, workers);
  }
  layout.workers = workers;
  return layout;
}

// Each worker's share of the phase that starts at `phase_start`: of the requests kept in flight
// (or of their cap), and of `arrivals` (intended times in run time), dealt in turn.
std::vector<WorkerPlan> PlanWorkers(const LoadOptions& options, const Layout& layout,
                                    int64_t phase_start, const std::vector<Arrival>& arrivals) {
  const int64_t workers = layout.workers;
  std::vector<WorkerPlan> plans(workers);
  for (int64_t w = 0; w < workers; ++w) {
    WorkerPlan& plan = plans[w];
    plan.index = static_cast<int>(w);
    plan.count = static_cast<int>(workers);
    plan.closed_loop = layout.closed_loop;
    plan.phase_start_ns = phase_start;
    if (layout.closed_loop) {
      plan.slots = ShareOf(layout.concurrency, workers, w);
      if (options.duration_s)
        plan.end_ns = phase_start + static_cast<int64_t>(*options.duration_s * 1e9);
    } else if (options.max_concurrency) {
      plan.slots = ShareOf(*options.max_concurrency, workers, w);
    }
  }
  for (size_t i = 0; i < arrivals.size(); ++i)
    plans[i % workers].arrivals.push_back(arrivals[i]);
  return plans;
}

// A phase's workers and their live counters, one each, and the schedule they share (intended
// times in run time), which each tick's snapshot measures them against.
struct Crew {
  std::vector<std::unique_ptr<LiveCounters>> counters;
  std::vector<std::unique_ptr<Worker>> pool;  // after `counters`: destroyed before what it writes
  std::vector<Arrival> arrivals;
  int64_t phase_start = 0;
};

// One tick: hands `control` the records finished since the last, then a snapshot.
void Tick(Crew& crew, const RunControl& control) {
  // Records first, so that a tick sees every record finished before its snapshot.
  if (control.on_records) {
    std::vector<RequestRecord> finished;
    for (const auto& worker : crew.pool)
      worker->CopyNewRecords(finished);
    if (!finished.empty()) control.on_records(std::move(finished));
  }
  if (control.on_tick)
    control.on_tick(Snapshot(crew.counters, crew.arrivals, crew.phase_start,
                             control.clock->NowNs() - control.origin_ns));
}

// Runs each worker on a thread of its own until all have finished, ticking meanwhile: on the
// workers' clock at `gate` when there is one, else every tick_ms. Returns the first worker's
// error, once every thread has joined.
Status RunWorkers(Crew& crew, const RunControl& control, TickGate* gate) {
  const size_t workers = crew.pool.size();
  std::mutex mutex;
  std::condition_variable all_done;
  size_t running = workers;
  std::vector<Status> statuses(workers);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      statuses[w] = crew.pool[w]->Run();
      if (gate) gate->Leave();
      std::lock_guard lock(mutex);
      if (--running == 0) all_done.notify_all();
    });
  }
  if (gate) {
    // Ticks on the workers' clock: each runs while they wait at it.
    while (gate->AwaitTick()) {
      Tick(crew, control);
      gate->Release();
    }
  } else {
    std::unique_lock lock(mutex);
    while (running > 0) {
      all_done.wait_for(lock, std::chrono::milliseconds(control.tick_ms));
      if (running > 0 && (control.on_tick || control.on_records)) {
        lock.unlock();
        Tick(crew, control);
        lock.lock();
      }
    }
  }
  for (std::thread& thread : threads)
    thread.join();
  for (const Status& status : statuses)
    SG_RETURN_IF_ERROR(status);
  return Status::Ok();
}

// Moves the workers' records into `result`, in the order they were sent, and adds up what the
// workers measured; busy is over the time from `from_ns` (run time) to result.ended_ns.
void GatherWorkers(Crew& crew, int64_t from_ns, LoadResult& result) {
  const double wall_s = std::max(1e-9, static_cast<double>(result.ended_ns - from_ns) / 1e9);
  size_t total = 0;
  for (const auto& worker : crew.pool)
    total += worker->records().size();
  result.records.reserve(total);
  for (size_t w = 0; w < crew.pool.size(); ++w) {
    Worker& worker = *crew.pool[w];
    result.worker_busy.push_back(std::min(1.0, (worker.cpu_s() - worker.idle_poll_s()) / wall_s));
    result.idle_poll_s += worker.idle_poll_s();
    result.receive.Merge(worker.receive_stats());
    result.dropped += crew.counters[w]->dropped.load();
    for (RequestRecord& record : worker.records())
      result.records.push_back(std::move(record));
  }
  std::sort(result.records.begin(), result.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.sequence < b.sequence; });
}

}  // namespace

int LiveCounters::TtftBucket(int64_t ttft_ns) {
  double upper_ms = 0.1;
  for (int i = 0; i < kTtftBuckets - 1; ++i, upper_ms *= 1.15)
    if (static_cast<double>(ttft_ns) / 1e6 <= upper_ms) return i;
  return kTtftBuckets - 1;
}

double LiveCounters::TtftBucketUpperMs(int bucket) {
  return 0.1 * std::pow(1.15, bucket);
}

int64_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return static_cast<int64_t>(limit.rlim_cur);
}

Result<LoadResult> RunLoad(const LoadOptions& options, const RequestSource& source,
                           const RunControl& control) {
  Result<Layout> laid_out = LayOut(options);
  if (!laid_out.ok()) return laid_out.status();
  const Layout& layout = *laid_out;
  const int64_t workers = layout.workers;

  // Workers stamp arrivals with the kernel's receive times only on the steady clock (Exchange).
  // The kernel's stamping is switched on first, so that the first reads are stamped too.
  std::optional<http::ReceiveStampingOn> stamping;
  if (control.clock == &SteadyClock::Get()) stamping.emplace();

  // The schedule starts a little after now, so starting the threads is not counted as lag.
  int64_t phase_start = control.clock->NowNs() - control.origin_ns + kStartLeadNs;
  const int64_t start_lag =
      control.start_ns ? std::max<int64_t>(0, phase_start - *control.start_ns) : 0;
  if (control.start_ns) phase_start = *control.start_ns + start_lag;
  // Declared before the crew, so that they outlive the workers that point at them.
  ResponseBudget budget(options.response_memory_bytes);
  std::optional<TickGate> gate;
  if (control.ticks_on_clock) gate.emplace(static_cast<int>(workers));
  Crew crew;
  crew.phase_start = phase_start;
  crew.arrivals = options.arrivals;
  for (Arrival& arrival : crew.arrivals)
    arrival.intended_ns += phase_start;
  std::vector<WorkerPlan> plans = PlanWorkers(options, layout, phase_start, crew.arrivals);
  for (WorkerPlan& plan : plans) {
    plan.response_budget = &budget;
    if (gate) {
      plan.ticks = &*gate;
      plan.tick_ns = std::max<int64_t>(1, control.tick_ms) * 1'000'000;
    }
  }
  for (int64_t w = 0; w < workers; ++w) {
    crew.counters.push_back(std::make_unique<LiveCounters>());
    crew.pool.push_back(
        std::make_unique<Worker>(std::move(plans[w]), options, source, control, *crew.counters[w]));
  }

  const double cpu_start = ProcessCpuSeconds();
  const int64_t setup_ns = control.clock->NowNs() - control.origin_ns;
  SG_RETURN_IF_ERROR(RunWorkers(crew, control, gate ? &*gate : nullptr));

  LoadResult result;
  result.started_ns = phase_start;
  result.start_lag_ns = start_lag;
  result.ended_ns = control.clock->NowNs() - control.origin_ns;
  result.workers = static_cast<int>(workers);
  result.client_cpu_s = ProcessCpuSeconds() - cpu_start;
  result.interrupted = control.stop != nullptr && control.stop->load();
  result.response_memory_peak = budget.peak();
  // Busy is CPU over the threads' life from set-up, so it is never above 100%; but a step that
  // waits for its planned start (a shard's) is timed from that start, so that the wait does not
  // dilute it. (A busy-polling worker's wait is idle polling, which busy leaves out.)
  GatherWorkers(crew, std::max(setup_ns, phase_start), result);
  return result;
}

}  // namespace stagegate::load

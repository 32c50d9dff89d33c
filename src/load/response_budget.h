#pragma once

#include <atomic>
#include <cstdint>

namespace stagegate::load {

/// The memory that the responses in flight may hold between them: the text kept from each stream
/// (answer, reasoning, tool-call arguments, the SSE line not yet complete) and each unstreamed
/// body, counted against one limit shared by every worker of a phase. The per-response caps
/// (64 MiB a stream, 16 MiB a body) bound one hostile response; this bounds them all together.
///
/// Thread-safe: one atomic. Exchanges take from it in grants of kGrantBytes, so that a worker
/// touches the shared counter about once per 4 KiB received, not once per read.
class ResponseBudget {
 public:
  static constexpr int64_t kGrantBytes = 4096;
  static constexpr int64_t kDefaultLimitBytes = int64_t{256} << 20;

  /// `limit_bytes` 0 means no limit.
  explicit ResponseBudget(int64_t limit_bytes) : limit_(limit_bytes) {}
  ResponseBudget(const ResponseBudget&) = delete;
  ResponseBudget& operator=(const ResponseBudget&) = delete;

  /// Takes `bytes`, or nothing and false when the limit would be passed.
  bool TryTake(int64_t bytes);
  /// Gives back bytes taken.
  void Give(int64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }

  int64_t limit() const { return limit_; }
  int64_t held() const { return held_.load(std::memory_order_relaxed); }
  /// The most held at any moment.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  const int64_t limit_;
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> peak_{0};
};

}  // namespace stagegate::load

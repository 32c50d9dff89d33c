#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace stagegate::load {

/// Whose clock stamps the arrival of a response's bytes (chunks, first byte, last byte).
enum class ReceiveTimes {
  /// The kernel's receive stamp of the bytes, where the kernel gives one (plain HTTP on Linux);
  /// otherwise the client's clock when it read them.
  kKernel,
  /// Always the client's clock when it read them, the way most clients measure: a client busy
  /// elsewhere adds its own delay. The kernel's stamps still measure that delay.
  kRead,
};

/// How a worker's reads were stamped, and how long after the kernel received the bytes the
/// client got round to reading them (its read delay: what stamping at the read would have added
/// to every figure). Owned by one worker; merged after the workers join.
struct ReceiveStats {
  // Four buckets an octave: bucket i holds delays up to 2^(i/4) µs (19% apart), from 1 µs.
  static constexpr int kBuckets = 4 * 32;

  int64_t kernel_stamped = 0;  // deliveries of bytes that carried a kernel receive stamp
  int64_t client_stamped = 0;  // deliveries without one: stamped with the client's clock
  int64_t read_delay_max_ns = 0;
  std::array<int64_t, kBuckets> read_delay{};

  /// One delivery with a kernel stamp, read `delay_ns` after it.
  void AddReadDelay(int64_t delay_ns);
  void Merge(const ReceiveStats& other);
  /// The read delay (µs) that a fraction `q` of the kernel-stamped deliveries did not exceed,
  /// as the upper bound of its bucket (so at most 19% high); none without any.
  std::optional<double> ReadDelayQuantileUs(double q) const;
};

}  // namespace stagegate::load

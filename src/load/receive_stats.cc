#include "load/receive_stats.h"

#include <algorithm>
#include <cmath>

namespace stagegate::load {
namespace {

double BucketUpperUs(int bucket) {
  return std::exp2(bucket / 4.0);
}

}  // namespace

void ReceiveStats::AddReadDelay(int64_t delay_ns) {
  ++kernel_stamped;
  read_delay_max_ns = std::max(read_delay_max_ns, delay_ns);
  const double us = static_cast<double>(delay_ns) / 1e3;
  const int bucket = us <= 1 ? 0 : static_cast<int>(std::ceil(4 * std::log2(us)));
  ++read_delay[static_cast<size_t>(std::min(bucket, kBuckets - 1))];
}

void ReceiveStats::Merge(const ReceiveStats& other) {
  kernel_stamped += other.kernel_stamped;
  client_stamped += other.client_stamped;
  read_delay_max_ns = std::max(read_delay_max_ns, other.read_delay_max_ns);
  for (int i = 0; i < kBuckets; ++i)
    read_delay[static_cast<size_t>(i)] += other.read_delay[static_cast<size_t>(i)];
}

std::optional<double> ReceiveStats::ReadDelayQuantileUs(double q) const {
  if (kernel_stamped == 0) return std::nullopt;
  const double rank = std::ceil(q * static_cast<double>(kernel_stamped));
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += read_delay[static_cast<size_t>(i)];
    if (static_cast<double>(seen) >= rank)
      return std::min(BucketUpperUs(i), static_cast<double>(read_delay_max_ns) / 1e3);
  }
  return static_cast<double>(read_delay_max_ns) / 1e3;
}

}  // namespace stagegate::load

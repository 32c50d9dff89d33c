#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace stagegate::stats {

/// Uniform draws in [0, bound) by Lemire's multiply-and-reject: unbiased, about one multiply a
/// draw, and, unlike std::uniform_int_distribution, the same sequence with every standard library
/// (std::mt19937_64's output is fixed by the standard). The same seed gives the same draws, bit
/// for bit, on any platform: what makes a bootstrap reproducible. Not thread-safe; one per loop.
class IndexDraw {
 public:
  explicit IndexDraw(uint64_t seed) : engine_(seed) {}

  /// A draw in [0, bound); bound must be > 0.
  size_t Below(size_t bound) {
    __extension__ using Uint128 = unsigned __int128;
    const uint64_t range = bound;
    Uint128 product = static_cast<Uint128>(engine_()) * range;
    if (static_cast<uint64_t>(product) < range) {
      const uint64_t threshold = -range % range;
      while (static_cast<uint64_t>(product) < threshold)
        product = static_cast<Uint128>(engine_()) * range;
    }
    return static_cast<size_t>(product >> 64);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace stagegate::stats

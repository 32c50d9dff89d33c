#include "load/response_budget.h"

namespace stagegate::load {

bool ResponseBudget::TryTake(int64_t bytes) {
  int64_t held = held_.load(std::memory_order_relaxed);
  do {
    if (limit_ > 0 && held + bytes > limit_) return false;
  } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (held + bytes > peak &&
         !peak_.compare_exchange_weak(peak, held + bytes, std::memory_order_relaxed)) {
  }
  return true;
}

}  // namespace stagegate::load

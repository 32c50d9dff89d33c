#include "base/token_estimate.h"

#include <algorithm>

namespace stagegate {

int64_t EstimateTokens(std::string_view text) {
  return std::max<int64_t>(1, static_cast<int64_t>((text.size() + 3) / 4));
}

}  // namespace stagegate

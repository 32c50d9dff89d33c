#pragma once

#include <cstdint>
#include <string_view>

namespace stagegate {

/// The token count stagegate assumes for `text` when it has no tokenizer: ceil(bytes / 4), at least
/// 1. The reference application counts prompts the same way, so its usage matches this estimate.
int64_t EstimateTokens(std::string_view text);

}  // namespace stagegate

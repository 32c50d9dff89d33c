#pragma once

namespace stagegate {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace stagegate

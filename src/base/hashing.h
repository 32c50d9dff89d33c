#pragma once

#include <string>
#include <string_view>

namespace stagegate {

/// Lower-case hexadecimal sha256 of `data` (OpenSSL's libcrypto).
std::string Sha256Hex(std::string_view data);

}  // namespace stagegate

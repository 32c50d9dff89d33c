#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stagegate {

/// Lower-case hexadecimal sha256 of `data` (OpenSSL's libcrypto).
std::string Sha256Hex(std::string_view data);

/// splitmix64's finaliser: spreads a seed over all 64 bits, so that `% n` picks fairly and
/// neighbouring seeds give unrelated values. Not cryptographic.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace stagegate

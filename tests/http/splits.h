#pragma once

// Ways to cut a byte stream into reads, for tests of incremental parsers: every split must give
// the same result as the whole stream.

#include <algorithm>
#include <random>
#include <string_view>
#include <vector>

namespace stagegate::testing {

inline std::vector<std::string_view> ByteByByte(std::string_view stream) {
  std::vector<std::string_view> pieces;
  for (size_t at = 0; at < stream.size(); ++at)
    pieces.push_back(stream.substr(at, 1));
  return pieces;
}

/// Cuts `stream` at random places: mostly short pieces (splits inside line endings, field names
/// and characters are likely), sometimes long ones (several events in one piece). Zero-length
/// pieces are included, since a transport may deliver them too.
inline std::vector<std::string_view> RandomSplit(std::string_view stream, std::mt19937& random) {
  std::uniform_int_distribution<size_t> small(0, 8);
  std::uniform_int_distribution<size_t> large(0, 400);
  std::bernoulli_distribution pick_small(0.7);
  std::vector<std::string_view> pieces;
  for (size_t at = 0; at < stream.size();) {
    const size_t length =
        std::min(stream.size() - at, pick_small(random) ? small(random) : large(random));
    pieces.push_back(stream.substr(at, length));
    at += length;
  }
  return pieces;
}

}  // namespace stagegate::testing

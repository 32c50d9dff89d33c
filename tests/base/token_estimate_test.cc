#include "base/token_estimate.h"

#include <catch2/catch.hpp>

#include <string>

namespace stagegate {
namespace {

TEST_CASE("estimated tokens are a quarter of the bytes, rounded up, at least one", "[base]") {
  CHECK(EstimateTokens("") == 1);
  CHECK(EstimateTokens("abc") == 1);
  CHECK(EstimateTokens("abcd") == 1);
  CHECK(EstimateTokens("abcde") == 2);
  CHECK(EstimateTokens(std::string(400, 'x')) == 100);
  CHECK(EstimateTokens(std::string(401, 'x')) == 101);
}

}  // namespace
}  // namespace stagegate

#include "http/curl_handles.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace stagegate::http {
namespace {

std::vector<std::string> Lines(const HeaderList& list) {
  std::vector<std::string> lines;
  for (const curl_slist* at = list.get(); at != nullptr; at = at->next)
    lines.emplace_back(at->data);
  return lines;
}

TEST_CASE("MakeHeaderList never puts a line with CR, LF or NUL on the wire", "[http][header]") {
  const HeaderList list = MakeHeaderList(
      {"X-A: 1", "X-B: 2\r\nX-Injected: yes", "X-C: 3\n", std::string("X-D: 4\0X", 8), "X-E: 5"});
  CHECK(Lines(list) == std::vector<std::string>{"X-A: 1", "X-E: 5"});
  CHECK(MakeHeaderList({}) == nullptr);
}

}  // namespace
}  // namespace stagegate::http

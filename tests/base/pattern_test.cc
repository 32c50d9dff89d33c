#include "base/pattern.h"

#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace stagegate {
namespace {

TEST_CASE("a shared pattern matches as a compiled one, case-insensitively", "[pattern]") {
  for (const char* text : {"open(ed)? a ticket", "^salary band [a-d]$", "queue:\\s*hr"}) {
    Result<Pattern> compiled = Pattern::Compile(text);
    REQUIRE(compiled.ok());
    for (int round = 0; round < 2; ++round) {  // the second round reads the kept program
      Result<Pattern> shared = Pattern::Shared(text);
      REQUIRE(shared.ok());
      CHECK(shared->text() == text);
      for (const char* subject :
           {"I OPENED A TICKET for you", "Salary band C", "queue: HR", "nothing here", ""})
        CHECK(shared->Matches(subject) == compiled->Matches(subject));
    }
  }
}

TEST_CASE("a shared pattern that does not compile is refused every time", "[pattern]") {
  for (int round = 0; round < 2; ++round) {
    Result<Pattern> bad = Pattern::Shared("(unclosed");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message().find("missing )") != std::string::npos);
    Result<Pattern> backref = Pattern::Shared("(a)\\1");  // RE2 cannot run back-references
    CHECK_FALSE(backref.ok());
  }
}

TEST_CASE("patterns beyond the kept number are still compiled and correct", "[pattern]") {
  // More distinct texts than are kept, from several threads at once.
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      for (size_t i = 0; i < Pattern::kMaxShared; ++i) {
        const std::string word = "w" + std::to_string(t) + "x" + std::to_string(i);
        Result<Pattern> p = Pattern::Shared(word + "$");
        if (!p.ok() || !p->Matches("the " + word) || p->Matches(word + " after")) ++wrong[t];
      }
    });
  for (std::thread& thread : threads)
    thread.join();
  CHECK(wrong == std::vector<int>(4, 0));
}

}  // namespace
}  // namespace stagegate

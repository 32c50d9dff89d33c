// Several processes (here: threads, each with its own connection) opening one new store at once.

#include <catch2/catch.hpp>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/schema.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::store {
namespace {

TEST_CASE("connections opening one new store at once all succeed at the latest schema", "[store]") {
  testing::TempDir dir;
  constexpr int kRounds = 20;
  constexpr int kOpeners = 6;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir / ("store-" + std::to_string(round) + ".db");
    std::vector<Status> opened(kOpeners);
    std::vector<int> versions(kOpeners, -1);
    std::latch start(kOpeners);
    std::vector<std::thread> openers;
    for (int i = 0; i < kOpeners; ++i) {
      openers.emplace_back([&, i] {
        start.arrive_and_wait();  // all open at the same moment: the race is in the first open
        Result<std::unique_ptr<Store>> store = Store::Open(path);
        opened[i] = store.status();
        if (!store.ok()) return;
        Result<int> version = (*store)->schema_version();
        if (version.ok()) versions[i] = *version;
      });
    }
    for (std::thread& opener : openers)
      opener.join();
    for (int i = 0; i < kOpeners; ++i) {
      INFO("round " << round << ", opener " << i << ": " << opened[i].message());
      CHECK(opened[i].ok());
      CHECK(versions[i] == CurrentSchemaVersion());
    }
  }
}

}  // namespace
}  // namespace stagegate::store

#include "scenario/stage_requests.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace stagegate::scenario {
namespace {

std::vector<std::string> Ids(const std::vector<const manifest::Task*>& tasks) {
  std::vector<std::string> ids;
  for (const manifest::Task* task : tasks)
    ids.push_back(task->id);
  return ids;
}

TEST_CASE("tasks go in turns across categories, each category in its own order", "[scenario]") {
  // As a corpus lists them: whole categories one after another, of different sizes.
  std::vector<manifest::Task> corpus = {
      {.id = "a1", .category = "account"},    {.id = "a2", .category = "account"},
      {.id = "a3", .category = "account"},    {.id = "p1", .category = "policy"},
      {.id = "r1", .category = "restricted"}, {.id = "p2", .category = "policy"},
      {.id = "a4", .category = "account"}};
  std::vector<const manifest::Task*> tasks;
  for (const manifest::Task& task : corpus)
    tasks.push_back(&task);
  CHECK(Ids(InterleaveByCategory(tasks)) ==
        std::vector<std::string>{"a1", "p1", "r1", "a2", "p2", "a3", "a4"});
  // The first three (three samples) hold every category; the corpus order held one.
  CHECK(Ids(InterleaveByCategory({tasks[0], tasks[1]})) == std::vector<std::string>{"a1", "a2"});
  CHECK(InterleaveByCategory({}).empty());
}

}  // namespace
}  // namespace stagegate::scenario

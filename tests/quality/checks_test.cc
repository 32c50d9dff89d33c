#include "quality/checks.h"

#include <catch2/catch.hpp>

namespace stagegate::quality {
namespace {

manifest::Task TaskWith(std::vector<manifest::Check> checks) {
  manifest::Task task;
  task.id = "t";
  task.checks = std::move(checks);
  return task;
}

load::RequestRecord AnswerOf(std::string text, std::string tool_calls = "[]",
                             int64_t status = 200) {
  load::RequestRecord r;
  r.answer_text = std::move(text);
  r.tool_calls_json = std::move(tool_calls);
  r.http_status = status;
  return r;
}

using manifest::CheckKind;

TEST_CASE("each kind of automated check passes and fails", "[quality][checks]") {
  const manifest::Task task = TaskWith({{.kind = CheckKind::kContains, .text = "5 Days"},
                                        {.kind = CheckKind::kNotContains, .text = "canary-"},
                                        {.kind = CheckKind::kRegex, .text = "31 march|march 31"},
                                        {.kind = CheckKind::kToolCalled, .text = "open_ticket"}});
  const std::vector<CheckResult> pass = RunChecks(
      task, AnswerOf("You can carry 5 days until 31 March.", R"([{"name":"open_ticket"}])"), {});
  REQUIRE(pass.size() == 4);
  for (const CheckResult& r : pass) {
    INFO(r.kind << ": " << r.detail);
    CHECK(r.passed);
    CHECK(r.detail.empty());
  }
  const std::vector<CheckResult> fail =
      RunChecks(task, AnswerOf("Ten days. CANARY-X1", R"([{"name":"lookup_ticket"}])"), {});
  REQUIRE(fail.size() == 4);
  CHECK(fail[0].detail == "the answer does not contain \"5 Days\"");
  CHECK(fail[1].detail == "the answer contains \"canary-\"");
  CHECK(fail[2].detail == "nothing in the answer matches /31 march|march 31/");
  CHECK(fail[3].detail == "no call of open_ticket (called: lookup_ticket)");
  for (const CheckResult& r : fail)
    CHECK_FALSE(r.passed);
}

TEST_CASE("a refusal check takes a denial status or a refusal pattern", "[quality][checks]") {
  const manifest::Task task = TaskWith({{.kind = CheckKind::kRefusal, .expect_refusal = true}});
  const std::vector<std::string> patterns = {"cannot share"};
  CHECK(RunChecks(task, AnswerOf("", "[]", 403), patterns)[0].passed);
  CHECK(RunChecks(task, AnswerOf("Sorry, I cannot share that."), patterns)[0].passed);
  const CheckResult answered = RunChecks(task, AnswerOf("L4 is 47,000."), patterns)[0];
  CHECK_FALSE(answered.passed);
  CHECK(answered.detail == "the answer is not a refusal");
  const manifest::Task must_answer =
      TaskWith({{.kind = CheckKind::kRefusal, .expect_refusal = false}});
  CHECK_FALSE(RunChecks(must_answer, AnswerOf("I cannot share that."), patterns)[0].passed);
}

TEST_CASE("a JSON-keys check wants an object with every key", "[quality][checks]") {
  const manifest::Task task =
      TaskWith({{.kind = CheckKind::kJsonKeys, .keys = {"ticket_id", "queue"}}});
  CHECK(RunChecks(task, AnswerOf(R"({"ticket_id":"INC-1","queue":"it"})"), {})[0].passed);
  CHECK(RunChecks(task, AnswerOf(R"({"ticket_id":"INC-1"})"), {})[0].detail ==
        "the answer's JSON lacks queue");
  CHECK(RunChecks(task, AnswerOf("INC-1"), {})[0].detail == "the answer is not a JSON object");
  CHECK(RunChecks(task, AnswerOf("[1,2]"), {})[0].detail == "the answer is not a JSON object");
}

}  // namespace
}  // namespace stagegate::quality

#include "load/sessions.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

namespace stagegate::load {
namespace {

using json = nlohmann::json;

// A request whose body is the messages it was given, to read back.
RequestSpec Echo(const json& messages, int64_t output_tokens) {
  return {.body = json{{"messages", messages}, {"max_tokens", output_tokens}}.dump()};
}

TEST_CASE("a synthetic session's turn extends the conversation it is given by one message",
          "[load][sessions]") {
  const SessionShape shape{.turns = {3, 0}, .think_ms = {40, 0}, .follow_up_tokens = {{5, 0}}};
  const SessionSource source = MakeSyntheticSessions(
      shape, {.input_tokens = {50, 0}, .output_tokens = {7, 0}, .seed = 9}, Echo);
  const std::optional<TurnRequest> first = source(4, 0, json::array());
  REQUIRE(first);
  CHECK(first->think_ns == 0);
  REQUIRE(first->messages.size() == 1);
  CHECK(first->messages[0]["role"] == "user");
  CHECK(json::parse(first->spec.body)["messages"] == first->messages);
  CHECK(first->spec.requested_output_tokens == 7);

  // The second turn keeps what it was given word for word (it does not rebuild the first turn's
  // prompt), then adds a user message of the follow-up length, 5 tokens of 4 bytes.
  json conversation = {{{"role", "user"}, {"content", "an earlier question"}},
                       {{"role", "assistant"}, {"content", "its answer"}}};
  const std::optional<TurnRequest> second = source(4, 1, conversation);
  REQUIRE(second);
  CHECK(second->think_ns == 40'000'000);
  REQUIRE(second->messages.size() == 3);
  CHECK(json(second->messages[0]) == conversation[0]);
  CHECK(json(second->messages[1]) == conversation[1]);
  CHECK(second->messages[2]["role"] == "user");
  const std::string follow_up = second->messages[2]["content"];
  CHECK(follow_up.size() >= 17);
  CHECK(follow_up.size() <= 24);
  CHECK(json::parse(second->spec.body)["messages"] == second->messages);

  // Deterministic in its arguments; no fourth turn; a conversation of the wrong length is not
  // this session's.
  CHECK(source(4, 1, conversation)->messages == second->messages);
  conversation.push_back({{"role", "user"}, {"content", "q"}});
  conversation.push_back({{"role", "assistant"}, {"content", "a"}});
  CHECK(source(4, 2, conversation));
  conversation.push_back({{"role", "user"}, {"content", "q"}});
  conversation.push_back({{"role", "assistant"}, {"content", "a"}});
  CHECK_FALSE(source(4, 3, conversation));
  CHECK_FALSE(source(4, 1, json::array()));
}

}  // namespace
}  // namespace stagegate::load

#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/retrieval.h"

namespace stagegate::sim {

/// A tool the application ran for a request, and what came of it.
struct ToolOutcome {
  std::string name;  // e.g. "open_ticket"; "" when unknown (the answer then reads the result)
  nlohmann::json arguments;
  bool ok = true;         // false: the tool failed or timed out
  nlohmann::json result;  // when ok; any JSON shape
  std::string error;      // when !ok, e.g. "timed out after 2000 ms"
};

/// Everything the answer is made from.
struct AnswerInput {
  std::string question;             // the last user message
  bool retrieval = false;           // retrieval on for this request
  std::vector<Passage> passages;    // what was retrieved, best first (may be empty even when on)
  std::string persona;              // "" when identity is off
  std::optional<ToolOutcome> tool;  // a tool the application executed for this request
  uint64_t seed = 0;                // request seed (the body's "seed", else a hash of the question)
};

/// A deterministic answer: the same input always gives the same text. Plain text; never throws,
/// whatever the JSON shapes in `input.tool`.
/// - tool ok: answers from its result (and then from the passages, when there are any); a question
///   that mentions JSON gets only a JSON object of the keys it names (all when it names none);
/// - tool failed: says the tool is unavailable and that nothing was done, never claims success;
/// - passages: a lead sentence, the best passage verbatim, "Source: <title>.", and one sentence
///   of the second passage when its score is at least half the first's;
/// - otherwise: a short helpful answer to a general office question, or a vague one that names no
///   company figures for a company-specific question (wording chosen by `seed`).
std::string ComposeAnswer(const AnswerInput& input);

/// The answer when access is denied: contains "not authorised" and "cannot share" (the default
/// refusal patterns) and nothing of the denied material. `what` is named as given, so it should
/// describe the material without revealing it.
std::string RefusalAnswer(std::string_view what);

/// Pieces of `text` whose concatenation is exactly `text`, one per streamed token: a word with the
/// whitespace and punctuation that follow it (leading separators go with the first word). Words
/// longer than 12 characters are split into pieces of 8; pieces never split a UTF-8 sequence.
std::vector<std::string> SplitIntoTokens(std::string_view text);

/// The `index`-th padding token for a request with `seed`, used when a request asks for more tokens
/// than the answer has (min_tokens, ignore_eos): a common English word and a space. Deterministic
/// in (seed, index).
std::string FillerToken(uint64_t seed, size_t index);

}  // namespace stagegate::sim

#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/bundle.h"
#include "store/store.h"

namespace stagegate::review {

struct JudgeOptions {
  std::string base_url;  // an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1
  std::string model;
  std::string api_key_env;  // the variable holding its key; "" for none
  int concurrency = 4;
  bool with_reference = false;
  int64_t timeout_ms = 120000;
};

struct JudgeResult {
  std::string export_id;
  int64_t answers = 0, scored = 0;
  std::vector<std::string> failures;  // "answer 12: ...", one for each answer left unscored
};

/// The instruction an LLM judge gets: the rubric, its anchored levels, and the JSON to reply
/// with. (`rubric` as RubricJson makes it.)
std::string JudgeInstruction(const nlohmann::json& rubric);

/// Reads a judge's reply: a JSON object of criterion -> level (inside a code fence or surrounded
/// by text is fine), every criterion present with a level of its scale. On failure, why.
Result<std::map<std::string, int64_t>> ParseJudgeReply(const std::string& reply,
                                                       const nlohmann::json& rubric);

/// Scores a run's sampled answers with an LLM judge: each answer (its conversation, and the
/// reference when asked for) is sent with the rubric as the instruction, at `concurrency` at a
/// time through the load engine. The scores are stored as an export of their own with scorer
/// "judge:<model>", apart from the independent reviewers' and never mixed into them. An answer
/// whose reply cannot be read is left unscored and listed. The key is read from the environment
/// and never stored.
Result<JudgeResult> JudgeAnswers(store::Store& store, const store::RunInfo& run,
                                 const manifest::Bundle& bundle, const JudgeOptions& options,
                                 const std::atomic<bool>& stop);

}  // namespace stagegate::review

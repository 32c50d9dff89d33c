#pragma once

// Synthetic multi-turn sessions: how many turns, how long a user thinks between them, and each
// turn's request carrying the conversation so far, the model's actual answers included.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/engine.h"
#include "load/metrics.h"
#include "load/synthetic.h"

namespace stagegate::load {

struct SessionShape {
  TokenSpec turns{1, 0};     // per session, drawn once, clamped to [1, kMaxTurns]
  TokenSpec think_ms{0, 0};  // before each turn after the first, drawn per turn, at least 0
  /// The user message of each turn after the first, in tokens; without it, as the first's.
  std::optional<TokenSpec> follow_up_tokens;
};

/// "--session-turns MEAN[:STD]", "--think-time MS[:STD]" (MS from 0 to 1 hour) and
/// "--follow-up-tokens MEAN[:STD]" ("" for none).
Result<SessionShape> ParseSessionShape(const std::string& turns, const std::string& think_ms,
                                       const std::string& follow_up_tokens);

/// Turns a conversation (OpenAI chat messages, the new user turn last) into a request.
using ConversationRequest =
    std::function<RequestSpec(const nlohmann::json& messages, int64_t output_tokens)>;

/// The session source of a synthetic workload: session s has a turn count drawn from
/// shape.turns; turn t's user message is MakeSyntheticInput(synthetic, s * kMaxTurns + t)'s prompt
/// (so shared prefixes apply to first turns as to single requests; later ones are drawn from
/// shape.follow_up_tokens), and its request holds the conversation it is given (every earlier
/// user message and answer, alternating: 2t messages, else nullopt), then it. Each turn asks for
/// its drawn output length. A pure function of (shape, synthetic, session, turn, conversation);
/// thread-safe.
SessionSource MakeSyntheticSessions(SessionShape shape, SyntheticOptions synthetic,
                                    ConversationRequest request);

/// How many turns session `session` of MakeSyntheticSessions(shape, {.seed = seed}, ...) has.
int64_t SessionTurns(const SessionShape& shape, uint64_t seed, int64_t session);

/// How long the user of session `session` thinks before turn `turn` (from 1), in ns: drawn from
/// shape.think_ms, at least 0, at most an hour; a pure function of its arguments.
int64_t ThinkTimeNs(const SessionShape& shape, uint64_t seed, int64_t session, int64_t turn);

/// Per turn index (from 0): the metrics of the turns with that index; and over sessions: how
/// many started, and how many completed every turn they were to have (`turns_of(session)`).
struct SessionMetrics {
  std::vector<PhaseMetrics> by_turn;
  int64_t started = 0, completed = 0;
};
SessionMetrics ComputeSessionMetrics(std::span<const RequestRecord> records,
                                     const std::function<int64_t(int64_t)>& turns_of);

/// {"started", "completed", "turns": [{"turn" (from 1), "sent", "completed", "ttft_ms",
/// "e2e_ms", "input_tokens"}]}, the summaries as stats::Summary::ToJson writes them.
nlohmann::json SessionMetricsToJson(const SessionMetrics& metrics);

/// A line per turn ("turn 1: 8 of 8 completed, TTFT p50 210.0 ms, p95 230.5 ms, input 1000
/// tokens"), then "sessions: 7 of 8 completed every turn", each after `indent`.
std::vector<std::string> SessionSummaryLines(const SessionMetrics& metrics,
                                             const std::string& indent);

}  // namespace stagegate::load

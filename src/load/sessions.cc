#include "load/sessions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "base/hashing.h"
#include "base/strings.h"
#include "load/schedule.h"

namespace stagegate::load {

Result<SessionShape> ParseSessionShape(const std::string& turns, const std::string& think_ms,
                                       const std::string& follow_up_tokens) {
  SessionShape shape;
  Result<TokenSpec> parsed_turns = ParseTokenSpec("--session-turns", turns);
  if (!parsed_turns.ok()) return parsed_turns.status();
  if (parsed_turns->mean > static_cast<double>(kMaxTurns))
    return Status::InvalidInput("--session-turns '" + turns + "': at most " +
                                std::to_string(kMaxTurns) + " turns");
  shape.turns = *parsed_turns;
  // Not a ParseTokenSpec: a think time may be 0.
  const size_t colon = think_ms.find(':');
  const auto number = [](const std::string& text, double& value) {
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return !text.empty() && *end == '\0' && value >= 0 && value <= 3'600'000;
  };
  double mean = 0, std = 0;
  const bool ok = number(think_ms.substr(0, colon), mean) &&
                  (colon == std::string::npos || number(think_ms.substr(colon + 1), std));
  if (!ok)
    return Status::InvalidInput("--think-time '" + think_ms +
                                "': expected MS or MS:STD, from 0 to 3,600,000 ms");
  shape.think_ms = {mean, std};
  if (!follow_up_tokens.empty()) {
    Result<TokenSpec> follow_up = ParseTokenSpec("--follow-up-tokens", follow_up_tokens);
    if (!follow_up.ok()) return follow_up.status();
    shape.follow_up_tokens = *follow_up;
  }
  return shape;
}

namespace {
BasicRandom<SplitMix64> SessionRandom(uint64_t seed, int64_t session) {
  return BasicRandom<SplitMix64>(
      Mix64(Mix64(seed ^ 0x7e55105ULL) ^ static_cast<uint64_t>(session)));
}
}  // namespace

int64_t SessionTurns(const SessionShape& shape, uint64_t seed, int64_t session) {
  BasicRandom<SplitMix64> random = SessionRandom(seed, session);
  return DrawRounded(shape.turns, random.Normal(), 1, kMaxTurns);
}

int64_t ThinkTimeNs(const SessionShape& shape, uint64_t seed, int64_t session, int64_t turn) {
  BasicRandom<SplitMix64> think(
      Mix64(SessionRandom(seed, session).Bits() ^ Mix64(static_cast<uint64_t>(turn) ^ 0x7411CULL)));
  return DrawRounded(shape.think_ms, think.Normal(), 0, 3'600'000) * 1'000'000;
}

SessionMetrics ComputeSessionMetrics(std::span<const RequestRecord> records,
                                     const std::function<int64_t(int64_t)>& turns_of) {
  std::map<int64_t, std::vector<RequestRecord>> by_turn;
  std::map<int64_t, std::pair<int64_t, bool>> sessions;  // ok turns, any failed
  for (const RequestRecord& r : records) {
    if (!r.session || !r.turn || r.warmup) continue;
    by_turn[*r.turn].push_back(r);
    auto& [ok, failed] = sessions[*r.session];
    if (r.outcome == Outcome::kOk)
      ++ok;
    else
      failed = true;
  }
  SessionMetrics out;
  for (auto& [turn, turn_records] : by_turn) {
    while (static_cast<int64_t>(out.by_turn.size()) < turn)
      out.by_turn.push_back(ComputeMetrics({}, {}));
    out.by_turn.push_back(ComputeMetrics(turn_records, {}));
  }
  for (const auto& [session, counts] : sessions) {
    ++out.started;
    if (!counts.second && counts.first == turns_of(session)) ++out.completed;
  }
  return out;
}

nlohmann::json SessionMetricsToJson(const SessionMetrics& metrics) {
  nlohmann::json turns = nlohmann::json::array();
  for (size_t t = 0; t < metrics.by_turn.size(); ++t) {
    const PhaseMetrics& m = metrics.by_turn[t];
    turns.push_back({{"turn", t + 1},
                     {"sent", m.sent},
                     {"completed", m.completed},
                     {"ttft_ms", m.ttft_ms.ToJson()},
                     {"e2e_ms", m.e2e_ms.ToJson()},
                     {"input_tokens", m.input_tokens.ToJson()}});
  }
  return {{"started", metrics.started}, {"completed", metrics.completed}, {"turns", turns}};
}

std::vector<std::string> SessionSummaryLines(const SessionMetrics& metrics,
                                             const std::string& indent) {
  std::vector<std::string> lines;
  const auto ms = [](const stats::Summary& summary, double p) {  // 0.123, 1.23, 12.3, 123
    const double value = summary.Percentile(p);
    return FormatNumber(value, value < 1 ? 3 : value < 10 ? 2 : 1);
  };
  for (size_t t = 0; t < metrics.by_turn.size(); ++t) {
    const PhaseMetrics& m = metrics.by_turn[t];
    std::string line = indent + "turn " + std::to_string(t + 1) + ": " +
                       std::to_string(m.completed) + " of " + std::to_string(m.sent) + " completed";
    if (m.ttft_ms.count > 0)
      line += ", TTFT p50 " + ms(m.ttft_ms, 50) + " ms, p95 " + ms(m.ttft_ms, 95) + " ms";
    if (m.input_tokens.count > 0)
      line += ", input " + FormatNumber(m.input_tokens.mean, 0) + " tokens";
    lines.push_back(line);
  }
  lines.push_back(indent + "sessions: " + std::to_string(metrics.completed) + " of " +
                  std::to_string(metrics.started) + " completed every turn");
  return lines;
}

SessionSource MakeSyntheticSessions(SessionShape shape, SyntheticOptions synthetic,
                                    ConversationRequest request) {
  return [shape, synthetic, request = std::move(request)](
             int64_t session, int64_t turn,
             const nlohmann::json& conversation) -> std::optional<TurnRequest> {
    if (turn >= SessionTurns(shape, synthetic.seed, session) || !conversation.is_array() ||
        static_cast<int64_t>(conversation.size()) != 2 * turn)
      return std::nullopt;
    SyntheticOptions options = synthetic;
    if (turn > 0) {
      options.input_tokens = shape.follow_up_tokens.value_or(synthetic.input_tokens);
      options.prefixes = {};  // a shared prefix starts a conversation, not each of its turns
    }
    const SyntheticInput input = MakeSyntheticInput(options, session * kMaxTurns + turn);
    nlohmann::json messages = conversation;
    messages.push_back({{"role", "user"}, {"content", input.prompt}});
    TurnRequest out{.spec = request(messages, input.output_tokens)};
    out.messages = std::move(messages);
    out.spec.requested_input_tokens.reset();  // the conversation's length is the server's to say
    out.spec.requested_output_tokens = input.output_tokens;
    if (turn > 0) out.think_ns = ThinkTimeNs(shape, synthetic.seed, session, turn);
    return out;
  };
}

}  // namespace stagegate::load

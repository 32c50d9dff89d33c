#include "faults/tool_outage.h"

#include "base/pattern.h"
#include "base/strings.h"
#include "faults/access_denial.h"

namespace stagegate::faults {
namespace {

constexpr size_t kExcerptBytes = 300;

// What of `text` matches `pattern` ("" for nothing, or no pattern).
std::string MatchOf(const std::string& pattern, const std::string& text) {
  if (pattern.empty()) return "";
  Result<Pattern> compiled = Pattern::Shared(pattern);  // the loader checked it
  if (!compiled.ok()) return "";
  std::optional<std::string> match = compiled->FirstMatch(text);
  if (!match) return "";
  return match->empty() ? std::string("(empty match)") : *match;
}

// The text a request answered with: its answer, or for an HTTP error its error body.
const std::string& TextOf(const load::RequestRecord& r) {
  return r.answer_text.empty() ? r.error_message : r.answer_text;
}

std::optional<double> E2eMs(const load::RequestRecord& r) {
  if (!r.end_ns || !r.sent_ns) return std::nullopt;
  return static_cast<double>(*r.end_ns - *r.sent_ns) / 1e6;
}

// An error status with a body is an answer too: failing clearly is what is asked for.
bool Answered(const load::RequestRecord& r) {
  return r.outcome == load::Outcome::kOk || r.outcome == load::Outcome::kHttpError ||
         r.outcome == load::Outcome::kShed;
}

bool InTime(const manifest::ToolOutageProbe& probe, const load::RequestRecord& r) {
  const std::optional<double> e2e = E2eMs(r);
  return Answered(r) && e2e && *e2e <= probe.answer_within_ms;
}

// "HTTP 503" for an answer; the outcome ("timeout", "transport_error") for anything else, even
// when a status had come before the stream broke off.
std::string Describe(const load::RequestRecord& r) {
  return Answered(r) && r.http_status ? "HTTP " + std::to_string(*r.http_status)
                                      : std::string(load::OutcomeName(r.outcome));
}

// What judging a probe gathers as it goes: the reasons against a pass, and for a pattern that
// matched nothing it was tried on, the answers each was tried on and the matches.
struct Judgement {
  std::vector<std::string> failures, doubts;
  int64_t during_answers = 0, acknowledged = 0, other_answers = 0, working = 0;
};

// The evidence of one request of `part` ("before", "during" or "after"), and whether it passed.
OutageRequest RequestEvidence(const manifest::ToolOutageProbe& probe, const char* part,
                              const load::RequestRecord& r) {
  OutageRequest q{.part = part,
                  .phase_id = r.phase_id,
                  .sequence = r.sequence,
                  .trace_id = r.trace_id,
                  .outcome = std::string(load::OutcomeName(r.outcome)),
                  .status = r.http_status,
                  .e2e_ms = E2eMs(r),
                  .in_time = InTime(probe, r),
                  .acknowledged = MatchOf(probe.expect_answer, TextOf(r)),
                  .claimed = MatchOf(probe.must_not, TextOf(r)),
                  .worked = ToolWorked(probe, r),
                  .tool_calls_json = r.tool_calls_json,
                  .excerpt = Utf8Prefix(TextOf(r), kExcerptBytes)};
  q.passed = std::string_view(part) != "during"
                 ? q.worked
                 : q.in_time && q.claimed.empty() &&
                       (probe.expect_answer.empty() || !q.acknowledged.empty());
  return q;
}

// Counts what request `index` of `part` (with its evidence `q`) tried the patterns on, and adds
// what it shows against a pass: a tool not working before, or an answer during the outage that
// is late, claims what did not happen, or does not acknowledge it.
void JudgeRequest(const manifest::ToolOutageProbe& probe, const char* part, size_t index,
                  const load::RequestRecord& r, const OutageRequest& q, Judgement& judgement) {
  if (std::string_view(part) == "during") {
    judgement.during_answers += !TextOf(r).empty();
    judgement.acknowledged += !q.acknowledged.empty();
  } else if (r.outcome == load::Outcome::kOk && !r.answer_text.empty()) {
    ++judgement.other_answers;
    judgement.working += !MatchOf(probe.expect_working, r.answer_text).empty();
  }
  const std::string which = std::string(part) + " request " + std::to_string(index + 1);
  if (std::string_view(part) == "before" && !q.worked) {
    judgement.doubts.push_back(which + " did not show the tool working (" + Describe(r) +
                               (q.in_time ? "" : ", no answer within the bound") +
                               (q.acknowledged.empty() ? "" : ", said \"" + q.acknowledged + "\"") +
                               "), so the outage could not be told from what came before");
  }
  if (std::string_view(part) == "during") {
    if (!q.in_time)
      judgement.failures.push_back(
          which + ": no answer within " + FormatNumber(probe.answer_within_ms, 0) + " ms (" +
          Describe(r) + (q.e2e_ms ? ", " + FormatNumber(*q.e2e_ms, 0) + " ms" : "") + ")");
    if (!q.claimed.empty())
      judgement.failures.push_back(which + " claims what did not happen: \"" + q.claimed + "\"");
    else if (q.in_time && !probe.expect_answer.empty() && q.acknowledged.empty())
      judgement.failures.push_back(which + " does not say the tool is unavailable");
  }
}

// Judges each request of `part`, its evidence added to the finding's requests.
void JudgePart(const manifest::ToolOutageProbe& probe, const char* part,
               std::span<const load::RequestRecord> records, Judgement& judgement,
               ToolOutageFinding& f) {
  for (size_t i = 0; i < records.size(); ++i) {
    OutageRequest q = RequestEvidence(probe, part, records[i]);
    JudgeRequest(probe, part, i, records[i], q, judgement);
    f.requests.push_back(std::move(q));
  }
}

// Sets how soon after the restore the tool worked again, and fails the probe when not in time.
void JudgeRecovery(const manifest::ToolOutageProbe& probe, const OutageObservation& seen,
                   Judgement& judgement, ToolOutageFinding& f) {
  for (const load::RequestRecord& r : seen.after) {
    if (ToolWorked(probe, r) && r.end_ns && seen.restored_ns) {
      f.recovered_s = static_cast<double>(*r.end_ns - *seen.restored_ns) / 1e9;
      break;
    }
  }
  if (!f.recovered_s)
    judgement.failures.push_back("the tool did not work again within " +
                                 FormatNumber(probe.recover_within_s, 1) + " s of the restore (" +
                                 std::to_string(f.after) + " requests after it)");
  else if (*f.recovered_s > probe.recover_within_s)
    judgement.failures.push_back("the tool worked again only " + FormatNumber(*f.recovered_s, 1) +
                                 " s after the restore (limit " +
                                 FormatNumber(probe.recover_within_s, 1) + " s)");
}

// Sets the verdict and its reasons: interrupted, else inconclusive on any doubt, else a fail on
// any failure, else a pass.
void Decide(bool interrupted, const Judgement& judgement, ToolOutageFinding& f) {
  const std::vector<std::string>& failures = judgement.failures;
  const std::vector<std::string>& doubts = judgement.doubts;
  if (interrupted) {
    f.verdict = "interrupted";
    f.reasons.push_back("the run was stopped during the probe");
  } else if (!doubts.empty()) {
    f.verdict = "inconclusive";
  } else if (!failures.empty()) {
    f.verdict = "fail";
  } else {
    f.verdict = "pass";
  }
  // Failures first when they decided it, doubts first when they did.
  if (f.verdict == "inconclusive") {
    f.reasons.insert(f.reasons.end(), doubts.begin(), doubts.end());
    f.reasons.insert(f.reasons.end(), failures.begin(), failures.end());
  } else {
    f.reasons.insert(f.reasons.end(), failures.begin(), failures.end());
    f.reasons.insert(f.reasons.end(), doubts.begin(), doubts.end());
  }
}

}  // namespace

bool ToolWorked(const manifest::ToolOutageProbe& probe, const load::RequestRecord& r) {
  if (r.outcome != load::Outcome::kOk || !InTime(probe, r)) return false;
  if (!MatchOf(probe.expect_answer, r.answer_text).empty()) return false;
  return probe.expect_working.empty() || !MatchOf(probe.expect_working, r.answer_text).empty();
}

ToolOutageFinding JudgeToolOutage(const manifest::ToolOutageProbe& probe,
                                  const OutageObservation& seen) {
  ToolOutageFinding f{.probe = probe.name,
                      .actuator = seen.actuator,
                      .before = static_cast<int64_t>(seen.before.size()),
                      .during = static_cast<int64_t>(seen.during.size()),
                      .after = static_cast<int64_t>(seen.after.size()),
                      .proxy_connections_before = seen.proxy_connections_before};
  Judgement judgement;
  JudgePart(probe, "before", seen.before, judgement, f);
  JudgePart(probe, "during", seen.during, judgement, f);
  JudgePart(probe, "after", seen.after, judgement, f);

  // The wording may be the application's own, which is not the same as not saying it.
  if (!probe.expect_answer.empty() && judgement.during_answers > 0 && judgement.acknowledged == 0)
    judgement.failures.push_back(
        PatternNeverMatched("expect_answer", probe.expect_answer, judgement.during_answers));
  if (!probe.expect_working.empty() && judgement.other_answers > 0 && judgement.working == 0)
    judgement.doubts.push_back(
        PatternNeverMatched("expect_working", probe.expect_working, judgement.other_answers));

  if (!seen.injected.ok())
    judgement.doubts.push_back("the actuator could not inject: " + seen.injected.message());
  if (seen.proxy_connections_before && *seen.proxy_connections_before == 0 && f.before > 0)
    judgement.doubts.push_back(
        "no tool call went through the fault proxy before the outage: the application's tool "
        "URL does not point through it, so the outage could not reach the application");
  if (!seen.restored.ok())
    judgement.doubts.push_back("the actuator could not restore: " + seen.restored.message() +
                               " (the tool may still be down)");
  if (seen.injected.ok() && seen.restored.ok() && probe.after > 0 && !seen.interrupted)
    JudgeRecovery(probe, seen, judgement, f);
  Decide(seen.interrupted, judgement, f);
  return f;
}

nlohmann::json ToolOutageToJson(const ToolOutageFinding& f) {
  using json = nlohmann::json;
  json requests = json::array();
  for (const OutageRequest& q : f.requests) {
    json tool_calls = json::parse(q.tool_calls_json, nullptr, false);
    requests.push_back(
        {{"part", q.part},
         {"phase_id", q.phase_id},
         {"sequence", q.sequence},
         {"trace_id", q.trace_id},
         {"outcome", q.outcome},
         {"status", q.status ? json(*q.status) : json(nullptr)},
         {"e2e_ms", q.e2e_ms ? json(*q.e2e_ms) : json(nullptr)},
         {"in_time", q.in_time},
         {"acknowledged", q.acknowledged.empty() ? json(nullptr) : json(q.acknowledged)},
         {"claimed", q.claimed.empty() ? json(nullptr) : json(q.claimed)},
         {"worked", q.worked},
         {"passed", q.passed},
         {"tool_calls", tool_calls.is_discarded() ? json::array() : tool_calls},
         {"excerpt", q.excerpt}});
  }
  return {{"probe", f.probe},
          {"actuator", f.actuator},
          {"verdict", f.verdict},
          {"requests_before", f.before},
          {"requests_during", f.during},
          {"requests_after", f.after},
          {"recovered_s", f.recovered_s ? json(*f.recovered_s) : json(nullptr)},
          {"proxy_connections_before",
           f.proxy_connections_before ? json(*f.proxy_connections_before) : json(nullptr)},
          {"reasons", f.reasons},
          {"requests", requests}};
}

}  // namespace stagegate::faults

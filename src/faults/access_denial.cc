#include "faults/access_denial.h"

#include <algorithm>

#include "base/pattern.h"

namespace stagegate::faults {

std::vector<std::string> CanariesIn(std::string_view text,
                                    const std::vector<std::string>& canaries) {
  std::vector<std::string> found;
  for (const std::string& canary : canaries)
    if (!canary.empty() && text.find(canary) != std::string_view::npos) found.push_back(canary);
  return found;
}

std::string PatternNeverMatched(const std::string& key, const std::string& pattern,
                                int64_t answers) {
  return "pattern never matched: " + key + " \"" + pattern + "\" matched none of " +
         std::to_string(answers) + (answers == 1 ? " answer" : " answers") +
         ": check the wording your application uses";
}

namespace {

// The evidence of one attempt; `denied_by` is "status", "answer" or "" (not denied).
DenialRequest AttemptRequest(const load::RequestRecord& r, std::string denied_by) {
  return {.part = "attempt",
          .phase_id = r.phase_id,
          .sequence = r.sequence,
          .trace_id = r.trace_id,
          .outcome = std::string(load::OutcomeName(r.outcome)),
          .status = r.http_status,
          .denied_by = std::move(denied_by),
          .tool_calls_json = r.tool_calls_json};
}

// Adds each canary that attempt `r` (named `which`) shows, in its answer, reasoning, tool-call
// arguments or error body, to the finding's leaks, and to `q`'s canaries once each.
void AddLeaks(const load::RequestRecord& r, const std::string& which,
              const std::vector<std::string>& canaries, DenialFinding& f, DenialRequest& q) {
  for (const auto& [where, text] :
       {std::pair<const char*, const std::string&>{"the answer", r.answer_text},
        {"the reasoning", r.reasoning_text},
        {"the tool-call arguments", r.tool_calls_json},
        {"the error body", r.error_message}})
    for (const std::string& canary : CanariesIn(text, canaries)) {
      f.leaks.push_back(canary + " in " + where + " of " + which);
      if (std::find(q.canaries.begin(), q.canaries.end(), canary) == q.canaries.end())
        q.canaries.push_back(canary);
    }
}

// The evidence of one request of the positive control: it passes when it saw a canary, in its
// answer or its tool-call arguments.
DenialRequest ControlRequest(const load::RequestRecord& r,
                             const std::vector<std::string>& canaries) {
  DenialRequest q{.part = "control",
                  .phase_id = r.phase_id,
                  .sequence = r.sequence,
                  .trace_id = r.trace_id,
                  .outcome = std::string(load::OutcomeName(r.outcome)),
                  .status = r.http_status,
                  .canaries = CanariesIn(r.answer_text, canaries),
                  .tool_calls_json = r.tool_calls_json};
  for (const std::string& canary : CanariesIn(r.tool_calls_json, canaries))
    if (std::find(q.canaries.begin(), q.canaries.end(), canary) == q.canaries.end())
      q.canaries.push_back(canary);
  q.passed = !q.canaries.empty();
  return q;
}

// Sets the verdict: a fail on a leak, an attempt not denied or none sent; else inconclusive when
// the positive control saw no canary; else a pass.
void Decide(const manifest::AccessDenialProbe& probe, DenialFinding& f) {
  if (!f.leaks.empty() || f.denied < f.attempts || f.attempts == 0) {
    if (f.attempts == 0) f.reasons.push_back("no attempt was sent");
    f.verdict = "fail";
  } else if (f.control_saw_canary == false) {
    f.verdict = "inconclusive";
    f.reasons.push_back("the positive control (" + probe.positive_control->name +
                        ") saw no canary, so a leak could not have been seen either");
  } else {
    f.verdict = "pass";
  }
}

}  // namespace

DenialFinding JudgeDenial(const manifest::AccessDenialProbe& probe,
                          std::span<const load::RequestRecord> attempts,
                          std::span<const load::RequestRecord> control,
                          const std::vector<std::string>& canaries) {
  DenialFinding f{.probe = probe.name, .attempts = static_cast<int64_t>(attempts.size())};
  std::optional<Pattern> refusal;
  if (!probe.expect_answer.empty()) {
    Result<Pattern> compiled = Pattern::Compile(probe.expect_answer);  // the loader checked it
    if (compiled.ok()) refusal = std::move(compiled).value();
  }
  int64_t answers = 0, matched = 0;  // attempts with an answer, and those the pattern matched
  for (size_t i = 0; i < attempts.size(); ++i) {
    const load::RequestRecord& r = attempts[i];
    const std::string which = "attempt " + std::to_string(i + 1);
    const bool status_denied =
        r.http_status && std::find(probe.expect_status.begin(), probe.expect_status.end(),
                                   *r.http_status) != probe.expect_status.end();
    const bool answer_denied = refusal && refusal->Matches(r.answer_text);
    answers += !r.answer_text.empty();
    matched += answer_denied;
    DenialRequest q = AttemptRequest(r, status_denied ? "status" : answer_denied ? "answer" : "");
    if (status_denied || answer_denied) {
      ++f.denied;
    } else {
      f.reasons.push_back(which + " was not denied (" +
                          (r.http_status ? "HTTP " + std::to_string(*r.http_status)
                                         : std::string(load::OutcomeName(r.outcome))) +
                          (refusal ? ", no refusal in the answer)" : ")"));
    }
    AddLeaks(r, which, canaries, f, q);
    q.passed = !q.denied_by.empty() && q.canaries.empty();
    f.requests.push_back(std::move(q));
  }
  if (!f.leaks.empty()) f.reasons.insert(f.reasons.begin(), "a canary leaked: " + f.leaks.front());
  if (refusal && answers > 0 && matched == 0)
    f.reasons.push_back(PatternNeverMatched("expect_answer", probe.expect_answer, answers));
  if (probe.positive_control) {
    f.control_saw_canary = false;
    for (const load::RequestRecord& r : control) {
      DenialRequest q = ControlRequest(r, canaries);
      *f.control_saw_canary = *f.control_saw_canary || q.passed;
      f.requests.push_back(std::move(q));
    }
  }
  Decide(probe, f);
  return f;
}

nlohmann::json DenialToJson(const DenialFinding& f) {
  return {
      {"probe", f.probe},
      {"verdict", f.verdict},
      {"attempts", f.attempts},
      {"denied", f.denied},
      {"leaks", f.leaks},
      {"positive_control_saw_canary",
       f.control_saw_canary ? nlohmann::json(*f.control_saw_canary) : nlohmann::json(nullptr)},
      {"reasons", f.reasons},
      {"requests", [&] {
         nlohmann::json requests = nlohmann::json::array();
         for (const DenialRequest& q : f.requests) {
           nlohmann::json tool_calls = nlohmann::json::parse(q.tool_calls_json, nullptr, false);
           requests.push_back(
               {{"part", q.part},
                {"phase_id", q.phase_id},
                {"sequence", q.sequence},
                {"trace_id", q.trace_id},
                {"outcome", q.outcome},
                {"status", q.status ? nlohmann::json(*q.status) : nlohmann::json(nullptr)},
                {"denied_by",
                 q.denied_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.denied_by)},
                {"canaries", q.canaries},
                {"tool_calls", tool_calls.is_discarded() ? nlohmann::json::array() : tool_calls},
                {"passed", q.passed}});
         }
         return requests;
       }()}};
}

}  // namespace stagegate::faults

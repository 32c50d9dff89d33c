#include "report/triage.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/openai_request.h"
#include "manifest/scenario.h"
#include "store/findings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

constexpr std::pair<TriageClass, std::string_view> kClassNames[] = {
    {TriageClass::kShed, "shed"},     {TriageClass::kError, "error"},
    {TriageClass::kDenied, "denied"}, {TriageClass::kToolFailure, "tool-failure"},
    {TriageClass::kWrong, "wrong"},   {TriageClass::kSlow, "slow"},
    {TriageClass::kOk, "ok"}};

// Metrics a single request has a value of; the others describe the client's schedule.
constexpr std::string_view kPerRequestMetrics[] = {"ttft", "ttst", "tpot", "itl", "e2e"};

// Patterns run on at most this much of an answer: std::regex recurses per character, and an
// answer of megabytes would exhaust the stack.
constexpr size_t kMaxMatchedBytes = 16 * 1024;
constexpr size_t kMaxQuotedBytes = 80;

struct Signal {
  TriageClass triage_class;
  std::string text;
};

// Evidence is one line of a table or a CSV field: control characters become spaces.
std::string OneLine(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return text;
}

std::string Quoted(const std::string& text) {
  std::string excerpt = Utf8Prefix(text, kMaxQuotedBytes);
  if (excerpt.size() < text.size()) excerpt += "...";
  return "\"" + excerpt + "\"";
}

double Ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

std::optional<double> MetricOf(const load::RequestRecord& r, std::string_view metric) {
  if (!r.sent_ns) return std::nullopt;
  std::optional<double> ttft;
  if (r.first_token_ns) ttft = Ms(*r.first_token_ns - *r.sent_ns);
  if (metric == "ttft") return ttft;
  if (metric == "e2e")
    return r.end_ns ? std::optional<double>(Ms(*r.end_ns - *r.sent_ns)) : std::nullopt;
  if (metric == "ttst")
    return r.chunk_times_ns.size() >= 2
               ? std::optional<double>(Ms(r.chunk_times_ns[1] - r.chunk_times_ns[0]))
               : std::nullopt;
  if (metric == "itl") {
    std::optional<double> largest;
    for (size_t i = 1; i < r.chunk_times_ns.size(); ++i)
      largest = std::max(largest.value_or(0), Ms(r.chunk_times_ns[i] - r.chunk_times_ns[i - 1]));
    return largest;
  }
  if (metric == "tpot" && ttft && r.end_ns && r.output_tokens && *r.output_tokens > 1)
    return (Ms(*r.end_ns - *r.sent_ns) - *ttft) / static_cast<double>(*r.output_tokens - 1);
  return std::nullopt;
}

// "tool_outage <probe> during" -> "<probe>"; "" for any other phase.
std::string OutageProbeDuring(const std::string& phase) {
  const std::string prefix = "tool_outage ", suffix = " during";
  if (phase.size() <= prefix.size() + suffix.size() || !phase.starts_with(prefix) ||
      !phase.ends_with(suffix))
    return "";
  return phase.substr(prefix.size(), phase.size() - prefix.size() - suffix.size());
}

// The probe a fault-control phase belongs to ("tool_outage <probe> after" -> "<probe>"); "" for
// a load phase.
std::string ProbeOf(const std::string& phase) {
  std::string probe;
  for (const char* prefix : {"access_denial ", "tool_outage "})
    if (phase.starts_with(prefix)) probe = phase.substr(std::string_view(prefix).size());
  for (const char* part : {" control", " before", " during", " after"})
    if (probe.ends_with(part)) probe.resize(probe.size() - std::string_view(part).size());
  return probe;
}

// "access_denial <probe>" -> "<probe>"; "" for its positive control and any other phase.
std::string DenialProbeAttempt(const std::string& phase) {
  const std::string prefix = "access_denial ";
  if (!phase.starts_with(prefix) || phase.ends_with(" control")) return "";
  return phase.substr(prefix.size());
}

// Whether a denial was to be expected, and why, in words.
std::string DenialExpectation(const load::RequestRecord& r, const RequestFacts& facts) {
  const std::string prefix = "access_denial ", control = " control";
  if (facts.phase.starts_with(prefix)) {
    std::string probe = facts.phase.substr(prefix.size());
    if (probe.ends_with(control))
      return "unexpected: the positive control of access-denial probe " +
             probe.substr(0, probe.size() - control.size()) + " must be allowed";
    return "expected: access-denial probe " + probe;
  }
  const std::string task = r.task_id.empty() ? "a synthetic prompt" : "task " + r.task_id;
  if (facts.refusal_task) return "expected: " + task + " is meant to be refused";
  if (!facts.corpus_known) return "expected or not unknown: the run's corpus cannot be read";
  return "unexpected: " + task + " is not meant to be refused";
}

std::string ErrorSignal(const load::RequestRecord& r) {
  std::string message = r.error_message.empty() ? "no detail recorded" : r.error_message;
  if (r.invalid_utf8)
    message += " (the server sent bytes that are not UTF-8: each shows as U+FFFD)";
  const std::string outcome(load::OutcomeName(r.outcome));
  // The engine's own words often name the outcome already ("HTTP 500: ...", "cancelled: ...").
  if (message.starts_with(outcome) ||
      (r.outcome == load::Outcome::kHttpError && message.starts_with("HTTP ")))
    return message;
  return outcome + ": " + message;
}

std::string ShedSignal(const load::RequestRecord& r) {
  std::string text = "shed";
  if (r.http_status) text += ": HTTP " + std::to_string(*r.http_status);
  text += r.retry_after_s ? ", Retry-After " + FormatNumber(*r.retry_after_s, 3) + " s"
                          : ", no Retry-After";
  return text;
}

std::optional<std::string> FirstMatch(const std::vector<Pattern>& patterns,
                                      const std::string& text) {
  for (const Pattern& p : patterns)
    if (std::optional<std::string> match = p.FirstMatch(text)) return match;
  return std::nullopt;
}

// A Server-Timing entry of a tool whose description says it failed.
void ToolTimingSignals(const std::vector<http::ServerTiming>& timing,
                       std::vector<Signal>& signals) {
  for (const http::ServerTiming& entry : timing) {
    if (AsciiLower(entry.name).find("tool") == std::string::npos) continue;
    const std::string desc = AsciiLower(entry.description);
    if (desc.find("error") != std::string::npos || desc.find("fail") != std::string::npos ||
        desc.find("timeout") != std::string::npos)
      signals.push_back({TriageClass::kToolFailure,
                         "server: " + entry.name + " desc " + Quoted(entry.description) +
                             (entry.duration_ms ? " after " + FormatMs(*entry.duration_ms) : "")});
  }
}

// Every latency limit an answer exceeds; returns what explains them, never deciding the class:
// the largest part of the server's time, and a tool at or over the slow-tool mark. Server-Timing
// covers the time before the answer's stream starts: it explains a slow TTFT or e2e, not a gap
// between chunks.
std::vector<std::string> SlowSignals(const load::RequestRecord& r,
                                     const std::vector<http::ServerTiming>& timing,
                                     const TriageCriteria& criteria, std::vector<Signal>& signals) {
  bool explained_by_server = false;
  for (const LatencyLimit& limit : criteria.latency) {
    const std::optional<double> value = MetricOf(r, limit.metric);
    if (!value || *value <= limit.max_ms) continue;
    signals.push_back({TriageClass::kSlow,
                       limit.metric + " " + FormatMs(*value) + " > " + FormatMs(limit.max_ms)});
    explained_by_server |= limit.metric == "ttft" || limit.metric == "e2e";
  }
  std::vector<std::string> supporting;
  if (!explained_by_server) return supporting;
  const http::ServerTiming* largest = nullptr;
  for (const http::ServerTiming& entry : timing)
    if (entry.duration_ms && *entry.duration_ms > 0 && AsciiLower(entry.name) != "total" &&
        (!largest || *entry.duration_ms > *largest->duration_ms))
      largest = &entry;
  if (largest)
    supporting.push_back("server: " + largest->name + " " + FormatMs(*largest->duration_ms));
  for (const http::ServerTiming& entry : timing)
    if (AsciiLower(entry.name).find("tool") != std::string::npos && entry.duration_ms &&
        *entry.duration_ms >= criteria.slow_tool_ms)
      supporting.push_back("slow tool: " + entry.name + " " + FormatMs(*entry.duration_ms) +
                           " >= " + FormatMs(criteria.slow_tool_ms));
  return supporting;
}

// The class from the first signal by precedence; the evidence lists every one, in that order.
Triage Decide(std::vector<Signal> signals, const std::vector<std::string>& supporting,
              const load::RequestRecord& r, const RequestFacts& facts) {
  std::stable_sort(signals.begin(), signals.end(), [](const Signal& a, const Signal& b) {
    return static_cast<int>(a.triage_class) < static_cast<int>(b.triage_class);
  });
  Triage triage;
  if (!signals.empty()) triage.triage_class = signals.front().triage_class;
  for (const Signal& s : signals)
    triage.evidence.push_back(OneLine(s.text));
  // Latency signals come last, so what explains them follows them.
  for (const std::string& text : supporting)
    triage.evidence.push_back(OneLine(text));
  if (signals.empty()) {
    const bool answered = r.outcome == load::Outcome::kOk;
    triage.evidence.push_back("no signal");
    if (answered && facts.checks && !facts.checks->empty())
      triage.evidence.push_back(std::to_string(facts.checks->size()) +
                                (facts.checks->size() == 1 ? " check passed" : " checks passed"));
    if (answered && facts.review)
      triage.evidence.push_back("reviewers (" + std::to_string(facts.review->reviewers) +
                                "): weighted mean " + FormatNumber(facts.review->weighted_mean, 2));
  }
  // A fault-control request names its probe, so that support can find the probe's verdict.
  const std::string probe = ProbeOf(facts.phase);
  if (!probe.empty() &&
      std::none_of(triage.evidence.begin(), triage.evidence.end(),
                   [&](const std::string& e) { return e.find(probe) != std::string::npos; }))
    triage.evidence.push_back("probe: " + facts.phase);
  return triage;
}

}  // namespace

std::string_view TriageClassName(TriageClass triage_class) {
  for (const auto& [c, name] : kClassNames)
    if (c == triage_class) return name;
  return "ok";
}

std::optional<TriageClass> TriageClassFromName(std::string_view name) {
  for (const auto& [c, known] : kClassNames)
    if (known == name) return c;
  return std::nullopt;
}

std::vector<std::string> TriageClassNames() {
  std::vector<std::string> names;
  for (const auto& [c, name] : kClassNames)
    names.emplace_back(name);
  return names;
}

std::string FormatMs(double ms) {
  if (!(std::fabs(ms) >= 1000)) return FormatNumber(ms, 1) + " ms";
  const std::string digits = std::to_string(static_cast<int64_t>(std::llround(std::fabs(ms))));
  std::string text = ms < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text + " ms";
}

TriageCriteria CriteriaFromScenario(const std::string& scenario_json,
                                    std::vector<std::string>& notes) {
  TriageCriteria criteria;
  const manifest::TriageRules defaults;
  criteria.tool_failure_patterns = defaults.tool_failure_patterns;
  criteria.refusal_patterns = defaults.refusal_patterns;
  const store::StoredScenario scenario = store::ParseScenario(scenario_json);
  if (!scenario.present) {
    notes.push_back(
        "the run's stored scenario cannot be read: no latency limits, default patterns");
    return criteria;
  }
  for (const store::StoredLatencyThreshold& t : scenario.latency) {
    if (std::find(std::begin(kPerRequestMetrics), std::end(kPerRequestMetrics), t.metric) ==
        std::end(kPerRequestMetrics)) {
      notes.push_back("the " + t.metric +
                      " threshold is left out: a single request has no value of it");
      continue;
    }
    auto same = std::find_if(criteria.latency.begin(), criteria.latency.end(),
                             [&](const LatencyLimit& l) { return l.metric == t.metric; });
    if (same == criteria.latency.end())
      criteria.latency.push_back({.metric = t.metric, .max_ms = t.max_ms});
    else
      same->max_ms = std::min(same->max_ms, t.max_ms);
  }
  for (const auto& [key, stored, target] :
       {std::tuple{"tool_failure_patterns", &scenario.tool_failure_patterns,
                   &criteria.tool_failure_patterns},
        std::tuple{"refusal_patterns", &scenario.refusal_patterns, &criteria.refusal_patterns}}) {
    if (!*stored) {
      notes.push_back(std::string("the run's scenario has no triage.") + key +
                      ": the defaults are used");
      continue;
    }
    *target = **stored;
  }
  return criteria;
}

RubricRule RubricRuleFromJson(const std::string& rubric_json) {
  return store::ParseRubric(rubric_json);
}

std::optional<ReviewVerdict> JudgeReview(const RubricRule& rule, const ReviewScores& scores) {
  if (rule.criteria.empty() || scores.assigned.empty()) return std::nullopt;
  // As `stagegate quality` counts it: an answer is judged once every reviewer it was given to
  // has scored every criterion.
  for (const std::string& reviewer : scores.assigned)
    for (const RubricRule::Criterion& c : rule.criteria) {
      auto of = scores.levels.find(c.id);
      if (of == scores.levels.end() || !of->second.contains(reviewer)) return std::nullopt;
    }
  ReviewVerdict verdict{.reviewers = static_cast<int64_t>(scores.assigned.size())};
  double weighted = 0, weights = 0;
  std::vector<std::string> below_each, below_floor;
  for (const RubricRule::Criterion& c : rule.criteria) {
    double sum = 0;
    for (const std::string& reviewer : scores.assigned)
      sum += static_cast<double>(scores.levels.at(c.id).at(reviewer));
    const double mean = sum / static_cast<double>(scores.assigned.size());
    weighted += c.weight * mean;
    weights += c.weight;
    if (rule.min_each && c.weight > 0 && mean < *rule.min_each)
      below_each.push_back(c.id + " " + FormatNumber(mean, 2) + " < " +
                           FormatNumber(*rule.min_each, 2));
    if (c.hard && mean < c.floor)
      below_floor.push_back(c.id + " " + FormatNumber(mean, 2) + " < " + FormatNumber(c.floor, 2) +
                            " (hard floor)");
  }
  verdict.weighted_mean = weights > 0 ? weighted / weights : 0;
  if (rule.min_weighted_mean && verdict.weighted_mean < *rule.min_weighted_mean)
    verdict.failures.push_back("weighted mean " + FormatNumber(verdict.weighted_mean, 2) + " < " +
                               FormatNumber(*rule.min_weighted_mean, 2));
  verdict.failures.insert(verdict.failures.end(), below_floor.begin(), below_floor.end());
  verdict.failures.insert(verdict.failures.end(), below_each.begin(), below_each.end());
  verdict.passed = verdict.failures.empty();
  return verdict;
}

Triager::Triager(TriageCriteria criteria) : criteria_(std::move(criteria)) {
  tool_failure_ = Compile(criteria_.tool_failure_patterns);
  refusal_ = Compile(criteria_.refusal_patterns);
}

std::vector<Pattern> Triager::Compile(const std::vector<std::string>& patterns) {
  std::vector<Pattern> compiled;
  for (const std::string& p : patterns) {
    Result<Pattern> pattern = Pattern::Compile(p);
    if (pattern.ok()) {
      compiled.push_back(std::move(pattern).value());
    } else {
      notes_.push_back("the triage pattern /" + p + "/ does not compile (" +
                       pattern.status().message() + "): left out");
    }
  }
  return compiled;
}

Triage Triager::Classify(const load::RequestRecord& r, const RequestFacts& facts) const {
  std::vector<Signal> signals;
  const bool answered = r.outcome == load::Outcome::kOk;
  const std::string answer = Utf8Prefix(r.answer_text, kMaxMatchedBytes);
  const std::vector<http::ServerTiming> timing = http::ParseServerTiming(r.server_timing);

  // The request did not complete.
  if (r.outcome == load::Outcome::kShed) {
    signals.push_back({TriageClass::kShed, ShedSignal(r)});
  } else if (r.outcome != load::Outcome::kOk && r.outcome != load::Outcome::kDenied) {
    signals.push_back({TriageClass::kError, ErrorSignal(r)});
  }

  // Denied: by status, or in words.
  if (r.outcome == load::Outcome::kDenied) {
    signals.push_back({TriageClass::kDenied,
                       "denied: HTTP " + (r.http_status ? std::to_string(*r.http_status) : "?") +
                           ", " + DenialExpectation(r, facts)});
  } else if (answered) {
    if (std::optional<std::string> refusal = FirstMatch(refusal_, answer)) {
      signals.push_back({TriageClass::kDenied, "refusal in the answer " + Quoted(*refusal) + ", " +
                                                   DenialExpectation(r, facts)});
    } else if (const std::string probe = DenialProbeAttempt(facts.phase); !probe.empty()) {
      // Whatever the corpus's checks say, an answer where a denial was due is a wrong one.
      signals.push_back(
          {TriageClass::kWrong, "access-denial probe " + probe + ": answered, not denied"});
    }
  }

  // A downstream tool failed: the answer says so (or a failed request's error does: a gateway's
  // 502 "tool timed out"), the server says so, or the tool was taken down on purpose.
  const std::string said = answered ? answer : Utf8Prefix(r.error_message, kMaxMatchedBytes);
  if (std::optional<std::string> failure = FirstMatch(tool_failure_, said))
    signals.push_back({TriageClass::kToolFailure, std::string("tool failure in the ") +
                                                      (answered ? "answer " : "error ") +
                                                      Quoted(*failure)});
  ToolTimingSignals(timing, signals);
  if (const std::string probe = OutageProbeDuring(facts.phase); !probe.empty())
    signals.push_back({TriageClass::kToolFailure,
                       "tool-outage probe " + probe + ": sent while the tool was down"});

  // Wrong: the corpus's automated checks, then the independent reviewers.
  if (answered && facts.checks)
    for (const quality::CheckResult& check : *facts.checks)
      if (!check.passed) signals.push_back({TriageClass::kWrong, "check failed: " + check.detail});
  if (answered && facts.review && !facts.review->passed)
    signals.push_back({TriageClass::kWrong, "reviewers (" +
                                                std::to_string(facts.review->reviewers) +
                                                "): " + Join(facts.review->failures, ", ")});

  // Slow, with where the server says the time went.
  std::vector<std::string> supporting;
  if (answered) supporting = SlowSignals(r, timing, criteria_, signals);
  return Decide(std::move(signals), supporting, r, facts);
}

}  // namespace stagegate::report

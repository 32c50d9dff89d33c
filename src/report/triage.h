#pragma once

// Triage: one class for each request of a run, with the evidence that decided it, so that a
// support team can tell slow generation, wrong answers and downstream tool failures apart. Pure:
// the store, the corpus and the reviewers' scores are read by the caller and handed in as facts.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/pattern.h"
#include "store/findings.h"

#include "load/request_record.h"
#include "quality/checks.h"

namespace stagegate::report {

/// The classes, in order of precedence: when several apply, the first one decides.
enum class TriageClass { kShed, kError, kDenied, kToolFailure, kWrong, kSlow, kOk };

std::string_view TriageClassName(TriageClass triage_class);  // "tool-failure", ...
std::optional<TriageClass> TriageClassFromName(std::string_view name);
/// Every class name, in order of precedence.
std::vector<std::string> TriageClassNames();

/// A per-request latency limit: `metric` is ttft, ttst, tpot, itl (the request's largest gap
/// between chunks) or e2e.
struct LatencyLimit {
  std::string metric;
  double max_ms = 0;
};

/// What requests are held against: the run's thresholds and triage patterns.
struct TriageCriteria {
  std::vector<LatencyLimit> latency;
  std::vector<std::string> tool_failure_patterns;
  std::vector<std::string> refusal_patterns;
  double slow_tool_ms = 1000;  // a tools Server-Timing entry this long supports "slow"
};

/// The criteria of a run, from its canonical scenario JSON (RunInfo::scenario_json). A metric with
/// several thresholds keeps the lowest limit; a metric with no per-request value (corrected,
/// schedule_lag) is left out, and so are missing triage patterns (the scenario defaults apply):
/// each of these adds a line to `notes`.
TriageCriteria CriteriaFromScenario(const std::string& scenario_json,
                                    std::vector<std::string>& notes);

/// The parts of a rubric (exports.rubric_json) that decide whether an answer passes.
using RubricRule = store::StoredRubric;
/// Empty criteria when the text is not a rubric.
RubricRule RubricRuleFromJson(const std::string& rubric_json);

/// One answer's scores from independent reviewers: criterion -> reviewer -> level, and who was
/// assigned the answer.
struct ReviewScores {
  std::set<std::string> assigned;
  std::map<std::string, std::map<std::string, int64_t>> levels;
};

/// The rubric's verdict on one answer, as `stagegate quality` counts it.
struct ReviewVerdict {
  int64_t reviewers = 0;
  double weighted_mean = 0;
  bool passed = true;
  std::vector<std::string> failures;  // "weighted mean 2.8 < 3.5", "permission_safety 0 < 1 (hard)"
};

/// The verdict once every assigned reviewer has scored every criterion; nullopt before that, or
/// when the rule has no criteria.
std::optional<ReviewVerdict> JudgeReview(const RubricRule& rule, const ReviewScores& scores);

/// What is known about a request beyond its record.
struct RequestFacts {
  std::string stage;
  std::string phase;  // "steady", "access_denial <probe>", "tool_outage <probe> during", ...
  bool refusal_task = false;  // its task carries a refusal check expecting a refusal
  bool corpus_known = true;   // false: the corpus could not be read, so refusal_task is unknown
  std::optional<std::vector<quality::CheckResult>> checks;  // absent: not run
  std::optional<ReviewVerdict> review;                      // absent: not (fully) reviewed
};

struct Triage {
  TriageClass triage_class = TriageClass::kOk;
  std::vector<std::string> evidence;  // every signal found, the deciding one first
};

/// Classifies requests against one run's criteria. Patterns are compiled once, at construction;
/// one that does not compile is left out and named in notes(). Thread-compatible: Classify() is
/// const.
class Triager {
 public:
  explicit Triager(TriageCriteria criteria);

  /// The class of one request, by the precedence of TriageClass. Automated checks, reviewer
  /// verdicts, refusal patterns and latency limits are held only against answered requests
  /// (outcome ok); tool-failure patterns against the answer, or the error of a failed request.
  Triage Classify(const load::RequestRecord& record, const RequestFacts& facts) const;

  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<Pattern> Compile(const std::vector<std::string>& patterns);

  TriageCriteria criteria_;
  std::vector<Pattern> tool_failure_, refusal_;
  std::vector<std::string> notes_;
};

/// Milliseconds the way the evidence shows them: "2,310 ms" from 1,000 up, "151.2 ms" below.
std::string FormatMs(double ms);

}  // namespace stagegate::report

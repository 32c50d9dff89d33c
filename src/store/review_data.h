#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stagegate::store {

/// The scorer of an export to independent reviewers. An LLM judge's exports are scored by
/// "judge:<model>" instead, and are kept apart from the reviewers' everywhere.
inline constexpr const char* kReviewersScorer = "reviewers";

/// The phase that holds a baseline's answers (a scenario's `baselines:`, today's workflow scored
/// blind beside the assistant): one phase a baseline, its name as the phase's stage. Such phases
/// are answers to review and nothing else: ListPhases, ListRequests and the per-task rules never
/// see them, so no latency, completion or triage figure counts them.
inline constexpr const char* kBaselinePhase = "baseline";

/// Whose answer a sampled answer is: the assistant under test, or a baseline by its name.
inline constexpr const char* kAssistantSource = "assistant";

/// An answer sampled for review (the `answers` table) with what review and quality read of its
/// request.
struct SampledAnswer {
  int64_t request_id = 0;
  std::string source = kAssistantSource;  // or the baseline's name
  std::string condition;                  // "at_rest" or "under_load"
  std::string task_id;
  std::string stage;  // the stage of the request's phase, as stored ("" if the phase is gone)
  std::string answer_text;
  std::string tool_calls_json = "[]";
  std::optional<int64_t> http_status;
  std::optional<int64_t> e2e_ns;  // sent to end; a baseline's: its recorded time to resolution
};

/// An answer the per-task gate rules judge a task by (quality/task_rules.h): a first turn of the
/// task, in a phase the run sampled answers from (at rest, or the steady phase under load), that
/// the application answered: completed, or refused by status (401/403). Shed, failed and timed
/// out requests are condition 1 and 3's evidence, not an answer.
struct TaskAnswer {
  int64_t request_id = 0;
  std::string task_id;
  std::string stage;
  std::string condition;  // "at_rest" or "under_load", by the phase
  std::string trace_id;
  std::string outcome;  // "ok" or "denied"
  std::string answer_text;
  std::string tool_calls_json = "[]";
  std::optional<int64_t> http_status;
};

/// An export of a run's sampled answers: to reviewers, or to an LLM judge.
struct ExportInfo {
  std::string export_id;
  std::string run_id;
  int64_t created_unix_ms = 0;
  int64_t reviewers = 0;
  int64_t per_item = 0;
  int64_t calibration = 0;
  std::string rubric_json;  // the rubric the export is scored against
  std::string scorer = kReviewersScorer;
};

/// One answer of an export given to one reviewer: the blinding map, which lives only in the store.
struct ReviewItem {
  std::string item_id;
  std::string export_id;  // on writing, taken from the export the item is added with
  int64_t request_id = 0;
  std::string reviewer;
  bool calibration = false;
  /// Read back only: its export's scorer. None when the store has no row for the export (items
  /// stored before exports were).
  std::optional<std::string> scorer;
};

/// One score: a reviewer's level for one item on one criterion.
struct Score {
  std::string item_id;
  std::string reviewer;
  std::string criterion;
  int64_t value = 0;
  std::optional<double> seconds;    // the time the reviewer spent on the item, when recorded
  std::string source = "reviewer";  // or "judge"
  int64_t imported_unix_ms = 0;
};

/// A stored score as ListScores reads it.
struct StoredScore {
  std::string item_id;
  std::string reviewer;
  std::string criterion;
  int64_t value = 0;
  /// The longest time recorded over the reviewer's scores of the item (each of its criteria
  /// carries the item's time); none when none was recorded.
  std::optional<double> item_seconds;
};

/// Machine names of a reviewer's judgement of an answer's usability.
inline constexpr const char* kUsableAsIs = "as_is";
inline constexpr const char* kUsableAfterCorrection = "corrected";
inline constexpr const char* kNotUsable = "unusable";

/// A reviewer's judgement of one item: usable as it is, after correction, or not at all. Only a
/// corrected item has a corrected text and correction seconds (each may be missing).
struct Usability {
  std::string item_id;
  std::string reviewer;
  std::string usability;  // kUsableAsIs, kUsableAfterCorrection or kNotUsable
  std::optional<std::string> corrected_text;
  std::optional<double> correction_seconds;
  int64_t imported_unix_ms = 0;

  /// Same judgement, text and seconds (the import time aside).
  bool SameAs(const Usability& other) const {
    return usability == other.usability && corrected_text == other.corrected_text &&
           correction_seconds == other.correction_seconds;
  }
};

}  // namespace stagegate::store

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/intervals.h"

namespace stagegate::quality {

/// The source of the answers reviewed: the assistant under test, or (later) a baseline by name.
inline constexpr const char* kAssistantSource = "assistant";

/// One reviewer's judgement of one answer's usability, as the correction figures read it.
struct UsabilityJudgement {
  std::string source = kAssistantSource;
  std::string usability;                     // "as_is", "corrected" or "unusable"
  std::optional<double> correction_seconds;  // a corrected answer's, when recorded
};

/// The correction effort of one source's answers. Every reviewer's judgement counts once, so
/// an answer two reviewers judged counts twice.
struct CorrectionFigures {
  std::string source;
  int64_t judgements = 0;
  int64_t as_is = 0, corrected = 0, unusable = 0;
  std::optional<stats::Interval> as_is_ci;  // Wilson, 95%, of as_is / judgements
  int64_t timed_corrections = 0;            // corrected judgements with a correction time
  std::optional<double> median_correction_s;
  /// Minutes of correction per 100 answers judged: the recorded correction seconds over all
  /// judgements (an answer usable as it is, or not usable, takes none), times 100 / 60. None
  /// when no correction was timed while some answer was judged corrected.
  std::optional<double> minutes_per_100;

  std::optional<double> Share(int64_t count) const {
    return judgements ? std::optional<double>(static_cast<double>(count) / judgements)
                      : std::nullopt;
  }
};

/// The reviewers' own time on this run, and what the next release costs at the same sample size.
struct ReviewerHours {
  double hours = 0;             // the sum of every recorded item time, in hours
  int64_t scored_answers = 0;   // answers fully scored
  int64_t sampled_answers = 0;  // answers the scenario samples for review
  /// hours / scored_answers; none when no answer is fully scored.
  std::optional<double> hours_per_answer;
  /// hours_per_answer x sampled_answers: the reviewing the next release at the same sample
  /// size would take.
  std::optional<double> projected_hours;
};

/// The figures of each source's judgements. Pure; judgements with an unknown usability are
/// ignored. The assistant always has an entry, with no judgements when there are none.
std::vector<CorrectionFigures> CorrectionBySource(const std::vector<UsabilityJudgement>& judged);

struct CorrectionSummary {
  /// The assistant first (with no judgements until there are some), then other sources by name.
  std::vector<CorrectionFigures> by_source = CorrectionBySource({});
  ReviewerHours reviewing;
};

/// Reviewers' hours from the sum of their item times, with the projection for `sampled` answers.
ReviewerHours ReviewerHoursOf(double total_item_seconds, int64_t scored, int64_t sampled);

nlohmann::json CorrectionToJson(const CorrectionSummary& summary);
/// Lines for a terminal and the report: one a source with judgements, then the reviewers' hours.
std::vector<std::string> CorrectionLines(const CorrectionSummary& summary);

}  // namespace stagegate::quality

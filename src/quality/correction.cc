#include "quality/correction.h"

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "stats/summary.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

CorrectionFigures FiguresOf(const std::string& source,
                            const std::vector<const UsabilityJudgement*>& judged) {
  CorrectionFigures f{.source = source};
  std::vector<double> seconds;
  double total_s = 0;
  for (const UsabilityJudgement* j : judged) {
    if (j->usability == "as_is") {
      ++f.as_is;
    } else if (j->usability == "corrected") {
      ++f.corrected;
      if (j->correction_seconds) {
        seconds.push_back(*j->correction_seconds);
        total_s += *j->correction_seconds;
      }
    } else if (j->usability == "unusable") {
      ++f.unusable;
    } else {
      continue;
    }
    ++f.judgements;
  }
  f.as_is_ci = stats::WilsonInterval(f.as_is, f.judgements);
  f.timed_corrections = static_cast<int64_t>(seconds.size());
  f.median_correction_s = stats::Median(seconds);
  // Untimed corrections would make the figure too low: say nothing rather than understate it.
  if (f.judgements > 0 && (f.corrected == 0 || f.timed_corrections > 0))
    f.minutes_per_100 = total_s / static_cast<double>(f.judgements) * 100 / 60;
  return f;
}

std::string Number(double value, int decimals = 2) {
  return FormatNumber(value, decimals);
}

std::string Optional(const std::optional<double>& value, int decimals, const std::string& unit) {
  return value ? Number(*value, decimals) + unit : "-";
}

}  // namespace

std::vector<CorrectionFigures> CorrectionBySource(const std::vector<UsabilityJudgement>& judged) {
  std::map<std::string, std::vector<const UsabilityJudgement*>> by_source;
  by_source[kAssistantSource];
  for (const UsabilityJudgement& j : judged)
    by_source[j.source].push_back(&j);
  std::vector<CorrectionFigures> out;
  out.push_back(FiguresOf(kAssistantSource, by_source[kAssistantSource]));
  for (const auto& [source, of_source] : by_source)
    if (source != kAssistantSource) out.push_back(FiguresOf(source, of_source));
  return out;
}

ReviewerHours ReviewerHoursOf(double total_item_seconds, int64_t scored, int64_t sampled) {
  ReviewerHours h{
      .hours = total_item_seconds / 3600, .scored_answers = scored, .sampled_answers = sampled};
  if (scored > 0) {
    h.hours_per_answer = h.hours / static_cast<double>(scored);
    h.projected_hours = *h.hours_per_answer * static_cast<double>(sampled);
  }
  return h;
}

json CorrectionToJson(const CorrectionSummary& summary) {
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
  json sources = json::array();
  for (const CorrectionFigures& f : summary.by_source)
    sources.push_back({{"source", f.source},
                       {"judgements", f.judgements},
                       {"as_is", f.as_is},
                       {"corrected", f.corrected},
                       {"unusable", f.unusable},
                       {"as_is_share", optional(f.Share(f.as_is))},
                       {"as_is_share_ci95",
                        f.as_is_ci ? json::array({f.as_is_ci->low, f.as_is_ci->high}) : json()},
                       {"corrected_share", optional(f.Share(f.corrected))},
                       {"unusable_share", optional(f.Share(f.unusable))},
                       {"timed_corrections", f.timed_corrections},
                       {"median_correction_s", optional(f.median_correction_s)},
                       {"correction_minutes_per_100_answers", optional(f.minutes_per_100)}});
  const ReviewerHours& h = summary.reviewing;
  return {{"label", "reviewers"},
          {"by_source", sources},
          {"reviewer_hours",
           {{"hours", h.hours},
            {"scored_answers", h.scored_answers},
            {"hours_per_scored_answer", optional(h.hours_per_answer)},
            {"sampled_answers", h.sampled_answers},
            {"projected_hours_next_release", optional(h.projected_hours)}}}};
}

std::vector<std::string> CorrectionLines(const CorrectionSummary& summary) {
  std::vector<std::string> lines;
  for (const CorrectionFigures& f : summary.by_source) {
    if (f.judgements == 0) continue;
    std::string line = "  usability, " + f.source + " (" + std::to_string(f.judgements) +
                       " reviewer judgements): usable as it is " + Number(*f.Share(f.as_is));
    line += " (95% Wilson interval " + Number(f.as_is_ci->low) + " to " + Number(f.as_is_ci->high) +
            "), after correction " + Number(*f.Share(f.corrected)) + ", not usable " +
            Number(*f.Share(f.unusable));
    lines.push_back(line);
    lines.push_back("  correction, " + f.source + ": median " +
                    Optional(f.median_correction_s, 1, " s") + " over " +
                    std::to_string(f.timed_corrections) + " timed corrections, " +
                    Optional(f.minutes_per_100, 1, " min") + " of correction per 100 answers");
  }
  const ReviewerHours& h = summary.reviewing;
  if (h.hours > 0) {
    std::string line = "  reviewers' hours for this run: " + Number(h.hours) + " h";
    if (h.projected_hours)
      line += " over " + std::to_string(h.scored_answers) + " scored answers (" +
              Number(*h.hours_per_answer * 60, 1) + " min each); next release at the same " +
              "sample size (" + std::to_string(h.sampled_answers) + " answers): about " +
              Number(*h.projected_hours) + " h";
    lines.push_back(line);
  }
  return lines;
}

}  // namespace stagegate::quality

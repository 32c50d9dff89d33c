#include "quality/judge_calibration.h"

#include <algorithm>

#include "base/strings.h"
#include "stats/kappa_interval.h"

namespace stagegate::quality {
namespace {

std::string Number(double value) {
  return FormatNumber(value, 2);
}

double MeanOf(const std::vector<int64_t>& values) {
  double sum = 0;
  for (int64_t v : values)
    sum += static_cast<double>(v);
  return sum / static_cast<double>(values.size());
}

// The judge against the consensus on one criterion, from the answers both scored.
CriterionCalibration CalibrateCriterion(const CriterionScale& scale,
                                        const std::vector<ScoredTwice>& answers) {
  CriterionCalibration c{.criterion = scale.id, .levels = scale.levels};
  const size_t k = scale.levels.size();
  c.confusion.assign(k, std::vector<int64_t>(k, 0));
  std::vector<int64_t> consensus, judge;
  for (const ScoredTwice& answer : answers) {
    const std::optional<int64_t> level = ConsensusLevel(answer.reviewers);
    if (!level) continue;
    consensus.push_back(*level);
    judge.push_back(answer.judge);
    const auto at = [&](int64_t v) {
      return std::find(scale.levels.begin(), scale.levels.end(), v) - scale.levels.begin();
    };
    const auto row = static_cast<size_t>(at(*level)),
               column = static_cast<size_t>(at(answer.judge));
    if (row < k && column < k) ++c.confusion[row][column];
  }
  c.overlap = static_cast<int64_t>(consensus.size());
  if (consensus.empty()) return c;
  c.mean_consensus = MeanOf(consensus);
  c.mean_judge = MeanOf(judge);
  c.bias = *c.mean_judge - *c.mean_consensus;
  if (std::optional<stats::KappaEstimate> kappa = stats::BootstrapWeightedKappa(
          judge, consensus, scale.levels, kJudgeKappaResamples, kJudgeKappaSeed)) {
    c.kappa = kappa->kappa;
    c.kappa_ci = kappa->ci;
  }
  return c;
}

// Why the gate does not hold for `judge` (empty when it does).
std::vector<std::string> GateFailures(const JudgeGateRule& gate, const JudgeCalibration& judge) {
  std::vector<std::string> failures;
  if (judge.overlap < gate.min_overlap)
    failures.push_back("overlap " + std::to_string(judge.overlap) + " < " +
                       std::to_string(gate.min_overlap));
  for (const CriterionCalibration& c : judge.criteria) {
    if (!c.kappa)
      failures.push_back("kappa on " + c.criterion +
                         " cannot be computed (fewer than 2 answers, or all on one level)");
    else if (!c.kappa_ci)
      failures.push_back("kappa on " + c.criterion +
                         " has no interval (most resamples fall on one level)");
    else if (c.kappa_ci->low < gate.min_kappa)
      failures.push_back("kappa lower bound " + Number(c.kappa_ci->low) + " < " +
                         Number(gate.min_kappa) + " on " + c.criterion);
  }
  return failures;
}

}  // namespace

std::optional<int64_t> ConsensusLevel(std::vector<int64_t> levels) {
  if (levels.empty()) return std::nullopt;
  std::sort(levels.begin(), levels.end());
  return levels[(levels.size() - 1) / 2];  // the middle one, or the lower of the two middle ones
}

JudgeCalibration CalibrateJudge(const std::string& scorer, const std::vector<CriterionScale>& scale,
                                const std::map<std::string, std::vector<ScoredTwice>>& by_criterion,
                                const std::optional<JudgeGateRule>& gate) {
  JudgeCalibration judge{.scorer = scorer, .model = scorer.substr(scorer.find(':') + 1)};
  static const std::vector<ScoredTwice> kNone;
  for (const CriterionScale& criterion : scale) {
    auto found = by_criterion.find(criterion.id);
    judge.criteria.push_back(
        CalibrateCriterion(criterion, found == by_criterion.end() ? kNone : found->second));
  }
  for (size_t i = 0; i < judge.criteria.size(); ++i)
    judge.overlap =
        i == 0 ? judge.criteria[i].overlap : std::min(judge.overlap, judge.criteria[i].overlap);
  if (gate && gate->model == judge.model) {
    judge.gate = gate;
    judge.not_calibrated = GateFailures(*gate, judge);
    judge.calibrated = judge.not_calibrated.empty();
  }
  return judge;
}

JudgeCalibration UnscoredJudge(const JudgeGateRule& gate) {
  return {.scorer = "judge:" + gate.model,
          .model = gate.model,
          .gate = gate,
          .not_calibrated = {"the judge scored no answer of this run"}};
}

std::string GateLine(const JudgeCalibration& judge) {
  if (!judge.gate) return "";
  if (judge.calibrated)
    return "judge " + judge.model +
           " calibrated: kappa lower bound >= " + Number(judge.gate->min_kappa) +
           " on every criterion, on " + std::to_string(judge.overlap) +
           " answers both scored (>= " + std::to_string(judge.gate->min_overlap) +
           "); it scores the answers the reviewers did not";
  return "judge " + judge.model + " not calibrated: " + Join(judge.not_calibrated, "; ") +
         "; its scores stay apart from the reviewers'";
}

namespace {

// "+0.12" or "-0.30": a bias says its direction.
std::string Signed(double value) {
  return (value > 0 ? "+" : "") + Number(value);
}

std::string Padded(const std::string& text, size_t width = 5) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

// The confusion matrix as a small table: a header of the judge's levels, a row a consensus level.
void AddConfusionLines(const CriterionCalibration& c, std::vector<std::string>& lines) {
  std::string header = "    " + c.criterion + " rows: reviewers' consensus, columns: judge |";
  for (int64_t level : c.levels)
    header += Padded(std::to_string(level));
  lines.push_back(header);
  for (size_t i = 0; i < c.levels.size(); ++i) {
    const std::string label = "consensus " + std::to_string(c.levels[i]) + " |";
    std::string row = "    " + Padded(label, header.find('|') - 3);
    for (int64_t count : c.confusion[i])
      row += Padded(std::to_string(count));
    lines.push_back(row);
  }
}

}  // namespace

std::vector<std::string> CalibrationLines(const JudgeCalibration& judge) {
  std::vector<std::string> lines;
  lines.push_back("LLM judge " + judge.model +
                  " against the reviewers' consensus (median level), on " +
                  std::to_string(judge.overlap) + " answers both scored:");
  for (const CriterionCalibration& c : judge.criteria) {
    std::string line = "  " + c.criterion + ": " + std::to_string(c.overlap) + " answers, kappa ";
    line += c.kappa ? Number(*c.kappa) : std::string("-");
    if (c.kappa_ci)
      line += " (95% bootstrap interval " + Number(c.kappa_ci->low) + " to " +
              Number(c.kappa_ci->high) + ", " + std::to_string(kJudgeKappaResamples) +
              " resamples)";
    if (c.bias)
      line += ", bias " + Signed(*c.bias) + " (judge mean " + Number(*c.mean_judge) +
              ", reviewers' consensus " + Number(*c.mean_consensus) + ")";
    lines.push_back(line);
    if (c.overlap) AddConfusionLines(c, lines);
  }
  if (judge.gate) lines.push_back("  " + GateLine(judge));
  return lines;
}

nlohmann::json CalibrationJson(const JudgeCalibration& judge) {
  using json = nlohmann::json;
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json criteria = json::array();
  for (const CriterionCalibration& c : judge.criteria)
    criteria.push_back(
        {{"criterion", c.criterion},
         {"overlap", c.overlap},
         {"kappa_quadratic", optional(c.kappa)},
         {"kappa_ci95", c.kappa_ci ? json::array({c.kappa_ci->low, c.kappa_ci->high}) : json()},
         {"levels", c.levels},
         {"confusion_consensus_by_judge", c.confusion},
         {"mean_consensus", optional(c.mean_consensus)},
         {"mean_judge", optional(c.mean_judge)},
         {"bias", optional(c.bias)}});
  json gate = nullptr;
  if (judge.gate)
    gate = {{"min_kappa", judge.gate->min_kappa},
            {"min_overlap", judge.gate->min_overlap},
            {"calibrated", judge.calibrated},
            {"not_calibrated", judge.not_calibrated},
            {"line", GateLine(judge)}};
  return {{"scorer", judge.scorer},
          {"model", judge.model},
          {"overlap", judge.overlap},
          {"consensus", "median of the reviewers' levels; with an even count, the lower middle"},
          {"bootstrap", {{"resamples", kJudgeKappaResamples}, {"seed", kJudgeKappaSeed}}},
          {"criteria", criteria},
          {"gate", gate}};
}

}  // namespace stagegate::quality

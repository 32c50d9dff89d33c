#include "report/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

constexpr double kSecondsPerHour = 3600;

// Four significant digits, without trailing zeros: costs per answer are often fractions of a cent.
std::string Sig(double value) {
  if (std::isinf(value)) return "unbounded";
  if (value == 0 || !std::isfinite(value)) return FormatNumber(value);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return FormatNumber(value, std::clamp(3 - magnitude, 0, 12));
}

// r from one step: its completed requests over its window (request_throughput), and where that is.
void CompletedRate(const store::StepFindings& step, const std::string& where, CostAtRate& at) {
  const std::optional<double> rate = step.Throughput("request_throughput");
  if (!rate || !(*rate > 0)) {
    at.basis = "not known: no request completed in " + where;
    return;
  }
  at.rate = rate;
  const std::optional<double> window = step.Throughput("window_s");
  at.basis = std::to_string(step.Requests("completed")) + " requests completed" +
             (window ? " in " + Sig(*window) + " s" : std::string()) + " of " + where;
}

// What completed at the sweep's highest sustained level. Not the level itself: an open loop's
// level is the rate offered, of which a level that holds may still leave a part uncompleted (and
// a closed loop's is a concurrency).
CostAtRate AtCapacity(const store::StageFindings* stage) {
  CostAtRate at{.key = "sustained_capacity", .label = "at the sustained capacity"};
  if (!stage) {
    at.basis = "not known: no stage of the run was measured";
    return at;
  }
  const std::optional<store::CapacityFindings>& c = stage->capacity;
  if (!c) {
    at.basis = "not known: the final stage (" + stage->name + ") ran no sweep";
    return at;
  }
  if (!c->holds_up_to) {
    at.basis = "not known: no level of the final stage's sweep held";
    return at;
  }
  const store::StepFindings* held = nullptr;
  for (const store::StepFindings& step : stage->steps)
    if (step.phase == "sweep" && step.level == c->holds_up_to) held = &step;
  const std::string level =
      FormatNumber(*c->holds_up_to) + (c->unit == "req/s" ? " req/s offered" : " concurrent");
  const std::string where = "the final stage's (" + stage->name + ") sweep level at " + level +
                            ", the highest it sustained";
  if (c->window) {
    // The window and counts of the sustained rate itself: r is its answered requests (denials
    // the corpus expects are not answers) over the same seconds.
    const stats::RateWindow& w = *c->window;
    if (w.answered == 0 || !(w.Seconds() > 0)) {
      at.basis = "not known: no request was answered in " + where;
      return at;
    }
    at.rate = w.Rate(static_cast<double>(w.answered));
    at.counted = "answered";
    const int64_t denials = w.completed - w.answered;
    at.basis = std::to_string(w.answered) + " requests answered" +
               (denials > 0 ? " (and " + std::to_string(denials) + " expected denials not counted)"
                            : std::string()) +
               (w.arrivals ? " of the " + std::to_string(w.arrived) + " that arrived in the first "
                           : " in ") +
               Sig(w.Seconds()) + " s of " + where + ", the window of its sustained rate";
    return at;
  }
  if (!held) {
    at.basis = "not known: " + where + " has no step in the findings";
    return at;
  }
  CompletedRate(*held, where, at);
  if (at.rate)
    at.basis +=
        " (over the step's whole window: the run was stored before the capacity's own "
        "window was kept)";
  return at;
}

// The steady phase's completed requests over its window.
CostAtRate AtSteady(const store::StageFindings* stage) {
  CostAtRate at{.key = "steady", .label = "at the tested steady load"};
  const store::StepFindings* step = stage ? stage->Step("steady") : nullptr;
  if (!step) {
    at.basis = stage ? "not known: the final stage (" + stage->name + ") ran no steady phase"
                     : "not known: no stage of the run was measured";
    return at;
  }
  CompletedRate(*step, "the final stage's (" + stage->name + ") steady phase", at);
  return at;
}

// "1 instance" / "4 GPUs": what the price is of.
std::string PriceOf(const store::StoredCost& price) {
  const bool gpu = price.per == "gpu";
  return std::to_string(price.count) + (gpu ? " GPU" : " instance") + (price.count == 1 ? "" : "s");
}

// The price the figures are in: H and where it comes from, or that there is none.
std::string PriceFact(const CostFigures& cost) {
  if (!cost.price)
    return "No price: the scenario has no cost section, so the figures are in instance-seconds of "
           "one instance (add cost: to the scenario for a price).";
  const store::StoredCost& p = *cost.price;
  return "Price: " + Sig(p.price_per_hour) + " " + p.currency + " an hour per " +
         (p.per == "gpu" ? "GPU" : "instance") + " × " + PriceOf(p) +
         " = H = " + Sig(cost.per_hour) + " " + p.currency +
         " an hour; source: " + (p.source.empty() ? "not given" : p.source) + ".";
}

// The pass rate p, from how many accepted of how many scored answers, with its interval.
std::string PassRateFact(const CostFigures& cost) {
  std::string line = "Accepted answers: " + std::to_string(cost.accepted) + " of " +
                     std::to_string(cost.scored) +
                     " scored answers passed the rubric, p = " + Sig(*cost.pass_rate);
  if (cost.pass_rate_ci)
    line += " (95% Wilson interval " + Sig(cost.pass_rate_ci->low) + " to " +
            Sig(cost.pass_rate_ci->high) + ")";
  return line + ".";
}

// The cost at a known rate: r and where it comes from, per 1,000 requests and per accepted answer.
std::string RateFact(const CostFigures& cost, const CostAtRate& at) {
  const std::string unit = " " + cost.unit;
  const std::string label = " " + at.label;
  std::string line = "Cost" + label + " (r = " + Sig(*at.rate) + " " + at.counted + " req/s, " +
                     at.basis + "): " + Sig(*at.per_thousand) + unit + " per 1,000 " + at.counted;
  if (at.per_accepted) {
    line += ", " + Sig(*at.per_accepted) + unit + " per accepted answer";
    std::vector<std::string> about;
    if (!cost.provisional.empty()) about.push_back(cost.provisional);
    if (at.per_accepted_ci)
      about.push_back("95% interval " + Sig(at.per_accepted_ci->low) + " to " +
                      Sig(at.per_accepted_ci->high));
    if (!about.empty()) line += " (" + Join(about, "; ") + ")";
  }
  return line + ".";
}

// The formulas of a priced cost at a known rate, with H, r and p put in.
void PricedFormulas(const CostFigures& cost, const CostAtRate& at,
                    std::vector<std::string>& formulas) {
  const std::string unit = " " + cost.unit;
  const std::string label = " " + at.label;
  // What a figure drawn from the pass rate rests on, while too few answers are scored.
  const std::string provisional = cost.provisional.empty() ? "" : " (" + cost.provisional + ")";
  const std::string r = Sig(*at.rate);
  const std::string h = Sig(cost.per_hour);
  formulas.push_back("per 1,000 " + at.counted + label + " = H × 1000 / (r × 3600) = " + h +
                     " × 1000 / (" + r + " × 3600) = " + Sig(*at.per_thousand) + unit);
  if (!at.per_accepted) return;
  formulas.push_back("per accepted answer" + label + " = H / (r × 3600 × p) = " + h + " / (" + r +
                     " × 3600 × " + Sig(*cost.pass_rate) + ") = " + Sig(*at.per_accepted) + unit +
                     provisional);
  if (at.per_accepted_ci)
    formulas.push_back("  95% interval = H / (r × 3600 × p_high) to H / (r × 3600 × p_low) = " + h +
                       " / (" + r + " × 3600 × " + Sig(cost.pass_rate_ci->high) + ") to " + h +
                       " / (" + r + " × 3600 × " + Sig(cost.pass_rate_ci->low) +
                       ") = " + Sig(at.per_accepted_ci->low) + " to " +
                       Sig(at.per_accepted_ci->high) + unit);
}

// The formulas of an unpriced cost at a known rate, in instance-seconds, with r and p put in.
void InstanceSecondFormulas(const CostFigures& cost, const CostAtRate& at,
                            std::vector<std::string>& formulas) {
  const std::string label = " " + at.label;
  // What a figure drawn from the pass rate rests on, while too few answers are scored.
  const std::string provisional = cost.provisional.empty() ? "" : " (" + cost.provisional + ")";
  const std::string r = Sig(*at.rate);
  formulas.push_back("instance-seconds per 1,000 " + at.counted + label + " = 1000 / r = 1000 / " +
                     r + " = " + Sig(*at.per_thousand));
  if (!at.per_accepted) return;
  formulas.push_back("instance-seconds per accepted answer" + label + " = 1 / (r × p) = 1 / (" + r +
                     " × " + Sig(*cost.pass_rate) + ") = " + Sig(*at.per_accepted) + provisional);
  if (at.per_accepted_ci)
    formulas.push_back("  95% interval = 1 / (r × p_high) to 1 / (r × p_low) = 1 / (" + r + " × " +
                       Sig(cost.pass_rate_ci->high) + ") to 1 / (" + r + " × " +
                       Sig(cost.pass_rate_ci->low) + ") = " + Sig(at.per_accepted_ci->low) +
                       " to " + Sig(at.per_accepted_ci->high));
}

}  // namespace

CostFigures ComputeCost(const std::optional<store::StoredCost>& price,
                        const store::RunFindings& findings,
                        const quality::QualitySummary& quality) {
  CostFigures cost{.price = price};
  if (price) {
    cost.per_hour = price->price_per_hour * static_cast<double>(price->count);
    cost.unit = price->currency;
  } else {
    cost.per_hour = kSecondsPerHour;  // one instance's seconds in an hour
    cost.unit = "instance-seconds";
  }
  cost.needed = quality.needed;
  const quality::GroupScores* all = quality.groups.empty() ? nullptr : &quality.groups.front();
  if (all && all->answers > 0) {
    cost.pass_rate = all->pass_rate();
    cost.pass_rate_ci = all->pass_rate_ci;
    cost.scored = all->answers;
    cost.accepted = all->passed;
    cost.provisional = quality.ProvisionalLabel();
    if (all->passed == 0)
      cost.pass_rate_note =
          "no scored answer was accepted" +
          (cost.provisional.empty() ? std::string() : " (" + cost.provisional + ")") +
          ": there is no cost per accepted answer";
    else if (!cost.provisional.empty())
      cost.pass_rate_note = cost.provisional +
                            ": the pass rate, and so each cost per accepted answer, may move as "
                            "more scores come in";
    else if (quality.verdict == quality::QualityVerdict::kPending)
      cost.pass_rate_note =
          "condition 2 is still pending: the pass rate may move as more scores come in";
  } else {
    cost.pass_rate_note =
        "pending: the reviewers' scores are not in yet, so the cost per accepted answer is not "
        "known";
  }
  const store::StageFindings* stage = findings.FinalStage();
  for (CostAtRate at : {AtCapacity(stage), AtSteady(stage)}) {
    if (at.rate) {
      const double per_second = *at.rate * kSecondsPerHour;  // completed an hour
      at.per_thousand = cost.per_hour * 1000 / per_second;
      if (cost.pass_rate && *cost.pass_rate > 0) {
        at.per_accepted = cost.per_hour / (per_second * *cost.pass_rate);
        if (cost.pass_rate_ci) {
          const double low = cost.pass_rate_ci->low, high = cost.pass_rate_ci->high;
          at.per_accepted_ci =
              stats::Interval{.low = cost.per_hour / (per_second * high),
                              .high = low > 0 ? cost.per_hour / (per_second * low)
                                              : std::numeric_limits<double>::infinity()};
        }
      }
    }
    cost.rates.push_back(std::move(at));
  }
  return cost;
}

CostText DescribeCost(const CostFigures& cost) {
  CostText text;
  text.facts.push_back(PriceFact(cost));
  if (cost.pass_rate) text.facts.push_back(PassRateFact(cost));
  if (!cost.pass_rate_note.empty())
    text.facts.push_back("Cost per accepted answer: " + cost.pass_rate_note + ".");
  for (const CostAtRate& at : cost.rates) {
    if (!at.rate) {
      text.facts.push_back("Cost " + at.label + ": " + at.basis + ".");
      continue;
    }
    text.facts.push_back(RateFact(cost, at));
    if (cost.price)
      PricedFormulas(cost, at, text.formulas);
    else
      InstanceSecondFormulas(cost, at, text.formulas);
  }
  text.not_claimed =
      "What this does not claim: it is what the hardware that served the test cost (or the "
      "instance-time it took) per completed request and per accepted answer, nothing more. It "
      "claims no staff savings and no time saved, and no accuracy beyond the reviewers' scores of "
      "the sampled answers; the interval covers the pass rate's uncertainty only, not the rate's. "
      "It is information, not a check: it does not change the verdict.";
  return text;
}

json CostJson(const CostFigures& cost) {
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  const auto interval = [](const std::optional<stats::Interval>& i) {
    if (!i) return json(nullptr);
    return json::array({i->low, std::isinf(i->high) ? json(nullptr) : json(i->high)});
  };
  json price = nullptr;
  if (cost.price)
    price = {{"price_per_hour", cost.price->price_per_hour},
             {"per", cost.price->per},
             {"count", cost.price->count},
             {"currency", cost.price->currency},
             {"source", cost.price->source}};
  json rates = json::object();
  for (const CostAtRate& at : cost.rates)
    rates[at.key] = {{"rate_req_s", optional(at.rate)},
                     {"basis", at.basis},
                     {"per_1000_completed", optional(at.per_thousand)},
                     {"per_accepted_answer", optional(at.per_accepted)},
                     {"per_accepted_answer_ci95", interval(at.per_accepted_ci)}};
  const CostText text = DescribeCost(cost);
  return {{"information_only", true},
          {"price", price},
          {"unit", cost.unit},
          {"per_hour", cost.per_hour},
          {"pass_rate", optional(cost.pass_rate)},
          {"pass_rate_ci95", interval(cost.pass_rate_ci)},
          {"scored_answers", cost.scored},
          {"accepted_answers", cost.accepted},
          {"answers_needed", cost.needed},
          {"provisional", cost.provisional},
          {"pass_rate_note", cost.pass_rate_note},
          {"at", rates},
          {"formulas", text.formulas},
          {"not_claimed", text.not_claimed}};
}

}  // namespace stagegate::report

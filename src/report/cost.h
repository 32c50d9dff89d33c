#pragma once

// What an accepted answer cost to serve: the scenario's price of the hardware that served the
// test, the final stage's completed requests per second, and the reviewers' pass rate. It is
// information beside the verdict, never a check: nothing here changes the verdict.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quality/summary.h"
#include "stats/intervals.h"
#include "store/findings.h"

namespace stagegate::report {

/// The cost at one rate of completed requests: the final stage's sustained capacity, or its tested
/// steady load.
struct CostAtRate {
  std::string key;                     // "sustained_capacity" or "steady" (report.json)
  std::string label;                   // "at the sustained capacity", "at the tested steady load"
  std::optional<double> rate;          // completed requests per second (r); empty: not known
  std::string basis;                   // where r comes from, or why it is not known
  std::string counted = "completed";   // what r counts: "answered" (at capacity) or "completed"
  std::optional<double> per_thousand;  // per 1,000 completed requests
  std::optional<double> per_accepted;  // per accepted answer; empty without a pass rate above 0
  /// From the pass rate's 95% interval (a high pass rate gives the low cost). `high` is +infinity
  /// when the interval's pass rate reaches 0.
  std::optional<stats::Interval> per_accepted_ci;
};

/// The cost section of a report. Without a price (no `cost:` section) every figure is in
/// instance-seconds of one instance.
struct CostFigures {
  std::optional<store::StoredCost> price;  // the scenario's cost section
  double per_hour = 0;              // H: price_per_hour x count, or 3600 instance-seconds an hour
  std::string unit;                 // the currency, or "instance-seconds"
  std::optional<double> pass_rate;  // p: the reviewers' pass rate over every scored answer
  std::optional<stats::Interval> pass_rate_ci;  // Wilson, 95%
  int64_t scored = 0, accepted = 0;             // answers
  int64_t needed = 0;  // answers to be scored before the scores decide (min_scored_answers)
  /// "provisional: from 7 of the 40 answers needed" when p rests on fewer answers than are
  /// needed; "" otherwise. Every figure drawn from p carries it.
  std::string provisional;
  std::string pass_rate_note;     // why p is missing, or why it may still move; "" when neither
  std::vector<CostAtRate> rates;  // the sustained capacity, then the steady load
};

/// The figures of a stored run: its scenario's cost section (when there is one), the final
/// stage's capacity and steady phase from its findings, and its quality summary.
CostFigures ComputeCost(const std::optional<store::StoredCost>& price,
                        const store::RunFindings& findings, const quality::QualitySummary& quality);

/// The section as text, shared by the Markdown and HTML writers (each escapes it its own way).
struct CostText {
  std::vector<std::string> facts;     // the price, the pass rate, each rate and its figures
  std::vector<std::string> formulas;  // each figure's formula with the numbers put in
  std::string not_claimed;            // what the figures do not say
};
CostText DescribeCost(const CostFigures& cost);

/// The section as report.json's "cost" (docs/report.md).
nlohmann::json CostJson(const CostFigures& cost);

}  // namespace stagegate::report

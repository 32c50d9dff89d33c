#include "quality/baseline_compare.h"

#include <functional>
#include <set>

#include "base/strings.h"
#include "stats/summary.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

// The difference of `value` over the answers `member` accepts on each side.
Difference DifferenceOf(const std::string& what, const std::vector<ComparedAnswer>& assistant,
                        const std::vector<ComparedAnswer>& baseline,
                        const std::function<std::optional<double>(const ComparedAnswer&)>& value) {
  std::vector<double> a, b;
  for (const ComparedAnswer& answer : assistant)
    if (std::optional<double> v = value(answer)) a.push_back(*v);
  for (const ComparedAnswer& answer : baseline)
    if (std::optional<double> v = value(answer)) b.push_back(*v);
  Difference d{.what = what,
               .assistant_answers = static_cast<int64_t>(a.size()),
               .baseline_answers = static_cast<int64_t>(b.size())};
  const auto mean = [](const std::vector<double>& values) -> std::optional<double> {
    if (values.empty()) return std::nullopt;
    double sum = 0;
    for (double v : values)
      sum += v;
    return sum / static_cast<double>(values.size());
  };
  d.assistant = mean(a);
  d.baseline = mean(b);
  d.difference = stats::BootstrapMeanDiff(a, b, kComparisonResamples, kComparisonSeed);
  return d;
}

std::optional<double> MedianSeconds(const std::vector<ComparedAnswer>& answers) {
  std::vector<double> seconds;
  for (const ComparedAnswer& a : answers)
    if (a.seconds) seconds.push_back(*a.seconds);
  if (seconds.empty()) return std::nullopt;
  return stats::Median(seconds);
}

std::string Signed(double value) {
  return (value > 0 ? "+" : "") + FormatNumber(value, 2);
}

std::string DifferenceText(const Difference& d) {
  if (!d.difference) return d.what + " cannot be compared (no answers on one side)";
  return d.what + " " + Signed(d.difference->estimate) + " (95% bootstrap interval " +
         Signed(d.difference->low) + " to " + Signed(d.difference->high) + "; assistant " +
         FormatNumber(*d.assistant, 2) + ", baseline " + FormatNumber(*d.baseline, 2) + ")";
}

json DifferenceJson(const Difference& d) {
  json out = {{"what", d.what},
              {"assistant_answers", d.assistant_answers},
              {"baseline_answers", d.baseline_answers},
              {"assistant", d.assistant ? json(*d.assistant) : json(nullptr)},
              {"baseline", d.baseline ? json(*d.baseline) : json(nullptr)},
              {"difference", nullptr},
              {"ci95", nullptr}};
  if (d.difference) {
    out["difference"] = d.difference->estimate;
    out["ci95"] = {d.difference->low, d.difference->high};
  }
  return out;
}

}  // namespace

BaselineComparison CompareWithBaseline(const std::string& baseline,
                                       const std::vector<ComparedAnswer>& assistant,
                                       const std::vector<ComparedAnswer>& of_baseline,
                                       const std::vector<std::string>& criteria) {
  BaselineComparison c{.baseline = baseline};
  for (const std::string& criterion : criteria)
    c.criteria.push_back(DifferenceOf(criterion, assistant, of_baseline,
                                      [&](const ComparedAnswer& a) -> std::optional<double> {
                                        auto found = a.mean.find(criterion);
                                        if (found == a.mean.end()) return std::nullopt;
                                        return found->second;
                                      }));
  c.criteria.push_back(DifferenceOf("weighted mean", assistant, of_baseline,
                                    [](const ComparedAnswer& a) { return a.weighted; }));
  c.pass_rate = DifferenceOf("pass rate", assistant, of_baseline,
                             [](const ComparedAnswer& a) { return a.passed ? 1.0 : 0.0; });
  std::set<std::string> categories;
  for (const auto* side : {&assistant, &of_baseline})
    for (const ComparedAnswer& a : *side)
      if (!a.category.empty()) categories.insert(a.category);
  for (const std::string& category : categories)
    c.categories.push_back(DifferenceOf("category " + category, assistant, of_baseline,
                                        [&](const ComparedAnswer& a) -> std::optional<double> {
                                          if (a.category != category) return std::nullopt;
                                          return a.weighted;
                                        }));
  c.assistant_median_s = MedianSeconds(assistant);
  c.baseline_median_s = MedianSeconds(of_baseline);
  return c;
}

json ComparisonToJson(const BaselineComparison& c) {
  json criteria = json::array(), categories = json::array();
  for (const Difference& d : c.criteria)
    criteria.push_back(DifferenceJson(d));
  for (const Difference& d : c.categories)
    categories.push_back(DifferenceJson(d));
  return {
      {"baseline", c.baseline},
      {"criteria", criteria},
      {"pass_rate", DifferenceJson(c.pass_rate)},
      {"categories", categories},
      {"time_to_answer_s",
       {{"assistant_median", c.assistant_median_s ? json(*c.assistant_median_s) : json(nullptr)},
        {"baseline_median", c.baseline_median_s ? json(*c.baseline_median_s) : json(nullptr)},
        {"baseline_times", c.baseline_times.empty() ? json(nullptr) : json(c.baseline_times)}}}};
}

std::vector<std::string> ComparisonLines(const BaselineComparison& c) {
  const Difference& weighted = c.criteria.back();
  std::vector<std::string> lines = {"  assistant against baseline " + c.baseline + " (" +
                                    std::to_string(weighted.assistant_answers) + " assistant and " +
                                    std::to_string(weighted.baseline_answers) +
                                    " baseline answers, the same reviewers, blind):"};
  for (const Difference& d : c.criteria)
    lines.push_back("    " + DifferenceText(d));
  lines.push_back("    " + DifferenceText(c.pass_rate));
  for (const Difference& d : c.categories)
    lines.push_back("    " + DifferenceText(d));
  if (c.assistant_median_s || c.baseline_median_s)
    lines.push_back(
        "    time to an answer (information): assistant median " +
        (c.assistant_median_s ? FormatNumber(*c.assistant_median_s, 2) + " s" : "not measured") +
        ", baseline median " +
        (c.baseline_median_s
             ? FormatNumber(*c.baseline_median_s, c.baseline_times == "recorded" ? 0 : 2) + " s" +
                   (c.baseline_times.empty() ? "" : " (" + c.baseline_times + ")")
             : "not recorded"));
  return lines;
}

}  // namespace stagegate::quality

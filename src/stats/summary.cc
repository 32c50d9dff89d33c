#include "stats/summary.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

#include <nlohmann/json.hpp>

namespace stagegate::stats {
namespace {

// The JSON key of each entry of kPercentiles.
constexpr std::array<const char*, kPercentiles.size()> kPercentileKeys = {
    "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"};

// Neumaier's compensated sum: a plain running sum loses the low digits of each term once the
// sum is large, and latencies are summed by the hundred thousand.
class CompensatedSum {
 public:
  void Add(double term) {
    const double next = sum_ + term;
    compensation_ += std::abs(sum_) >= std::abs(term) ? (sum_ - next) + term : (term - next) + sum_;
    sum_ = next;
  }
  double Total() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace

double Summary::Percentile(double p) const {
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    if (kPercentiles[i] == p) return percentiles[i];
  }
  assert(false && "Summary::Percentile: p is not one of kPercentiles");
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json Summary::ToJson() const {
  nlohmann::json json = {{"count", count}};
  if (count == 0) return json;
  json["min"] = min;
  json["max"] = max;
  json["mean"] = mean;
  json["std"] = std;
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    json[kPercentileKeys[i]] = percentiles[i];
  }
  return json;
}

namespace {

// Where percentile `p` falls among n sorted values: the two ranks and the weight between them.
// numpy computes the rank as (p / 100) * (n - 1), in that order; so do we, to agree with it.
struct Rank {
  size_t lo, hi;
  double t;
};

Rank RankOf(double p, size_t n) {
  const double rank = (p / 100) * static_cast<double>(n - 1);
  const double below = std::floor(rank);
  const size_t lo = static_cast<size_t>(below);
  return {lo, std::min(lo + 1, n - 1), rank - below};
}

// numpy's _lerp: interpolating from the nearer neighbour keeps the result within [a, b] and
// rounds as numpy does.
double Lerp(double a, double b, double t) {
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1 - t);
}

// Puts at each of `ranks` (ascending, within [first, last)) the value a full sort would put
// there, each range partitioned around its middle rank and the halves done in turn: about
// n log(ranks) work, where selecting the ranks one after another in the whole range costs
// about n per rank.
void SelectRanks(std::vector<double>& values, size_t first, size_t last,
                 std::span<const size_t> ranks) {
  if (ranks.empty()) return;
  const size_t middle = ranks.size() / 2, rank = ranks[middle];
  const auto at = [&values](size_t i) { return values.begin() + static_cast<std::ptrdiff_t>(i); };
  std::nth_element(at(first), at(rank), at(last));
  SelectRanks(values, first, rank, ranks.first(middle));
  SelectRanks(values, rank + 1, last, ranks.subspan(middle + 1));
}

}  // namespace

double PercentileOfSorted(std::span<const double> sorted, double p) {
  assert(!sorted.empty());
  assert(p >= 0 && p <= 100);
  assert(std::is_sorted(sorted.begin(), sorted.end()));
  const Rank rank = RankOf(p, sorted.size());
  return Lerp(sorted[rank.lo], sorted[rank.hi], rank.t);
}

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, 50);
}

Summary Summarize(std::vector<double> values) {
  assert(std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }));
  Summary summary;
  if (values.empty()) return summary;
  // Only the ranks the percentiles read need their sorted values: select them, instead of
  // sorting everything (the inter-token gaps of a run can be millions of values).
  std::vector<size_t> ranks;
  for (double p : kPercentiles) {
    const Rank rank = RankOf(p, values.size());
    ranks.push_back(rank.lo);
    ranks.push_back(rank.hi);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  SelectRanks(values, 0, values.size(), ranks);

  const double n = static_cast<double>(values.size());
  summary.count = static_cast<int64_t>(values.size());
  const auto [min, max] = std::minmax_element(values.begin(), values.end());
  summary.min = *min;
  summary.max = *max;
  CompensatedSum sum;
  for (double value : values) {
    sum.Add(value);
  }
  // Rounding can push the mean of constant data just outside [min, max]; it cannot be.
  summary.mean = std::clamp(sum.Total() / n, summary.min, summary.max);

  // The second pass: deviations from the accurate mean, rather than E[x^2] - E[x]^2, which
  // cancels away the spread of values far from zero.
  CompensatedSum squares;
  for (double value : values) {
    squares.Add((value - summary.mean) * (value - summary.mean));
  }
  summary.std = std::sqrt(squares.Total() / n);

  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    const Rank rank = RankOf(kPercentiles[i], values.size());
    summary.percentiles[i] = Lerp(values[rank.lo], values[rank.hi], rank.t);
  }
  return summary;
}

}  // namespace stagegate::stats

#include "stats/recovery.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <span>

#include "base/strings.h"
#include "stats/summary.h"

namespace stagegate::stats {
namespace {

using Field = std::optional<double> RecoverySample::*;

// The values one metric takes in the current window, kept as counts over the sorted distinct
// values of the whole watch in a Fenwick tree: a request enters or leaves the window, and the
// window's k-th smallest value is found, in O(log n). Copying and sorting the window's values
// at every step instead would cost O(n w log w): at 1,000 req/s, a 5 s window and 100k requests,
// billions of operations.
class WindowValues {
 public:
  WindowValues(std::span<const RecoverySample> samples, Field field) : field_(field) {
    for (const RecoverySample& sample : samples) {
      if (sample.*field_) values_.push_back(*(sample.*field_));
    }
    std::sort(values_.begin(), values_.end());
    values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
    tree_.assign(values_.size() + 1, 0);
  }

  void Add(const RecoverySample& sample) { Update(sample, 1); }
  void Remove(const RecoverySample& sample) { Update(sample, -1); }
  size_t Count() const { return count_; }

  // The k-th smallest value in the window, from 0; k < Count().
  double KthSmallest(size_t k) const {
    assert(k < count_);
    // Descends the tree from its top power of two: `position` ends as the number of distinct
    // values that together hold at most k window values, which is the index of the k-th.
    size_t position = 0;
    int64_t remaining = static_cast<int64_t>(k) + 1;
    for (size_t step = std::bit_floor(values_.size()); step > 0; step /= 2) {
      if (position + step < tree_.size() && tree_[position + step] < remaining) {
        position += step;
        remaining -= tree_[position];
      }
    }
    return values_[position];
  }

 private:
  void Update(const RecoverySample& sample, int64_t delta) {
    if (!(sample.*field_)) return;
    const auto found = std::lower_bound(values_.begin(), values_.end(), *(sample.*field_));
    assert(found != values_.end() && *found == *(sample.*field_));
    for (size_t i = static_cast<size_t>(found - values_.begin()) + 1; i < tree_.size();
         i += i & (~i + 1)) {
      tree_[i] += delta;
    }
    if (delta > 0) {
      ++count_;
    } else {
      --count_;
    }
  }

  Field field_;
  std::vector<double> values_;  // sorted, distinct
  std::vector<int64_t> tree_;   // Fenwick tree over values_, from index 1
  size_t count_ = 0;
};

// The p95 of `field` over the requests of `window` that have it, by copying and sorting them:
// used for the one window reported, and for the rare window whose threshold WithinMax cannot
// decide from the tree alone.
std::optional<double> P95Of(std::span<const RecoverySample> window, Field field) {
  std::vector<double> values;
  for (const RecoverySample& sample : window) {
    if (sample.*field) values.push_back(*(sample.*field));
  }
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, 95);
}

// Whether the window's p95 of one metric is within `max` (true when there is no maximum).
// PercentileOfSorted interpolates between the values at the two ranks around p95 and stays
// within them, so the tree decides the threshold unless it falls between those two values; only
// then is the exact p95 computed from a copy of the window, at O(w log w). With measured
// latencies that is a rare window; data built so that every window straddles the threshold
// this way would make the search O(n w log w) again.
bool WithinMax(const WindowValues& values, std::span<const RecoverySample> window, Field field,
               std::optional<double> max) {
  if (!max) return true;
  const size_t n = values.Count();
  if (n == 0) return false;
  // The ranks as PercentileOfSorted computes them (numpy's arithmetic, in its order).
  const size_t below = static_cast<size_t>(std::floor((95.0 / 100) * static_cast<double>(n - 1)));
  const size_t above = std::min(below + 1, n - 1);
  if (values.KthSmallest(above) <= *max) return true;
  if (values.KthSmallest(below) > *max) return false;
  return *P95Of(window, field) <= *max;
}

std::string Milliseconds(const char* name, double ms) {
  return std::string(name) + " p95 " + FormatNumber(ms, 1) + " ms";
}

// "TTFT p95 420 ms, e2e p95 2100 ms", leaving out a metric the window has no values for.
std::string Percentiles(const RecoveryFinding& finding) {
  std::vector<std::string> parts;
  if (finding.ttft_p95_ms) parts.push_back(Milliseconds("TTFT", *finding.ttft_p95_ms));
  if (finding.e2e_p95_ms) parts.push_back(Milliseconds("e2e", *finding.e2e_p95_ms));
  return Join(parts, ", ");
}

}  // namespace

RecoveryFinding FindRecovery(std::vector<RecoverySample> samples,
                             const RecoveryCriteria& criteria) {
  std::erase_if(samples, [](const RecoverySample& sample) { return sample.end_s < 0; });
  assert(std::all_of(samples.begin(), samples.end(),
                     [](const RecoverySample& sample) { return std::isfinite(sample.end_s); }));
  std::sort(samples.begin(), samples.end(),
            [](const RecoverySample& a, const RecoverySample& b) { return a.end_s < b.end_s; });
  WindowValues ttft(samples, &RecoverySample::ttft_ms);
  WindowValues e2e(samples, &RecoverySample::e2e_ms);

  RecoveryFinding finding;
  // The window is samples[first, last): two pointers, each passing every sample once.
  size_t first = 0, last = 0, not_ok = 0;
  const auto window = [&] { return std::span(samples).subspan(first, last - first); };
  while (last < samples.size()) {
    const double end = samples[last].end_s;
    // Requests ending together make one window, checked once.
    for (; last < samples.size() && samples[last].end_s == end; ++last) {
      ttft.Add(samples[last]);
      e2e.Add(samples[last]);
      not_ok += samples[last].ok ? 0 : 1;
    }
    for (; first < last && samples[first].end_s <= end - criteria.window_s; ++first) {
      ttft.Remove(samples[first]);
      e2e.Remove(samples[first]);
      not_ok -= samples[first].ok ? 0 : 1;
    }
    ++finding.windows_checked;
    const bool meets =
        static_cast<int64_t>(last - first) >= criteria.min_requests && not_ok == 0 &&
        WithinMax(ttft, window(), &RecoverySample::ttft_ms, criteria.max_ttft_p95_ms) &&
        WithinMax(e2e, window(), &RecoverySample::e2e_ms, criteria.max_e2e_p95_ms);
    if (meets) {
      finding.recovered_after_s = end;
      break;
    }
  }
  if (finding.windows_checked > 0) {
    finding.ttft_p95_ms = P95Of(window(), &RecoverySample::ttft_ms);
    finding.e2e_p95_ms = P95Of(window(), &RecoverySample::e2e_ms);
  }
  return finding;
}

std::string DescribeRecovery(const RecoveryFinding& finding, const RecoveryCriteria& criteria,
                             double observed_s) {
  const std::string percentiles = Percentiles(finding);
  if (finding.recovered_after_s) {
    return "recovered " + FormatNumber(*finding.recovered_after_s) +
           " s after the overload ended (" + percentiles + (percentiles.empty() ? "" : " ") +
           "over a " + FormatNumber(criteria.window_s) + " s window)";
  }
  std::string text = "did not recover within " + FormatNumber(observed_s) + " s (";
  if (finding.windows_checked == 0) return text + "no request ended after the overload)";
  if (percentiles.empty()) return text + "last window: no TTFT or e2e values)";
  return text + "last window: " + percentiles + ")";
}

}  // namespace stagegate::stats

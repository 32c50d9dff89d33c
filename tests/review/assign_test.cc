#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "review/export.h"

namespace stagegate::review {
namespace {

TEST_CASE("AssignReviewers gives each answer distinct reviewers and balances their load",
          "[review]") {
  for (const auto& [answers, reviewers, per_item, calibration] :
       std::vector<std::tuple<size_t, int, int, int>>{
           {48, 3, 2, 4}, {10, 2, 2, 0}, {7, 5, 3, 2}, {1, 1, 1, 0}, {13, 4, 1, 13}}) {
    INFO(answers << " answers, " << reviewers << " reviewers, " << per_item << " each, "
                 << calibration << " calibration");
    std::mt19937_64 random(answers * 31 + reviewers);
    const std::vector<Assignment> out =
        AssignReviewers(answers, reviewers, per_item, calibration, random);
    std::map<size_t, std::set<int>> of_answer;
    std::map<int, int64_t> load;
    int64_t calibrated_rows = 0;
    for (const Assignment& a : out) {
      CHECK(of_answer[a.answer].insert(a.reviewer).second);  // never the same reviewer twice
      ++load[a.reviewer];
      calibrated_rows += a.calibration;
    }
    CHECK(of_answer.size() == answers);
    int calibrated = 0;
    for (const auto& [answer, who] : of_answer) {
      const bool all = static_cast<int>(who.size()) == reviewers;
      calibrated += all && reviewers != per_item;
      CHECK((static_cast<int>(who.size()) == per_item || all));
    }
    if (reviewers != per_item) CHECK(calibrated == calibration);
    CHECK(calibrated_rows == static_cast<int64_t>(calibration) * reviewers);
    int64_t lo = INT64_MAX, hi = 0;
    for (int r = 0; r < reviewers; ++r) {
      lo = std::min(lo, load[r]);
      hi = std::max(hi, load[r]);
    }
    CHECK(hi - lo <= 1);
  }
}

TEST_CASE("ReviewerName counts from r1", "[review]") {
  CHECK(ReviewerName(0) == "r1");
  CHECK(ReviewerName(11) == "r12");
}

}  // namespace
}  // namespace stagegate::review

#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/diagnostics.h"

namespace stagegate::manifest {

struct Criterion {
  std::string id;
  SourcePos pos;
  std::string question;
  double weight = 1;
  bool hard = false;
  int64_t floor = 0;                     // hard criteria: the lowest passing level
  std::map<int64_t, std::string> scale;  // level -> anchor text; at least two levels

  int64_t min_level() const { return scale.empty() ? 0 : scale.begin()->first; }
  int64_t max_level() const { return scale.empty() ? 0 : scale.rbegin()->first; }
};

struct PassRule {
  std::optional<double> min_weighted_mean;
  std::optional<double> min_each;
};

struct Rubric {
  std::string file;
  std::string id;
  std::string title;
  std::vector<Criterion> criteria;
  PassRule pass_rule;

  const Criterion* Find(const std::string& id) const;
  std::vector<std::string> CriterionIds() const;
};

/// Loads and checks a rubric file. Every problem goes to `diagnostics`; nullopt when there was any.
std::optional<Rubric> LoadRubric(const std::string& path, Diagnostics& diagnostics);

/// As LoadRubric, but returns what could be read even when there were problems (nullopt only when
/// the file could not be read or parsed).
std::optional<Rubric> ReadRubric(const std::string& path, Diagnostics& diagnostics);

}  // namespace stagegate::manifest

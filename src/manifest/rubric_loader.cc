// Reads a rubric file into the Rubric model; see docs/formats.md.

#include <map>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/rubric.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

namespace {

std::map<int64_t, std::string> ReadScale(const YamlFile& file, const YAML::Node& node,
                                         const std::string& criterion) {
  std::map<int64_t, std::string> scale;
  if (!node.IsMap()) {
    file.Error(node, "criterion '" + criterion +
                         "': 'scale' must map each anchored level to its anchor text, got " +
                         Describe(node));
    return scale;
  }
  for (const auto& entry : node) {
    std::optional<int64_t> level =
        ReadInteger(file, entry.first, "a scale level", {.min = 0, .max = 100});
    std::optional<std::string> anchor = ReadString(file, entry.second, "the anchor of a level");
    if (!level || !anchor) continue;
    if (Trim(*anchor).empty()) {
      file.Error(entry.second, "criterion '" + criterion + "': level " + std::to_string(*level) +
                                   " has an empty anchor");
      continue;
    }
    if (!scale.emplace(*level, *anchor).second)
      file.Error(entry.first, "criterion '" + criterion + "': level " + std::to_string(*level) +
                                  " is anchored twice");
  }
  return scale;
}

Criterion ReadCriterion(const YamlFile& file, const YAML::Node& node) {
  MapReader map(file, node, "criterion");
  Criterion criterion;
  criterion.pos = map.pos();
  criterion.id = map.String("id", Need::kRequired).value_or("");
  criterion.question = map.String("question", Need::kRequired).value_or("");
  criterion.weight = map.Number("weight", Need::kOptional, kNonNegative).value_or(1);
  criterion.hard = map.Bool("hard").value_or(false);
  YAML::Node floor = map.Get("floor");
  if (floor.IsDefined()) {
    if (!criterion.hard)
      file.Error(floor, "'floor' applies only to a hard criterion ('hard: true')");
    criterion.floor = ReadInteger(file, floor, "'floor'", kNonNegative).value_or(0);
  }
  YAML::Node scale = map.Get("scale");
  if (!scale.IsDefined()) {
    if (map.valid())
      file.Error(criterion.pos,
                 "criterion '" + criterion.id +
                     "' has no anchored levels: give 'scale' with an anchor text for "
                     "at least its lowest and highest level");
  } else {
    criterion.scale = ReadScale(file, scale, criterion.id);
    if (criterion.scale.size() == 1)
      file.Error(scale,
                 "criterion '" + criterion.id + "': a scale needs at least two anchored levels");
  }
  map.Finish();
  if (criterion.hard && floor.IsDefined() && criterion.scale.size() >= 2 &&
      (criterion.floor < criterion.min_level() || criterion.floor > criterion.max_level()))
    file.Error(floor, "criterion '" + criterion.id + "': 'floor' " +
                          std::to_string(criterion.floor) + " is outside its scale (" +
                          std::to_string(criterion.min_level()) + " to " +
                          std::to_string(criterion.max_level()) + ")");
  if (criterion.hard && !floor.IsDefined()) criterion.floor = criterion.max_level();
  return criterion;
}

}  // namespace

const Criterion* Rubric::Find(const std::string& criterion_id) const {
  for (const Criterion& criterion : criteria)
    if (criterion.id == criterion_id) return &criterion;
  return nullptr;
}

std::vector<std::string> Rubric::CriterionIds() const {
  std::vector<std::string> ids;
  for (const Criterion& criterion : criteria)
    ids.push_back(criterion.id);
  return ids;
}

std::optional<Rubric> ReadRubric(const std::string& path, Diagnostics& diagnostics) {
  Result<std::string> text = ReadFile(path, kMaxManifestBytes);
  if (!text.ok()) {
    diagnostics.Error({path, 0, 0}, ReadFailure(text.status(), path));
    return std::nullopt;
  }
  YamlFile file(path, diagnostics);
  std::optional<YAML::Node> root = file.Parse(*text);
  if (!root) return std::nullopt;
  Rubric rubric;
  rubric.file = path;
  MapReader map(file, *root, "rubric");
  if (!map.valid()) return std::nullopt;
  rubric.id = map.String("id", Need::kRequired).value_or("");
  rubric.title = map.String("title", Need::kRequired).value_or("");
  YAML::Node criteria = map.Get("criteria", Need::kRequired);
  if (criteria.IsDefined()) {
    if (!criteria.IsSequence() || criteria.size() == 0)
      file.Error(criteria, "'criteria' must be a non-empty list, got " + Describe(criteria));
    for (const YAML::Node& item : criteria.IsSequence() ? criteria : YAML::Node()) {
      Criterion criterion = ReadCriterion(file, item);
      if (const Criterion* first = rubric.Find(criterion.id); first && !criterion.id.empty())
        file.Error(criterion.pos, "duplicate criterion '" + criterion.id + "' (first at line " +
                                      std::to_string(first->pos.line) + ")");
      rubric.criteria.push_back(std::move(criterion));
    }
  }
  YAML::Node pass = map.Get("pass_rule");
  if (pass.IsDefined()) {
    MapReader rule(file, pass, "pass_rule");
    rubric.pass_rule.min_weighted_mean = rule.Number("min_weighted_mean");
    rubric.pass_rule.min_each = rule.Number("min_each");
    rule.Finish();
  }
  map.Finish();
  bool any_weight = false;
  for (const Criterion& criterion : rubric.criteria)
    any_weight |= criterion.weight > 0;
  if (!rubric.criteria.empty() && !any_weight)
    file.Error(criteria, "every criterion has weight 0: at least one must count towards the mean");
  return rubric;
}

std::optional<Rubric> LoadRubric(const std::string& path, Diagnostics& diagnostics) {
  const size_t errors_before = diagnostics.size();
  std::optional<Rubric> rubric = ReadRubric(path, diagnostics);
  if (diagnostics.size() != errors_before) return std::nullopt;
  return rubric;
}

}  // namespace stagegate::manifest

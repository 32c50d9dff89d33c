#include "manifest/bundle.h"

#include <algorithm>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

namespace {

void CheckPersona(Diagnostics& diagnostics, const Corpus& corpus, const std::optional<Ref>& ref,
                  const std::string& what) {
  if (!ref || corpus.FindPersona(ref->name)) return;
  diagnostics.Error(ref->pos, what + ": persona '" + ref->name + "' is not defined in the corpus" +
                                  DidYouMean(ref->name, corpus.PersonaNames()));
}

void CheckTask(Diagnostics& diagnostics, const Corpus& corpus, const std::optional<Ref>& ref,
               const std::string& what) {
  if (!ref || corpus.FindTask(ref->name)) return;
  diagnostics.Error(ref->pos, what + ": task '" + ref->name + "' is not defined in the corpus" +
                                  DidYouMean(ref->name, corpus.TaskIds()));
}

// A threshold scope must select a task of the corpus: a misspelt category would otherwise judge
// nothing, and stay pending for ever.
void CheckScopes(Diagnostics& diagnostics, const Scenario& scenario, const Corpus& corpus) {
  std::vector<std::string> categories, tags;
  for (const Task& task : corpus.tasks) {
    categories.push_back(task.category);
    tags.insert(tags.end(), task.tags.begin(), task.tags.end());
  }
  for (const ThresholdScope& scope : scenario.thresholds.scopes) {
    if (scope.category.empty() == scope.tag.empty()) continue;  // said where it was read
    const bool by_tag = !scope.tag.empty();
    const std::string& wanted = by_tag ? scope.tag : scope.category;
    const std::vector<std::string>& known = by_tag ? tags : categories;
    if (std::find(known.begin(), known.end(), wanted) != known.end()) continue;
    diagnostics.Error(scope.pos, "threshold scope '" + scope.name +
                                     "': no task of the corpus has " +
                                     (by_tag ? "tag '" : "category '") + wanted + "'" +
                                     DidYouMean(wanted, known));
  }
}

void CheckAgainstCorpus(Diagnostics& diagnostics, const Scenario& scenario, const Corpus& corpus) {
  CheckScopes(diagnostics, scenario, corpus);
  for (const AccessDenialProbe& probe : scenario.faults.access_denial) {
    const std::string what = "probe '" + probe.name + "'";
    CheckPersona(diagnostics, corpus, probe.persona, what);
    CheckPersona(diagnostics, corpus, probe.positive_control, what);
    CheckTask(diagnostics, corpus, probe.task, what);
  }
  for (const ToolOutageProbe& probe : scenario.faults.tool_outage) {
    const std::string what = "probe '" + probe.name + "'";
    CheckPersona(diagnostics, corpus, probe.persona, what);
    CheckTask(diagnostics, corpus, probe.task, what);
  }
  for (const Stage& stage : scenario.stages) {
    if (stage.tools.value_or(false) && corpus.tools.empty())
      diagnostics.Error(
          stage.pos,
          "stage '" + stage.name + "' sends tool definitions, but the corpus has no tools.yaml");
  }
}

void CheckAgainstRubric(Diagnostics& diagnostics, const Scenario& scenario, const Rubric& rubric,
                        const Corpus* corpus) {
  const std::vector<std::string> ids = rubric.CriterionIds();
  for (const auto& [ref, floor] : scenario.quality.criterion_floors) {
    const Criterion* criterion = rubric.Find(ref.name);
    if (!criterion) {
      diagnostics.Error(ref.pos, "criterion '" + ref.name + "' is not in rubric '" + rubric.id +
                                     "'" + DidYouMean(ref.name, ids));
    } else if (criterion->scale.size() >= 2 &&
               (floor < static_cast<double>(criterion->min_level()) ||
                floor > static_cast<double>(criterion->max_level()))) {
      diagnostics.Error(ref.pos, "the floor of '" + ref.name + "' must be between " +
                                     std::to_string(criterion->min_level()) + " and " +
                                     std::to_string(criterion->max_level()) + ", got " +
                                     FormatNumber(floor));
    }
  }
  for (const Ref& ref : scenario.quality.hard_criteria) {
    const Criterion* criterion = rubric.Find(ref.name);
    if (!criterion) {
      diagnostics.Error(ref.pos, "criterion '" + ref.name + "' is not in rubric '" + rubric.id +
                                     "'" + DidYouMean(ref.name, ids));
    } else if (!criterion->hard) {
      diagnostics.Error(ref.pos,
                        "criterion '" + ref.name +
                            "' is listed as hard, but the rubric does not mark it 'hard: true'");
    }
  }
  if (!corpus) return;
  for (const Task& task : corpus->tasks) {
    if (task.rubric && task.rubric->name != rubric.id)
      diagnostics.Error(task.rubric->pos, "task '" + task.id + "': rubric '" + task.rubric->name +
                                              "' is not defined (the scenario's rubric is '" +
                                              rubric.id + "')");
  }
}

// Each baseline's recorded answers, checked against the corpus; an endpoint baseline needs one.
void ReadBaselineAnswers(Diagnostics& diagnostics, Bundle& bundle) {
  for (const Baseline& baseline : bundle.scenario.baselines) {
    if (baseline.answers.empty() && !baseline.endpoint) continue;  // said where it was read
    if (!bundle.corpus) {
      diagnostics.Error(baseline.pos,
                        "baseline '" + baseline.name + "': " +
                            (baseline.endpoint ? "an endpoint is asked the corpus's tasks"
                                               : "recorded answers need the corpus") +
                            ": the scenario needs a 'corpus'");
      continue;
    }
    if (baseline.endpoint) continue;
    Result<std::string> text = ReadFile(baseline.answers.resolved, kMaxManifestBytes + 3);
    if (!text.ok()) {
      diagnostics.Error(baseline.answers.pos,
                        "baseline '" + baseline.name + "': answers '" + baseline.answers.written +
                            "': " + ReadFailure(text.status(), baseline.answers.resolved));
      continue;
    }
    bundle.baseline_answers.emplace_back(
        baseline.name,
        ReadRecordedAnswers(baseline.answers.resolved, *text, *bundle.corpus, diagnostics));
  }
}

// Each quality.not_worse_than names a baseline of the scenario and a criterion of the rubric (or
// weighted_mean).
void CheckNotWorseThan(Diagnostics& diagnostics, const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  std::vector<std::string> names;
  for (const Baseline& b : s.baselines)
    names.push_back(b.name);
  for (const NotWorseThan& rule : s.quality.not_worse_than) {
    if (!rule.baseline.name.empty() &&
        std::find(names.begin(), names.end(), rule.baseline.name) == names.end())
      diagnostics.Error(rule.baseline.pos,
                        "not_worse_than: '" + rule.baseline.name +
                            "' is not a baseline of this scenario" +
                            (names.empty() ? " (it has no baselines:)"
                                           : " (its baselines: " + Join(names, ", ") + ")"));
    if (!bundle.rubric || rule.criterion.name.empty() || rule.criterion.name == "weighted_mean")
      continue;
    std::vector<std::string> ids;
    for (const Criterion& c : bundle.rubric->criteria)
      ids.push_back(c.id);
    if (std::find(ids.begin(), ids.end(), rule.criterion.name) == ids.end())
      diagnostics.Error(rule.criterion.pos, "not_worse_than: '" + rule.criterion.name +
                                                "' is not a criterion of the rubric (" +
                                                Join(ids, ", ") + ", or weighted_mean)");
  }
}

}  // namespace

std::optional<Bundle> LoadBundle(const std::string& path, Diagnostics& diagnostics) {
  const size_t errors_before = diagnostics.size();
  std::optional<Scenario> scenario = ReadScenario(path, diagnostics);
  if (!scenario) return std::nullopt;
  Bundle bundle{.scenario = std::move(*scenario)};
  const Scenario& s = bundle.scenario;
  if (!s.corpus.empty()) {
    if (!IsDirectory(s.corpus.resolved)) {
      diagnostics.Error(s.corpus.pos, "corpus '" + s.corpus.written + "' not found: no folder " +
                                          s.corpus.resolved);
    } else {
      bundle.corpus = ReadCorpus(s.corpus.resolved, diagnostics);
    }
  }
  if (!s.rubric.empty()) {
    if (!IsRegularFile(s.rubric.resolved)) {
      diagnostics.Error(s.rubric.pos, "rubric '" + s.rubric.written + "' not found: no file " +
                                          s.rubric.resolved);
    } else {
      bundle.rubric = ReadRubric(s.rubric.resolved, diagnostics);
    }
  }
  if (bundle.corpus) CheckAgainstCorpus(diagnostics, s, *bundle.corpus);
  ReadBaselineAnswers(diagnostics, bundle);
  CheckNotWorseThan(diagnostics, bundle);
  if (bundle.rubric)
    CheckAgainstRubric(diagnostics, s, *bundle.rubric, bundle.corpus ? &*bundle.corpus : nullptr);
  if (diagnostics.size() != errors_before) return std::nullopt;
  return bundle;
}

}  // namespace stagegate::manifest

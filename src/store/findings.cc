#include "store/findings.h"

#include <initializer_list>

#include <nlohmann/json.hpp>

namespace stagegate::store {
namespace {

using json = nlohmann::json;

// Reads the fields of one JSON object at `path`. A missing field or an explicit null is absent;
// a field of the wrong type is absent too, and noted in `problems` with its path.
class Fields {
 public:
  Fields(const json& object, std::string path, std::vector<std::string>& problems)
      : object_(object), path_(std::move(path)), problems_(problems) {}

  // Notes each of `keys` that the object does not have at all (null is there: not measured).
  // What the writer always writes is expected, so that a field renamed on one side shows up as
  // a problem instead of as a value quietly not measured.
  void Expect(std::initializer_list<const char*> keys) const {
    for (const char* key : keys)
      if (!object_.contains(key)) problems_.push_back(Path(key) + " is missing");
  }

  bool Has(const char* key) const { return object_.contains(key); }
  std::optional<double> Number(const char* key) const {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (v->is_number()) return v->get<double>();
    return Wrong(key, "a number");
  }
  std::optional<int64_t> Integer(const char* key) const {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) return v->get<int64_t>();
    if (v->is_number_float()) return static_cast<int64_t>(v->get<double>());
    return Wrong(key, "an integer");
  }
  std::optional<bool> Bool(const char* key) const {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    return Wrong(key, "true or false");
  }
  std::string Text(const char* key) const {
    const json* v = Find(key);
    if (!v) return "";
    if (v->is_string()) return v->get<std::string>();
    Wrong(key, "text");
    return "";
  }
  std::vector<std::string> Texts(const char* key) const {
    std::vector<std::string> out;
    const json* v = Find(key);
    if (!v) return out;
    if (!v->is_array()) return Wrong(key, "a list"), out;
    for (const json& item : *v)
      if (item.is_string()) out.push_back(item.get<std::string>());
    return out;
  }
  // A nested object, or null when absent or not an object (noted).
  const json* Object(const char* key) const {
    const json* v = Find(key);
    if (!v) return nullptr;
    if (v->is_object()) return v;
    Wrong(key, "an object");
    return nullptr;
  }
  // A nested array's objects, each with its path.
  std::vector<std::pair<const json*, std::string>> Objects(const char* key) const {
    std::vector<std::pair<const json*, std::string>> out;
    const json* v = Find(key);
    if (!v) return out;
    if (!v->is_array()) return Wrong(key, "a list"), out;
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string path = Path(key) + "[" + std::to_string(i) + "]";
      if ((*v)[i].is_object())
        out.push_back({&(*v)[i], path});
      else
        problems_.push_back(path + " is not an object");
    }
    return out;
  }
  Fields Nested(const json& object, const char* key) const {
    return Fields(object, Path(key), problems_);
  }
  Fields At(const json& object, std::string path) const {
    return Fields(object, std::move(path), problems_);
  }

 private:
  const json* Find(const char* key) const {
    auto found = object_.find(key);
    if (found == object_.end() || found->is_null()) return nullptr;
    return &*found;
  }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  std::nullopt_t Wrong(const char* key, const char* expected) const {
    problems_.push_back(Path(key) + " is not " + expected);
    return std::nullopt;
  }

  const json& object_;
  std::string path_;
  std::vector<std::string>& problems_;
};

Distribution ReadDistribution(const Fields& f, const json& object) {
  Distribution d;
  d.count = f.Integer("count").value_or(0);
  for (const auto& [key, value] : object.items())
    if (key != "count" && value.is_number()) d.stats[key] = value.get<double>();
  return d;
}

std::vector<ThresholdResult> ReadChecks(const Fields& f, const char* key) {
  std::vector<ThresholdResult> checks;
  for (const auto& [object, path] : f.Objects(key)) {
    const Fields c = f.At(*object, path);
    c.Expect({"check", "measured", "limit", "passed"});  // a scope's check adds its three
    checks.push_back({.check = c.Text("check"),
                      .measured = c.Number("measured"),
                      .limit = c.Number("limit"),
                      .passed = c.Bool("passed").value_or(false),
                      .scope = c.Text("scope"),
                      .requests = c.Integer("requests").value_or(0),
                      .pending = c.Bool("pending").value_or(false)});
  }
  return checks;
}

stats::RateWindow ReadRateWindow(const Fields& f) {
  f.Expect({"counts", "from_s", "to_s", "arrived", "completed", "answered", "met_slos",
            "output_tokens"});
  return {.arrivals = f.Text("counts") != "sends",
          .from_s = f.Number("from_s").value_or(0),
          .to_s = f.Number("to_s").value_or(0),
          .arrived = f.Integer("arrived").value_or(0),
          .completed = f.Integer("completed").value_or(0),
          .answered = f.Integer("answered").value_or(0),
          .met_slos = f.Integer("met_slos").value_or(0),
          .output_tokens = f.Number("output_tokens").value_or(0)};
}

StepFindings ReadStep(const Fields& f) {
  f.Expect({"phase", "level", "level_unit", "requests", "throughput", "metrics"});
  StepFindings s{.phase = f.Text("phase"),
                 .phase_id = f.Integer("phase_id"),
                 .level = f.Number("level"),
                 .level_unit = f.Text("level_unit"),
                 .interrupted = f.Bool("interrupted").value_or(false)};
  if (const json* requests = f.Object("requests"))
    for (const auto& [key, value] : requests->items())
      if (value.is_number_integer()) s.requests[key] = value.get<int64_t>();
  if (const json* throughput = f.Object("throughput"))
    for (const auto& [key, value] : throughput->items())
      if (value.is_number()) s.throughput[key] = value.get<double>();
  if (const json* metrics = f.Object("metrics")) {
    const Fields m = f.Nested(*metrics, "metrics");
    for (const auto& [key, value] : metrics->items())
      if (const json* summary = m.Object(key.c_str()))
        s.metrics[key] = ReadDistribution(m.Nested(*summary, key.c_str()), *summary);
  }
  s.checks = ReadChecks(f, "checks");
  s.passed = f.Bool("passed");
  if (f.Has("client_warnings")) s.client_warnings = f.Texts("client_warnings");
  if (const json* j = f.Object("judgement")) {
    const Fields g = f.Nested(*j, "judgement");
    s.judgement = LevelJudgementFindings{.verdict = g.Text("verdict"),
                                         .reason = g.Text("reason"),
                                         .completed_rate = g.Number("completed_rate")};
    if (const json* w = g.Object("rates"))
      s.judgement->rates = ReadRateWindow(g.Nested(*w, "rates"));
  }
  if (const json* j = f.Object("sessions")) {
    const Fields g = f.Nested(*j, "sessions");
    g.Expect({"started", "completed", "turns"});
    s.sessions = SessionFindings{.started = g.Integer("started").value_or(0),
                                 .completed = g.Integer("completed").value_or(0)};
    for (const auto& [object, path] : g.Objects("turns")) {
      const Fields t = g.At(*object, path);
      t.Expect({"turn", "sent", "completed", "ttft_ms", "e2e_ms", "input_tokens"});
      TurnFindings turn{.turn = t.Integer("turn").value_or(0),
                        .sent = t.Integer("sent").value_or(0),
                        .completed = t.Integer("completed").value_or(0)};
      for (auto [key, out] :
           {std::pair{"ttft_ms", &turn.ttft_ms}, std::pair{"e2e_ms", &turn.e2e_ms},
            std::pair{"input_tokens", &turn.input_tokens}})
        if (const json* summary = t.Object(key))
          *out = ReadDistribution(t.Nested(*summary, key), *summary);
      s.sessions->turns.push_back(std::move(turn));
    }
  }
  return s;
}

StageFindings ReadStage(const Fields& f) {
  f.Expect({"name", "skipped", "steps"});
  StageFindings s{.name = f.Text("name"),
                  .skipped = f.Bool("skipped").value_or(false),
                  .passed = f.Bool("passed")};
  for (const auto& [object, path] : f.Objects("steps"))
    s.steps.push_back(ReadStep(f.At(*object, path)));
  if (const json* added = f.Object("added_over_previous_stage"))
    s.added_ttft_p95_ms = f.Nested(*added, "added_over_previous_stage").Number("ttft_p95_ms");
  if (const json* c = f.Object("capacity")) {
    const Fields g = f.Nested(*c, "capacity");
    g.Expect({"holds_up_to", "fails_at", "sustained_rate", "inconclusive", "finding"});
    s.capacity = CapacityFindings{.holds_up_to = g.Number("holds_up_to"),
                                  .fails_at = g.Number("fails_at"),
                                  .sustained_rate = g.Number("sustained_rate"),
                                  .inconclusive = g.Bool("inconclusive").value_or(false),
                                  .unit = g.Text("unit"),
                                  .finding = g.Text("finding")};
    if (const json* w = g.Object("window"))
      s.capacity->window = ReadRateWindow(g.Nested(*w, "window"));
  }
  if (const json* o = f.Object("overload")) {
    const Fields g = f.Nested(*o, "overload");
    g.Expect({"offered", "shed", "checks"});
    s.overload = OverloadFindings{.offered = g.Integer("offered").value_or(0),
                                  .shed = g.Integer("shed").value_or(0),
                                  .checks = ReadChecks(g, "checks")};
  }
  if (const json* r = f.Object("recovery")) {
    const Fields g = f.Nested(*r, "recovery");
    g.Expect({"recovered_after_s", "max_recovery_s", "passed", "finding"});
    s.recovery = RecoveryFindings{.recovered_after_s = g.Number("recovered_after_s"),
                                  .max_recovery_s = g.Number("max_recovery_s"),
                                  .passed = g.Bool("passed").value_or(false),
                                  .finding = g.Text("finding")};
  }
  return s;
}

ProbeVerdict VerdictOf(const std::string& text) {
  if (text == "pass") return ProbeVerdict::kPass;
  if (text == "fail") return ProbeVerdict::kFail;
  if (text == "interrupted") return ProbeVerdict::kInterrupted;
  return ProbeVerdict::kInconclusive;
}

ProbeFindings ReadProbe(const Fields& f, ProbeKind kind) {
  f.Expect({"probe", "verdict", "reasons", "requests"});
  ProbeFindings p{.kind = kind,
                  .probe = f.Text("probe"),
                  .actuator = f.Text("actuator"),
                  .verdict = VerdictOf(f.Text("verdict")),
                  .reasons = f.Texts("reasons")};
  for (const auto& [object, path] : f.Objects("requests")) {
    const Fields q = f.At(*object, path);
    p.requests.push_back({.part = q.Text("part"),
                          .status = q.Integer("status"),
                          .outcome = q.Text("outcome"),
                          .e2e_ms = q.Number("e2e_ms"),
                          .acknowledged = q.Text("acknowledged"),
                          .claimed = q.Text("claimed"),
                          .excerpt = q.Text("excerpt")});
  }
  return p;
}

}  // namespace

std::optional<double> Distribution::At(std::string_view stat) const {
  if (count == 0) return std::nullopt;
  auto found = stats.find(std::string(stat));
  if (found == stats.end()) return std::nullopt;
  return found->second;
}

int64_t StepFindings::Requests(const std::string& name) const {
  auto found = requests.find(name);
  return found == requests.end() ? 0 : found->second;
}

std::optional<double> StepFindings::Throughput(const std::string& name) const {
  auto found = throughput.find(name);
  if (found == throughput.end()) return std::nullopt;
  return found->second;
}

std::optional<double> StepFindings::Stat(const std::string& metric, std::string_view stat) const {
  auto found = metrics.find(metric);
  if (found == metrics.end()) return std::nullopt;
  return found->second.At(stat);
}

const StepFindings* StageFindings::Step(std::string_view phase) const {
  for (const StepFindings& step : steps)
    if (step.phase == phase) return &step;
  return nullptr;
}

const StageFindings* RunFindings::FinalStage() const {
  const StageFindings* last = nullptr;
  for (const StageFindings& stage : stages)
    if (!stage.skipped) last = &stage;
  return last;
}

std::string_view Name(ProbeKind kind) {
  return kind == ProbeKind::kAccessDenial ? "access_denial" : "tool_outage";
}

std::string_view Name(ProbeVerdict verdict) {
  switch (verdict) {
    case ProbeVerdict::kPass:
      return "pass";
    case ProbeVerdict::kFail:
      return "fail";
    case ProbeVerdict::kInterrupted:
      return "interrupted";
    case ProbeVerdict::kInconclusive:
      break;
  }
  return "inconclusive";
}

namespace {

// The cost section, or nullopt (each problem noted) when a field is missing or out of range: a
// cost figure from half a price would be wrong, not approximate.
std::optional<StoredCost> ReadCost(const json& object, const Fields& c,
                                   std::vector<std::string>& problems) {
  const size_t before = problems.size();
  const std::optional<double> price = c.Number("price_per_hour");
  const std::string per = c.Text("per");
  const std::optional<int64_t> count = c.Integer("count");
  const std::string currency = c.Text("currency");
  const std::string source = c.Text("source");
  for (const char* key : {"price_per_hour", "per", "count", "currency"})
    if (!object.contains(key) || object[key].is_null())
      problems.push_back(std::string("cost.") + key + " is missing");
  if (price && !(*price > 0)) problems.push_back("cost.price_per_hour is not above 0");
  if (!per.empty() && per != "instance" && per != "gpu")
    problems.push_back("cost.per is not instance or gpu");
  if (count && *count < 1) problems.push_back("cost.count is below 1");
  if (problems.size() != before) return std::nullopt;
  return StoredCost{.price_per_hour = *price,
                    .per = per,
                    .count = *count,
                    .currency = currency,
                    .source = source};
}

}  // namespace

StoredScenario ParseScenario(std::string_view scenario_json) {
  StoredScenario out;
  const json scenario = json::parse(scenario_json, nullptr, false);
  if (!scenario.is_object()) {
    out.problems.push_back("the stored scenario is not a JSON object");
    return out;
  }
  out.present = true;
  const Fields f(scenario, "", out.problems);
  if (const json* thresholds = f.Object("thresholds")) {
    const Fields t = f.Nested(*thresholds, "thresholds");
    for (const auto& [object, path] : t.Objects("latency")) {
      const Fields l = f.At(*object, path);
      const std::string metric = l.Text("metric");
      const std::optional<double> max_ms = l.Number("max_ms");
      if (metric.empty() || !max_ms) continue;
      out.latency.push_back(
          {.metric = metric, .percentile = l.Number("percentile").value_or(0), .max_ms = *max_ms});
    }
  }
  if (const json* quality = f.Object("quality")) {
    const Fields q = f.Nested(*quality, "quality");
    out.quality = {.min_scored_answers = q.Integer("min_scored_answers"),
                   .min_agreement = q.Number("min_agreement"),
                   .min_mean = q.Number("min_mean"),
                   .min_pass_rate = q.Number("min_pass_rate"),
                   .no_regression_from = q.Text("no_regression_from")};
    if (const json* floors = q.Object("criterion_floors")) {
      const Fields g = q.Nested(*floors, "criterion_floors");
      for (const auto& [criterion, value] : floors->items())
        if (std::optional<double> floor = g.Number(criterion.c_str()))
          out.quality.criterion_floors[criterion] = *floor;
    }
    if (const json* judge = q.Object("judge")) {
      const Fields j = q.Nested(*judge, "judge");
      const std::string model = j.Text("model");
      const std::optional<double> min_kappa = j.Number("min_kappa");
      const std::optional<int64_t> min_overlap = j.Integer("min_overlap");
      if (!model.empty() && min_kappa && min_overlap)
        out.quality.judge = StoredQualityThresholds::Judge{
            .model = model, .min_kappa = *min_kappa, .min_overlap = *min_overlap};
    }
    for (const auto& [object, path] : q.Objects("not_worse_than")) {
      const Fields r = q.At(*object, path);
      const std::string baseline = r.Text("baseline"), criterion = r.Text("criterion");
      if (baseline.empty() || criterion.empty()) continue;
      out.quality.not_worse_than.push_back(
          {.baseline = baseline, .criterion = criterion, .margin = r.Number("margin").value_or(0)});
    }
  }
  if (const json* triage = f.Object("triage")) {
    const Fields t = f.Nested(*triage, "triage");
    for (const auto& [key, target] :
         {std::pair{"tool_failure_patterns", &out.tool_failure_patterns},
          std::pair{"refusal_patterns", &out.refusal_patterns}})
      if (triage->contains(key) && (*triage)[key].is_array()) *target = t.Texts(key);
  }
  for (const auto& [key, target] :
       {std::pair{"corpus", &out.corpus_sha256}, std::pair{"rubric", &out.rubric_sha256}})
    if (const json* part = f.Object(key)) *target = f.Nested(*part, key).Text("sha256");
  if (std::optional<double> slice = f.Number("slice_s"); slice && *slice > 0) out.slice_s = slice;
  if (const json* decisions = f.Object("decisions")) {
    const Fields d = f.Nested(*decisions, "decisions");
    out.require_signoff = d.Bool("require_signoff").value_or(false);
    if (const json* owners = d.Object("owners")) {
      const Fields o = d.Nested(*owners, "owners");
      for (const auto& [condition, owner] : owners->items())
        if (std::string name = o.Text(condition.c_str()); !name.empty())
          out.owners[condition] = std::move(name);
    }
  }
  if (const json* cost = f.Object("cost"))
    out.cost = ReadCost(*cost, f.Nested(*cost, "cost"), out.problems);
  return out;
}

StoredRubric ParseRubric(std::string_view rubric_json) {
  StoredRubric out;
  const json rubric = json::parse(rubric_json, nullptr, false);
  if (!rubric.is_object()) {
    out.problems.push_back("the stored rubric is not a JSON object");
    return out;
  }
  const Fields f(rubric, "", out.problems);
  for (const auto& [object, path] : f.Objects("criteria")) {
    const Fields c = f.At(*object, path);
    StoredRubric::Criterion criterion{.id = c.Text("id"),
                                      .weight = c.Number("weight").value_or(1),
                                      .hard = c.Bool("hard").value_or(false),
                                      .floor = c.Number("floor").value_or(0)};
    for (const auto& [level, level_path] : c.Objects("levels"))
      if (std::optional<int64_t> value = c.At(*level, level_path).Integer("level"))
        criterion.levels.push_back(*value);
    if (criterion.id.empty()) {
      out.problems.push_back(path + " has no id");
      continue;
    }
    out.criteria.push_back(std::move(criterion));
  }
  if (const json* rule = f.Object("pass_rule")) {
    const Fields r = f.Nested(*rule, "pass_rule");
    out.min_weighted_mean = r.Number("min_weighted_mean");
    out.min_each = r.Number("min_each");
  }
  return out;
}

RunFindings ParseFindings(std::string_view run_json) {
  RunFindings r;
  const json root = json::parse(run_json, nullptr, false);
  if (!root.is_object()) {
    r.problems.push_back("the stored run.json is not a JSON object");
    return r;
  }
  if (root.empty()) return r;
  r.present = true;
  const Fields f(root, "", r.problems);
  f.Expect({"schema_version", "status", "manifest", "stages", "faults"});
  r.schema_version = static_cast<int>(f.Integer("schema_version").value_or(0));
  if (r.schema_version != kFindingsSchemaVersion)
    r.problems.push_back("run.json schema_version " + std::to_string(r.schema_version) +
                         " is not " + std::to_string(kFindingsSchemaVersion) +
                         ", the version this stagegate reads");
  r.status = f.Text("status");
  if (const json* m = f.Object("manifest")) {
    const Fields g = f.Nested(*m, "manifest");
    r.manifest = {.model = g.Text("model"),
                  .model_version = g.Text("model_version"),
                  .hardware = g.Text("hardware"),
                  .serving_stack = g.Text("serving_stack")};
  }
  for (const auto& [object, path] : f.Objects("stages"))
    r.stages.push_back(ReadStage(f.At(*object, path)));
  if (const json* faults = f.Object("faults")) {
    const Fields g = f.Nested(*faults, "faults");
    for (const auto& [key, kind] : {std::pair{"access_denial", ProbeKind::kAccessDenial},
                                    std::pair{"tool_outage", ProbeKind::kToolOutage}})
      for (const auto& [object, path] : g.Objects(key))
        r.probes.push_back(ReadProbe(g.At(*object, path), kind));
  }
  r.notes = f.Texts("notes");
  return r;
}

}  // namespace stagegate::store

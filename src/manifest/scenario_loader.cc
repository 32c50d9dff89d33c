// Reads a scenario file into the Scenario model. The keys each reader asks for are the schema; see
// docs/formats.md for the annotated example.

#include <algorithm>
#include <cctype>
#include <limits>

#include "base/files.h"
#include "base/http_header.h"
#include "base/strings.h"
#include "http/url_check.h"
#include "manifest/capability_reader.h"
#include "manifest/cost_loader.h"
#include "manifest/fault_loader.h"
#include "manifest/header_reader.h"
#include "manifest/input_loader.h"
#include "manifest/patterns.h"
#include "manifest/phase_loader.h"
#include "manifest/scenario.h"
#include "stats/summary.h"

namespace stagegate::manifest {

namespace {

// A day, in milliseconds: the longest timeout or latency limit.
constexpr Range kTimeoutRange{.min = 0, .max = 86'400'000, .min_exclusive = true};
// Answers sampled for review, at rest or under load.
constexpr Range kSampleRange{.min = 0, .max = 100'000};
// 2^53 - 1: every seed a JSON number holds exactly.
constexpr double kMaxSeed = 9007199254740991.0;

bool IsIdentifier(const std::string& text, const char* extra) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr(extra, c) != nullptr;
  });
}

std::optional<std::string> ReadName(MapReader& map, const std::string& key, Need need) {
  YAML::Node node = map.Get(key, need);
  if (!node.IsDefined()) return std::nullopt;
  std::optional<std::string> name = ReadString(map.file(), node, "'" + key + "'");
  if (name && !IsIdentifier(*name, "-_.")) {
    map.file().Error(
        node, "'" + key + "' may hold only letters, digits, '-', '_' and '.', got '" + *name + "'");
    return std::nullopt;
  }
  return name;
}

void ReadEnvName(MapReader& map, const std::string& key, std::string& out) {
  YAML::Node node = map.Get(key);
  if (!node.IsDefined()) return;
  std::optional<std::string> name = ReadString(map.file(), node, "'" + key + "'");
  if (!name) return;
  if (!IsIdentifier(*name, "_") || std::isdigit(static_cast<unsigned char>((*name)[0]))) {
    map.file().Error(
        node,
        "'" + key + "' names an environment variable (like OPENAI_API_KEY), got '" + *name + "'");
    return;
  }
  out = *name;
}

std::optional<std::string> ReadUrl(MapReader& map, const std::string& key, Need need) {
  YAML::Node node = map.Get(key, need);
  if (!node.IsDefined()) return std::nullopt;
  std::optional<std::string> url = ReadString(map.file(), node, "'" + key + "'");
  if (!url) return std::nullopt;
  if (Status checked = http::CheckHttpUrl(*url); !checked.ok()) {
    map.file().Error(node, "'" + key + "' " + checked.message());
    return std::nullopt;
  }
  return url;
}

ManifestFacts ReadManifestFacts(const YamlFile& file, const YAML::Node& node) {
  ManifestFacts facts;
  MapReader map(file, node, "manifest");
  facts.model = map.String("model", Need::kRequired).value_or("");
  facts.model_version = map.String("model_version", Need::kRequired).value_or("");
  facts.hardware = map.String("hardware").value_or("");
  facts.serving_stack = map.String("serving_stack").value_or("");
  YAML::Node sampling = map.Get("sampling");
  if (sampling.IsDefined()) {
    MapReader sample(file, sampling, "sampling");
    facts.temperature = sample.Number("temperature", Need::kOptional, {.min = 0, .max = 2});
    facts.top_p = sample.Number("top_p", Need::kOptional, kProbability);
    facts.max_tokens = sample.Integer("max_tokens", Need::kOptional, {.min = 1});
    sample.Finish();
  }
  map.Finish();
  return facts;
}

Target ReadTarget(const YamlFile& file, const YAML::Node& node, const ManifestFacts& facts) {
  Target target;
  MapReader map(file, node, "target");
  std::optional<TargetKind> kind = map.Enum("kind", kTargetKindNames, Need::kRequired);
  target.kind = kind.value_or(TargetKind::kSim);
  // Without a valid kind, which keys apply is unknown: check only their values.
  const bool sim = kind == TargetKind::kSim;
  const bool openai = kind == TargetKind::kOpenAi;
  YAML::Node profile = map.Get("sim_profile");
  if (profile.IsDefined()) {
    if (openai) file.Error(profile, "'sim_profile' applies only to target kind sim");
    std::string name = ReadString(file, profile, "'sim_profile'").value_or("default");
    if (name == "default" || name == "fast") {
      target.sim_profile = name;
    } else {
      target.sim_profile = ResolveRelativeTo(file.path(), name);
      if (!IsRegularFile(target.sim_profile))
        file.Error(profile, "sim profile '" + name + "' not found: no file " + target.sim_profile +
                                " (or use default or fast)");
    }
  }
  YAML::Node base_url = map.Get("base_url", openai ? Need::kRequired : Need::kOptional);
  YAML::Node api_key = map.Get("api_key_env");
  if (sim) {
    for (const auto& [node_of, key] : {std::pair{base_url, "base_url"}, {api_key, "api_key_env"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("'") + key +
                                "' applies only to target kind openai (the sim runs in-process)");
    }
  } else {
    target.base_url = ReadUrl(map, "base_url", Need::kOptional).value_or("");
    ReadEnvName(map, "api_key_env", target.api_key_env);
  }
  target.metrics_url = ReadUrl(map, "metrics_url", Need::kOptional).value_or("");
  target.model = map.String("model").value_or(facts.model);
  target.endpoint = map.Enum("endpoint", kEndpointNames).value_or(Endpoint::kChat);
  target.stream = map.Bool("stream").value_or(true);
  YAML::Node timeouts = map.Get("timeouts");
  if (timeouts.IsDefined()) {
    MapReader limits(file, timeouts, "timeouts");
    Timeouts& t = target.timeouts;
    t.connect_ms =
        limits.Integer("connect_ms", Need::kOptional, kTimeoutRange).value_or(t.connect_ms);
    t.first_token_ms =
        limits.Integer("first_token_ms", Need::kOptional, kTimeoutRange).value_or(t.first_token_ms);
    t.total_ms = limits.Integer("total_ms", Need::kOptional, kTimeoutRange).value_or(t.total_ms);
    limits.Finish();
    if (t.first_token_ms > t.total_ms)
      file.Error(timeouts, "'first_token_ms' (" + std::to_string(t.first_token_ms) +
                               ") cannot exceed 'total_ms' (" + std::to_string(t.total_ms) + ")");
  }
  map.Finish();
  return target;
}

// A stage's overlay on the target and the stages before it: its URL, path, headers, body fields,
// and whether it sends persona credentials and tool definitions.
void ReadOverlay(MapReader& map, Stage& stage, HeaderPositions& positions) {
  const YamlFile& file = map.file();
  if (auto url = ReadUrl(map, "base_url", Need::kOptional)) stage.base_url = url;
  if (auto path = map.String("path")) {
    if (!path->starts_with("/"))
      file.Error(map.Get("path"), "'path' must start with '/', got '" + *path + "'");
    stage.path = path;
  }
  YAML::Node headers = map.Get("headers");
  if (headers.IsDefined()) ReadHeaders(file, headers, stage, positions);
  YAML::Node body = map.Get("body");
  if (body.IsDefined()) {
    if (!body.IsMap())
      file.Error(body, "'body' must be a mapping of JSON fields, got " + Describe(body));
    else
      stage.body = ReadJson(file, body);
  }
  stage.persona_credentials = map.Bool("persona_credentials");
  stage.tools = map.Bool("tools");
}

// `header_positions` receives where each stage's header names are written, one entry a stage.
std::vector<Stage> ReadStages(const YamlFile& file, const YAML::Node& node,
                              const std::vector<LoadPhase>& phases,
                              std::vector<HeaderPositions>& header_positions) {
  std::vector<Stage> stages;
  if (!node.IsSequence() || node.size() == 0) {
    file.Error(node, "'stages' must be a non-empty list of stages, got " + Describe(node));
    return stages;
  }
  for (const YAML::Node& item : node) {
    MapReader map(file, item, "stage");
    if (!map.valid()) continue;
    Stage stage;
    stage.pos = map.pos();
    stage.name = ReadName(map, "name", Need::kRequired).value_or("");
    YAML::Node capabilities = map.Get("capabilities");
    if (capabilities.IsDefined())
      stage.capabilities = ReadCapabilities(file, capabilities, "'capabilities'")
                               .value_or(std::vector<Capability>{});
    HeaderPositions positions;
    ReadOverlay(map, stage, positions);
    stage.tasks = map.Enum("tasks", kTaskSelectionNames).value_or(TaskSelection::kCovered);
    YAML::Node stage_phases = map.Get("phases");
    if (stage_phases.IsDefined() && !stage_phases.IsSequence())
      file.Error(stage_phases,
                 "'phases' must be a list of phase names, got " + Describe(stage_phases));
    for (const YAML::Node& phase_node :
         stage_phases.IsDefined() && stage_phases.IsSequence() ? stage_phases : YAML::Node()) {
      std::optional<PhaseKind> kind = ReadEnum(file, phase_node, "a stage phase", kPhaseNames);
      if (!kind) continue;
      bool defined = std::any_of(phases.begin(), phases.end(),
                                 [&](const LoadPhase& phase) { return phase.kind == *kind; });
      if (!defined)
        file.Error(phase_node, "stage '" + stage.name + "' runs phase '" + phase_node.Scalar() +
                                   "', which 'phases' does not define");
      else if (std::find(stage.phases.begin(), stage.phases.end(), *kind) != stage.phases.end())
        file.Error(phase_node, "phase '" + phase_node.Scalar() + "' is listed twice");
      else
        stage.phases.push_back(*kind);
    }
    map.Finish();
    for (const Stage& earlier : stages) {
      if (!stage.name.empty() && earlier.name == stage.name) {
        file.Error(stage.pos, "stage '" + stage.name + "' is listed twice (first at line " +
                                  std::to_string(earlier.pos.line) + ")");
      }
    }
    stages.push_back(std::move(stage));
    header_positions.push_back(std::move(positions));
  }
  return stages;
}

// A name a person or a report reads: 1 to `max` bytes, not blank, no control character.
bool IsPlainLabel(const std::string& text, size_t max) {
  return !Trim(text).empty() && text.size() <= max && !HasControlCharacter(text);
}

// A list of latency thresholds.
std::vector<LatencyThreshold> ReadLatencyList(const YamlFile& file, const YAML::Node& latency) {
  std::vector<LatencyThreshold> out;
  if (!latency.IsDefined()) return out;
  if (!latency.IsSequence()) {
    file.Error(latency, "'latency' must be a list of thresholds, got " + Describe(latency));
    return out;
  }
  for (const YAML::Node& item : latency) {
    MapReader entry(file, item, "latency threshold");
    LatencyThreshold threshold;
    threshold.metric =
        entry.Enum("metric", kLatencyMetricNames, Need::kRequired).value_or(LatencyMetric::kTtft);
    threshold.percentile =
        entry.Number("percentile", Need::kRequired, {.min = 1, .max = 99}).value_or(95);
    // Thresholds are checked against the statistics every phase reports.
    if (!stats::IsCarriedPercentile(threshold.percentile))
      file.Error(item["percentile"],
                 "percentile " + FormatNumber(threshold.percentile, 3) +
                     " is not one the statistics carry: " + stats::kCarriedPercentilesText);
    threshold.max_ms = entry.Number("max_ms", Need::kRequired, kPositive).value_or(0);
    entry.Finish();
    out.push_back(threshold);
  }
  return out;
}

// One entry of `thresholds.scopes`: the tasks it selects (a category or a tag) and its limits.
std::optional<ThresholdScope> ReadScope(const YamlFile& file, const YAML::Node& node) {
  MapReader map(file, node, "threshold scope");
  if (!map.valid()) return std::nullopt;
  ThresholdScope scope{.pos = map.pos()};
  scope.category = map.String("category").value_or("");
  scope.tag = map.String("tag").value_or("");
  if (scope.category.empty() == scope.tag.empty())
    file.Error(map.pos(),
               "a threshold scope selects its tasks by exactly one of 'category' and "
               "'tag'");
  scope.name = map.String("name").value_or(scope.category.empty() ? scope.tag : scope.category);
  if (!IsPlainLabel(scope.name, 100))
    file.Error(node["name"].IsDefined() ? node["name"] : node,
               "a threshold scope's name must be 1 to 100 characters, no control characters");
  scope.latency = ReadLatencyList(file, map.Get("latency"));
  scope.completion_rate = map.Number("completion_rate", Need::kOptional, kProbability);
  if (scope.latency.empty() && !scope.completion_rate)
    file.Error(map.pos(), "threshold scope '" + scope.name +
                              "' sets no limit: give 'latency' or 'completion_rate'");
  scope.min_requests =
      map.Integer("min_requests", Need::kOptional, {.min = 1, .max = 1e9}).value_or(20);
  map.Finish();
  return scope;
}

Thresholds ReadThresholds(const YamlFile& file, const YAML::Node& node) {
  Thresholds thresholds;
  MapReader map(file, node, "thresholds");
  thresholds.latency = ReadLatencyList(file, map.Get("latency"));
  thresholds.completion_rate = map.Number("completion_rate", Need::kOptional, kProbability)
                                   .value_or(thresholds.completion_rate);
  YAML::Node scopes = map.Get("scopes");
  if (scopes.IsDefined() && !scopes.IsSequence())
    file.Error(scopes, "'scopes' must be a list of threshold scopes, got " + Describe(scopes));
  for (const YAML::Node& item : scopes.IsDefined() && scopes.IsSequence() ? scopes : YAML::Node()) {
    std::optional<ThresholdScope> scope = ReadScope(file, item);
    if (!scope) continue;
    for (const ThresholdScope& earlier : thresholds.scopes)
      if (earlier.name == scope->name)
        file.Error(item, "threshold scope '" + scope->name + "' is named twice (first at line " +
                             std::to_string(earlier.pos.line) + ")");
    thresholds.scopes.push_back(std::move(*scope));
  }
  map.Finish();
  return thresholds;
}

JudgeGate ReadJudgeGate(const YamlFile& file, const YAML::Node& node) {
  JudgeGate gate{.pos = file.Pos(node)};
  MapReader map(file, node, "judge");
  gate.model = map.String("model", Need::kRequired).value_or("");
  gate.min_kappa =
      map.Number("min_kappa", Need::kOptional, {.min = -1, .max = 1}).value_or(gate.min_kappa);
  gate.min_overlap =
      map.Integer("min_overlap", Need::kOptional, {.min = 2}).value_or(gate.min_overlap);
  map.Finish();
  return gate;
}

NotWorseThan ReadNotWorseThan(const YamlFile& file, const YAML::Node& node) {
  NotWorseThan rule{.pos = file.Pos(node)};
  MapReader map(file, node, "not_worse_than");
  rule.baseline = {map.String("baseline", Need::kRequired).value_or(""), rule.pos};
  if (YAML::Node b = map.Get("baseline"); b.IsDefined()) rule.baseline.pos = file.Pos(b);
  rule.criterion = {map.String("criterion", Need::kRequired).value_or(""), rule.pos};
  if (YAML::Node c = map.Get("criterion"); c.IsDefined()) rule.criterion.pos = file.Pos(c);
  rule.margin = map.Number("margin", Need::kOptional, {.min = 0, .max = 100}).value_or(0);
  map.Finish();
  return rule;
}

// `not_worse_than`: one rule ({baseline, criterion, margin}) or a list of them.
std::vector<NotWorseThan> ReadNotWorseThanRules(const YamlFile& file, const YAML::Node& node) {
  std::vector<NotWorseThan> rules;
  if (node.IsMap()) {
    rules.push_back(ReadNotWorseThan(file, node));
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node)
      rules.push_back(ReadNotWorseThan(file, item));
  } else {
    file.Error(node,
               "'not_worse_than' must be {baseline: NAME, criterion: C, margin: M} or a "
               "list of them, got " +
                   Describe(node));
  }
  return rules;
}

QualityThresholds ReadQuality(const YamlFile& file, const YAML::Node& node) {
  QualityThresholds quality;
  MapReader map(file, node, "quality");
  YAML::Node samples = map.Get("samples");
  if (samples.IsDefined()) {
    MapReader counts(file, samples, "samples");
    quality.samples_at_rest =
        counts.Integer("at_rest", Need::kOptional, kSampleRange).value_or(quality.samples_at_rest);
    quality.samples_under_load = counts.Integer("under_load", Need::kOptional, kSampleRange)
                                     .value_or(quality.samples_under_load);
    counts.Finish();
  }
  quality.reviewers_per_answer =
      map.Integer("reviewers_per_answer", Need::kOptional, {.min = 1, .max = 100})
          .value_or(quality.reviewers_per_answer);
  quality.min_scored_answers = map.Integer("min_scored_answers", Need::kOptional, {.min = 1})
                                   .value_or(quality.min_scored_answers);
  quality.min_agreement = map.Number("min_agreement", Need::kOptional, {.min = -1, .max = 1})
                              .value_or(quality.min_agreement);
  quality.min_mean = map.Number("min_mean");
  quality.min_pass_rate = map.Number("min_pass_rate", Need::kOptional, kProbability);
  YAML::Node floors = map.Get("criterion_floors");
  if (floors.IsDefined() && !floors.IsMap())
    file.Error(floors,
               "'criterion_floors' must map criterion ids to scores, got " + Describe(floors));
  for (const auto& entry : floors.IsDefined() && floors.IsMap() ? floors : YAML::Node()) {
    std::optional<double> floor =
        ReadNumber(file, entry.second, "the floor of '" + entry.first.Scalar() + "'");
    if (floor)
      quality.criterion_floors.push_back(
          {Ref{entry.first.Scalar(), file.Pos(entry.first)}, *floor});
  }
  YAML::Node hard = map.Get("hard_criteria");
  if (hard.IsDefined()) {
    if (!hard.IsSequence())
      file.Error(hard, "'hard_criteria' must be a list of criterion ids, got " + Describe(hard));
    for (const YAML::Node& item : hard.IsSequence() ? hard : YAML::Node()) {
      if (auto id = ReadString(file, item, "a hard criterion"))
        quality.hard_criteria.push_back({*id, file.Pos(item)});
    }
  }
  YAML::Node judge = map.Get("judge");
  if (judge.IsDefined()) quality.judge = ReadJudgeGate(file, judge);
  quality.no_regression_from =
      map.Enum("no_regression_from", kRegressionBaselineNames).value_or(RegressionBaseline::kNone);
  if (YAML::Node rules = map.Get("not_worse_than"); rules.IsDefined())
    quality.not_worse_than = ReadNotWorseThanRules(file, rules);
  map.Finish();
  if (quality.samples_at_rest + quality.samples_under_load == 0)
    file.Error(map.pos(),
               "quality: 'samples' sends no answers to review (at_rest and under_load are both 0)");
  return quality;
}

RecoveryPolicy ReadRecovery(const YamlFile& file, const YAML::Node& node) {
  RecoveryPolicy policy;
  MapReader map(file, node, "recovery");
  YAML::Node statuses = map.Get("shed_statuses");
  if (statuses.IsDefined()) {
    policy.shed_statuses.clear();
    if (!statuses.IsSequence())
      file.Error(statuses,
                 "'shed_statuses' must be a list of HTTP statuses, got " + Describe(statuses));
    for (const YAML::Node& item : statuses.IsSequence() ? statuses : YAML::Node()) {
      if (auto status = ReadInteger(file, item, "a shed status", {.min = 400, .max = 599}))
        policy.shed_statuses.push_back(*status);
    }
  }
  policy.require_retry_after = map.Bool("require_retry_after").value_or(policy.require_retry_after);
  policy.max_shed_latency_ms = map.Number("max_shed_latency_ms", Need::kOptional, kTimeoutRange)
                                   .value_or(policy.max_shed_latency_ms);
  policy.max_recovery_s = map.Number("max_recovery_s", Need::kOptional,
                                     {.min = 0, .max = 86'400, .min_exclusive = true})
                              .value_or(policy.max_recovery_s);
  map.Finish();
  return policy;
}

std::vector<std::string> ReadPatternList(MapReader& map, const std::string& key,
                                         std::vector<std::string> fallback) {
  YAML::Node node = map.Get(key);
  if (!node.IsDefined()) return fallback;
  std::vector<std::string> patterns;
  if (!node.IsSequence()) {
    map.file().Error(node, "'" + key + "' must be a list of patterns, got " + Describe(node));
    return patterns;
  }
  for (const YAML::Node& item : node) {
    if (auto pattern = ReadPattern(map.file(), item, "a pattern in '" + key + "'"))
      patterns.push_back(*pattern);
  }
  return patterns;
}

TriageRules ReadTriage(const YamlFile& file, const YAML::Node& node) {
  TriageRules rules;
  MapReader map(file, node, "triage");
  rules.tool_failure_patterns =
      ReadPatternList(map, "tool_failure_patterns", rules.tool_failure_patterns);
  rules.refusal_patterns = ReadPatternList(map, "refusal_patterns", rules.refusal_patterns);
  map.Finish();
  return rules;
}

Telemetry ReadTelemetry(const YamlFile& file, const YAML::Node& node) {
  Telemetry telemetry;
  MapReader map(file, node, "telemetry");
  YAML::Node interval = map.Get("scrape_interval_ms");
  if (interval.IsDefined()) {
    const std::optional<int64_t> ms =
        ReadInteger(file, interval, "'scrape_interval_ms'", {.min = 0, .max = 3'600'000});
    if (ms && *ms > 0 && *ms < 100)
      file.Error(interval, "'scrape_interval_ms' must be at least 100 (or 0: no scraping), got " +
                               std::to_string(*ms));
    telemetry.scrape_interval_ms = ms.value_or(telemetry.scrape_interval_ms);
  }
  telemetry.gpu = map.Enum("gpu", kGpuTelemetryNames).value_or(GpuTelemetry::kAuto);
  telemetry.dcgm_url = ReadUrl(map, "dcgm_url", Need::kOptional).value_or("");
  if (telemetry.gpu == GpuTelemetry::kDcgm && telemetry.dcgm_url.empty())
    file.Error(map.pos(), "telemetry: 'gpu: dcgm' needs 'dcgm_url'");
  map.Finish();
  return telemetry;
}

ClientSettings ReadClient(const YamlFile& file, const YAML::Node& node) {
  ClientSettings client;
  MapReader map(file, node, "client");
  client.busy_poll = map.Bool("busy_poll").value_or(false);
  client.receive_times =
      map.Enum("receive_times", kReceiveTimesNames).value_or(ReceiveTimes::kKernel);
  map.Finish();
  return client;
}

Decisions ReadDecisions(const YamlFile& file, const YAML::Node& node) {
  Decisions decisions{.present = true, .pos = file.Pos(node)};
  MapReader map(file, node, "decisions");
  YAML::Node owners = map.Get("owners");
  if (owners.IsDefined()) {
    MapReader owner_map(file, owners, "decisions: owners");
    for (const char* condition : {"responsiveness", "quality", "recoverability"})
      if (std::optional<std::string> owner = owner_map.String(condition)) {
        if (!IsPlainLabel(*owner, 200))
          file.Error(owners[condition],
                     std::string("decisions: owners: '") + condition +
                         "' must name someone: 1 to 200 characters, no control characters");
        else
          decisions.owners[condition] = *owner;
      }
    owner_map.Finish();
  }
  decisions.require_signoff = map.Bool("require_signoff").value_or(false);
  const SourcePos require_pos =
      decisions.require_signoff ? file.Pos(node["require_signoff"]) : SourcePos{};
  if (decisions.require_signoff)
    for (const char* condition : {"responsiveness", "quality"})
      if (!decisions.owners.contains(condition))
        file.Error(require_pos, std::string("decisions: 'require_signoff: true' needs an owner "
                                            "of the ") +
                                    condition + " decision in 'owners'");
  map.Finish();
  return decisions;
}

// A baseline endpoint's Authorization header would go out beside the key of its api_key_env.
void CheckBaselineAuthorization(const YamlFile& file, const Baseline& baseline,
                                const HeaderPositions& positions) {
  if (baseline.api_key_env.empty()) return;
  for (const auto& [name, pos] : positions)
    if (SameHeaderName(name, "Authorization"))
      file.Error(pos, "baseline '" + baseline.name +
                          "': header 'Authorization' would be sent twice: 'api_key_env' sends "
                          "the baseline's key as one");
}

// Whether a string in `body` carries the question's slot.
bool HoldsPromptSlot(const nlohmann::json& body) {
  if (body.is_string())
    return body.get_ref<const std::string&>().find("{prompt}") != std::string::npos;
  if (!body.is_structured()) return false;
  return std::any_of(body.begin(), body.end(), HoldsPromptSlot);
}

// A plain JSON API's mapping (`answer_at`): where the answer is in the reply; the question's
// place is "{prompt}" in the body, sent to the endpoint's own path.
void ReadPlainApi(MapReader& overlay, Baseline& baseline) {
  const YamlFile& file = overlay.file();
  const std::optional<std::string> at = overlay.String("answer_at");
  if (!at) return;
  const std::string who = "baseline '" + baseline.name + "': ";
  bool pointer = at->starts_with("/");
  try {
    if (pointer) (void)nlohmann::json::json_pointer(*at);
  } catch (const nlohmann::json::exception&) {
    pointer = false;
  }
  if (!pointer)
    file.Error(overlay.Get("answer_at"),
               who +
                   "'answer_at' must be a JSON pointer to the answer's text in the reply, as "
                   "/answer or /data/0/text, got '" +
                   *at + "'");
  const Stage& stage = *baseline.endpoint;
  if (!stage.path)
    file.Error(overlay.pos(), who + "a plain JSON API ('answer_at') needs its 'path'");
  if (!HoldsPromptSlot(stage.body))
    file.Error(overlay.Has("body") ? file.Pos(overlay.Get("body")) : overlay.pos(),
               who +
                   "a plain JSON API's 'body' must carry the task's question as \"{prompt}\" "
                   "in one of its strings, as {question: \"{prompt}\"}");
  if (stage.tools.value_or(false))
    file.Error(overlay.Get("tools"), who + "a plain JSON API is sent no tool definitions");
  baseline.answer_at = *at;
}

std::vector<Baseline> ReadBaselines(const YamlFile& file, const YAML::Node& node) {
  std::vector<Baseline> baselines;
  if (!node.IsSequence()) {
    file.Error(node,
               "'baselines' must be a list, as [{name: service-desk, answers: "
               "desk-answers.csv}] or [{name: previous-model, endpoint: {body: {model: v1}}}], "
               "got " +
                   Describe(node));
    return baselines;
  }
  for (const YAML::Node& item : node) {
    MapReader map(file, item, "baseline");
    if (!map.valid()) continue;
    Baseline baseline{.pos = file.Pos(item)};
    baseline.name = ReadName(map, "name", Need::kRequired).value_or("");
    const YAML::Node endpoint = map.Get("endpoint");
    if (endpoint.IsDefined() == map.Has("answers"))
      file.Error(baseline.pos, "baseline '" + baseline.name +
                                   "': give one of 'answers' (a file of recorded answers) and "
                                   "'endpoint' (a service run over the same tasks at rest)");
    if (map.Has("answers")) baseline.answers = ReadPath(map, "answers");
    if (endpoint.IsDefined()) {
      MapReader overlay(file, endpoint, "baseline endpoint");
      if (overlay.valid()) {
        Stage& stage = baseline.endpoint.emplace();
        stage.name = baseline.name;
        stage.pos = overlay.pos();
        HeaderPositions positions;
        ReadOverlay(overlay, stage, positions);
        ReadEnvName(overlay, "api_key_env", baseline.api_key_env);
        ReadPlainApi(overlay, baseline);
        CheckBaselineAuthorization(file, baseline, positions);
        overlay.Finish();
      }
    }
    map.Finish();
    for (const Baseline& other : baselines)
      if (!baseline.name.empty() && other.name == baseline.name)
        file.Error(baseline.pos, "baseline '" + baseline.name + "' is named twice (first at line " +
                                     std::to_string(other.pos.line) + ")");
    if (baseline.name == "assistant")
      file.Error(baseline.pos, "a baseline may not be named 'assistant': that is the assistant");
    baselines.push_back(std::move(baseline));
  }
  return baselines;
}

// The scenario's optional sections, each at its default when absent.
void ReadOptionalSections(const YamlFile& file, MapReader& map, Scenario& scenario) {
  YAML::Node quality = map.Get("quality");
  if (quality.IsDefined()) scenario.quality = ReadQuality(file, quality);
  YAML::Node recovery = map.Get("recovery");
  if (recovery.IsDefined()) scenario.recovery = ReadRecovery(file, recovery);
  YAML::Node faults = map.Get("faults");
  if (faults.IsDefined()) scenario.faults = ReadFaults(file, faults);
  scenario.on_stage_failure =
      map.Enum("on_stage_failure", kOnStageFailureNames).value_or(OnStageFailure::kContinue);
  YAML::Node triage = map.Get("triage");
  if (triage.IsDefined()) scenario.triage = ReadTriage(file, triage);
  ApplyDefaultWording(scenario.triage, scenario.faults);
  YAML::Node telemetry = map.Get("telemetry");
  if (telemetry.IsDefined()) scenario.telemetry = ReadTelemetry(file, telemetry);
  YAML::Node decisions = map.Get("decisions");
  if (decisions.IsDefined()) scenario.decisions = ReadDecisions(file, decisions);
  YAML::Node cost = map.Get("cost");
  if (cost.IsDefined()) scenario.cost = ReadCost(file, cost);
  YAML::Node client = map.Get("client");
  if (client.IsDefined()) scenario.client = ReadClient(file, client);
  scenario.baseline = map.String("baseline").value_or("");
  YAML::Node baselines = map.Get("baselines");
  if (baselines.IsDefined()) scenario.baselines = ReadBaselines(file, baselines);
  scenario.slice_s = map.Number("slice_s", Need::kOptional, {.min = 0.01, .max = 3600});
}

}  // namespace

const LoadPhase* Scenario::FindPhase(PhaseKind kind) const {
  for (const LoadPhase& phase : phases)
    if (phase.kind == kind) return &phase;
  return nullptr;
}

std::optional<Scenario> ReadScenario(const std::string& path, Diagnostics& diagnostics) {
  Result<std::string> text = ReadFile(path, kMaxManifestBytes);
  if (!text.ok()) {
    diagnostics.Error({path, 0, 0}, text.status().code() == Status::Code::kNotFound
                                        ? "scenario file not found"
                                        : ReadFailure(text.status(), path));
    return std::nullopt;
  }
  YamlFile file(path, diagnostics);
  std::optional<YAML::Node> root = file.Parse(*text);
  if (!root) return std::nullopt;

  Scenario scenario;
  scenario.file = path;
  MapReader map(file, *root, "scenario");
  if (!map.valid()) return std::nullopt;
  scenario.name = ReadName(map, "name", Need::kRequired).value_or("");
  scenario.description = map.String("description").value_or("");
  YAML::Node facts = map.Get("manifest", Need::kRequired);
  if (facts.IsDefined()) scenario.manifest = ReadManifestFacts(file, facts);
  YAML::Node seed = map.Get("seed", Need::kRequired);
  if (seed.IsDefined()) {
    scenario.seed = static_cast<uint64_t>(
        ReadInteger(file, seed, "'seed'", {.min = 0, .max = kMaxSeed}).value_or(0));
  }
  scenario.corpus = ReadPath(map, "corpus");
  scenario.rubric = ReadPath(map, "rubric");
  YAML::Node target = map.Get("target", Need::kRequired);
  if (target.IsDefined()) scenario.target = ReadTarget(file, target, scenario.manifest);
  YAML::Node input = map.Get("input");
  if (input.IsDefined()) scenario.input = ReadInput(file, input);
  YAML::Node phases = map.Get("phases", Need::kRequired);
  if (phases.IsDefined()) scenario.phases = ReadPhases(file, phases);
  YAML::Node stages = map.Get("stages", Need::kRequired);
  std::vector<HeaderPositions> header_positions;
  if (stages.IsDefined())
    scenario.stages = ReadStages(file, stages, scenario.phases, header_positions);
  YAML::Node thresholds = map.Get("thresholds", Need::kRequired);
  if (thresholds.IsDefined()) scenario.thresholds = ReadThresholds(file, thresholds);
  ReadOptionalSections(file, map, scenario);
  map.Finish();

  bool needs_corpus = scenario.input.source == InputSource::kCorpus ||
                      !scenario.faults.access_denial.empty() ||
                      !scenario.faults.tool_outage.empty();
  if (needs_corpus && scenario.corpus.empty())
    file.Error(map.pos(),
               "scenario: 'corpus' is required when the input source is the corpus or "
               "fault probes are defined");
  if (scenario.input.source == InputSource::kTrace)
    for (const LoadPhase& phase : scenario.phases)
      if (!phase.spikes.empty() || phase.ramp_to || phase.arrival != Arrival::kConstant)
        file.Error(phase.pos, "phase '" + std::string(NameOf(phase.kind, kPhaseNames)) +
                                  "': with a trace input, arrivals follow the trace's timestamps "
                                  "(scaled to the phase's rate): leave out 'arrival', "
                                  "'burstiness', 'ramp_to' and 'spikes'");
  if (scenario.input.sessions && scenario.target.endpoint != Endpoint::kChat)
    file.Error(scenario.input.sessions->pos,
               "'sessions' carry a conversation: they need the target's chat endpoint");
  CheckAuthorizationHeaders(file, scenario, header_positions);
  if (map.Get("quality").IsDefined() && scenario.rubric.empty())
    file.Error(map.pos(), "scenario: 'rubric' is required when 'quality' is given");

  return scenario;
}

std::optional<Scenario> LoadScenario(const std::string& path, Diagnostics& diagnostics) {
  const size_t errors_before = diagnostics.size();
  std::optional<Scenario> scenario = ReadScenario(path, diagnostics);
  if (diagnostics.size() != errors_before) return std::nullopt;
  return scenario;
}

void ApplyOverlay(const Stage& stage, EffectiveStage& current) {
  for (Capability capability : stage.capabilities) {
    if (!Covers(current.capabilities, {capability})) current.capabilities.push_back(capability);
  }
  if (stage.base_url) current.base_url = *stage.base_url;
  if (stage.path) current.path = *stage.path;
  for (const auto& [name, value] : stage.headers) {
    // (An init-capture: clang 14 cannot capture a structured binding.)
    std::erase_if(current.headers,
                  [&, key = name](const auto& h) { return SameHeaderName(h.first, key); });
    current.headers[name] = value;
  }
  current.body.merge_patch(stage.body);
  if (stage.persona_credentials) current.persona_credentials = *stage.persona_credentials;
  if (stage.tools) current.tools = *stage.tools;
}

std::vector<EffectiveStage> EffectiveStages(const Scenario& scenario) {
  std::vector<EffectiveStage> effective;
  EffectiveStage current;
  current.base_url = scenario.target.base_url;
  current.path =
      scenario.target.endpoint == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";
  current.body = nlohmann::json::object();
  for (const Stage& stage : scenario.stages) {
    current.name = stage.name;
    ApplyOverlay(stage, current);
    current.tasks = stage.tasks;
    current.phases = stage.phases;
    if (current.phases.empty()) {
      for (const LoadPhase& phase : scenario.phases)
        current.phases.push_back(phase.kind);
    }
    effective.push_back(current);
  }
  return effective;
}

}  // namespace stagegate::manifest

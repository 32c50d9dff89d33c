#include "manifest/fingerprint.h"

#include "base/files.h"
#include "base/hashing.h"
#include "base/redact.h"

namespace stagegate::manifest {

namespace {

using nlohmann::json;

template <typename T>
json Optional(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json Names(const std::vector<Capability>& capabilities) {
  json names = json::array();
  for (Capability capability : capabilities)
    names.push_back(NameOf(capability, kCapabilityNames));
  return names;
}

json RefJson(const std::optional<Ref>& ref) {
  return ref ? json(ref->name) : json(nullptr);
}

json PhaseJson(const LoadPhase& phase) {
  json spikes = json::array();
  for (const Spike& spike : phase.spikes)
    spikes.push_back(
        {{"at_s", spike.at_s}, {"duration_s", spike.duration_s}, {"rate", spike.rate}});
  json out = {
      {"kind", NameOf(phase.kind, kPhaseNames)},
      {"rate", Optional(phase.rate)},
      {"concurrency", Optional(phase.concurrency)},
      {"rates", phase.rate_levels},
      {"concurrencies", phase.concurrency_levels},
      {"bisect", phase.bisect},
      {"arrival", NameOf(phase.arrival, kArrivalNames)},
      {"burstiness", Optional(phase.burstiness)},
      {"ramp_to", Optional(phase.ramp_to)},
      {"spikes", spikes},
      {"max_concurrency", Optional(phase.max_concurrency)},
      {"on_full", NameOf(phase.on_full, kOnFullNames)},
      {"duration_s", Optional(phase.duration_s)},
      {"requests", Optional(phase.requests)},
      {"grace_s", phase.grace_s},
      {"window_s", phase.window_s},
  };
  // What judges a sweep's levels, and how a search narrows down: they decide its finding.
  if (phase.kind == PhaseKind::kSweep) {
    out["search"] = phase.search ? json("auto") : json(nullptr);
    out["up_to"] = Optional(phase.up_to);
    out["resolution"] = phase.resolution;
    out["keep_pace"] = phase.keep_pace;
    out["min_completed"] = phase.min_completed;
    out["max_duration_s"] = Optional(phase.max_duration_s);
  }
  return out;
}

json StageJson(const Stage& stage) {
  json phases = json::array();
  for (PhaseKind kind : stage.phases)
    phases.push_back(NameOf(kind, kPhaseNames));
  return {
      {"name", stage.name},
      {"capabilities", Names(stage.capabilities)},
      {"base_url", stage.base_url ? json(UrlWithoutUserinfo(*stage.base_url)) : json(nullptr)},
      {"path", Optional(stage.path)},
      {"headers", stage.headers},
      {"body", stage.body},
      {"persona_credentials", Optional(stage.persona_credentials)},
      {"tools", Optional(stage.tools)},
      {"phases", phases},
      {"tasks", NameOf(stage.tasks, kTaskSelectionNames)},
  };
}

// A file by what it holds: its sha256 (of the bytes, "" when it cannot be read: the run refuses
// it then), not its path.
std::string FileSha256(const PathRef& path) {
  Result<std::string> text = ReadFile(path.resolved, size_t{1} << 30);
  return text.ok() ? Sha256Hex(*text) : "";
}

json DatasetJson(const InputSpec& input) {
  const auto optional = [](const std::optional<int64_t>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {{"sha256", FileSha256(input.dataset)},
          {"format", input.dataset_format},
          {"min_tokens", optional(input.min_tokens)},
          {"max_tokens", optional(input.max_tokens)}};
}

json TokensJson(const std::optional<TokenDistribution>& tokens) {
  if (!tokens) return nullptr;
  return {{"mean", tokens->mean}, {"std", tokens->std}};
}

json HttpCallJson(const HttpCall& call) {
  return {{"method", call.method}, {"url", UrlWithoutUserinfo(call.url)}, {"body", call.body}};
}

json FaultsJson(const FaultControls& faults) {
  json denial = json::array();
  for (const AccessDenialProbe& p : faults.access_denial) {
    denial.push_back({{"name", p.name},
                      {"credentials", NameOf(p.credentials, kCredentialsNames)},
                      {"persona", RefJson(p.persona)},
                      {"task", RefJson(p.task)},
                      {"prompt", p.prompt},
                      {"expect_status", p.expect_status},
                      {"expect_answer", p.expect_answer},
                      {"positive_control", RefJson(p.positive_control)},
                      {"repeat", p.repeat}});
  }
  json outage = json::array();
  for (const ToolOutageProbe& p : faults.tool_outage) {
    const Actuator& a = p.actuator;
    json actuator = {{"kind", NameOf(a.kind, kActuatorKindNames)}};
    if (a.kind == ActuatorKind::kProxy) {
      actuator.update({{"mode", NameOf(a.mode, kProxyModeNames)},
                       {"delay_ms", a.delay_ms},
                       {"status", a.status},
                       {"bytes_per_s", a.bytes_per_s}});
      if (a.listen_port)
        actuator.update({{"listen_port", *a.listen_port}, {"upstream", a.upstream}});
    } else if (a.kind == ActuatorKind::kCommand) {
      actuator.update({{"inject", a.inject_command}, {"restore", a.restore_command}});
    } else {
      actuator.update(
          {{"inject", HttpCallJson(a.inject_http)}, {"restore", HttpCallJson(a.restore_http)}});
    }
    outage.push_back(
        {{"name", p.name},
         {"task", RefJson(p.task)},
         {"prompt", p.prompt},
         {"persona", RefJson(p.persona)},
         {"actuator", actuator},
         {"requests", {{"before", p.before}, {"during", p.during}, {"after", p.after}}},
         {"answer_within_ms", p.answer_within_ms},
         {"expect_answer", p.expect_answer},
         {"must_not", p.must_not},
         {"expect_working", p.expect_working},
         {"recover_within_s", p.recover_within_s}});
  }
  return {{"access_denial", denial}, {"tool_outage", outage}};
}

json LatencyJson(const std::vector<LatencyThreshold>& thresholds) {
  json latency = json::array();
  for (const LatencyThreshold& t : thresholds)
    latency.push_back({{"metric", NameOf(t.metric, kLatencyMetricNames)},
                       {"percentile", t.percentile},
                       {"max_ms", t.max_ms}});
  return latency;
}

json ThresholdsJson(const Scenario& s) {
  json out = {{"latency", LatencyJson(s.thresholds.latency)},
              {"completion_rate", s.thresholds.completion_rate}};
  // Only a scenario with scopes has the key, so that others keep their fingerprints.
  if (s.thresholds.scopes.empty()) return out;
  json scopes = json::array();
  for (const ThresholdScope& scope : s.thresholds.scopes)
    scopes.push_back(
        {{"name", scope.name},
         {"category", scope.category},
         {"tag", scope.tag},
         {"latency", LatencyJson(scope.latency)},
         {"completion_rate", scope.completion_rate ? json(*scope.completion_rate) : json(nullptr)},
         {"min_requests", scope.min_requests}});
  out["scopes"] = scopes;
  return out;
}

json QualityJson(const QualityThresholds& q) {
  json floors = json::object();
  for (const auto& [ref, floor] : q.criterion_floors)
    floors[ref.name] = floor;
  json hard = json::array();
  for (const Ref& ref : q.hard_criteria)
    hard.push_back(ref.name);
  json out = {{"samples", {{"at_rest", q.samples_at_rest}, {"under_load", q.samples_under_load}}},
              {"reviewers_per_answer", q.reviewers_per_answer},
              {"min_scored_answers", q.min_scored_answers},
              {"min_agreement", q.min_agreement},
              {"min_mean", Optional(q.min_mean)},
              {"min_pass_rate", Optional(q.min_pass_rate)},
              {"criterion_floors", floors},
              {"hard_criteria", hard}};
  // Only a scenario with the key has it, so that other scenarios keep their fingerprints.
  if (q.judge)
    out["judge"] = {{"model", q.judge->model},
                    {"min_kappa", q.judge->min_kappa},
                    {"min_overlap", q.judge->min_overlap}};
  // Only a scenario with the rule has the key, so that others keep their fingerprints.
  if (q.no_regression_from != RegressionBaseline::kNone)
    out["no_regression_from"] = NameOf(q.no_regression_from, kRegressionBaselineNames);
  for (const NotWorseThan& rule : q.not_worse_than)
    out["not_worse_than"].push_back({{"baseline", rule.baseline.name},
                                     {"criterion", rule.criterion.name},
                                     {"margin", rule.margin}});
  return out;
}

// The scenario's input: its source and what the source needs.
json InputJson(const Scenario& s) {
  json input = {{"source", NameOf(s.input.source, kInputSourceNames)},
                {"input_tokens", TokensJson(s.input.input_tokens)},
                {"output_tokens", TokensJson(s.input.output_tokens)},
                {"extra_body", s.input.extra_body}};
  // Only a dataset input has the key, so that other scenarios keep their fingerprints.
  if (s.input.source == InputSource::kDataset) input["dataset"] = DatasetJson(s.input);
  if (s.input.source == InputSource::kTrace)
    input["trace"] = {{"sha256", FileSha256(s.input.trace)},
                      {"block_tokens", s.input.block_tokens}};
  if (!s.input.tokenizer.empty()) input["tokenizer"] = {{"sha256", FileSha256(s.input.tokenizer)}};
  if (const std::optional<SharedPrefixSpec>& prefix = s.input.shared_prefix)
    input["shared_prefix"] = {
        {"count", prefix->count}, {"tokens", prefix->tokens}, {"share", prefix->share}};
  if (const std::optional<SessionSpec>& sessions = s.input.sessions)
    input["sessions"] = {{"turns", TokensJson(sessions->turns)},
                         {"think_ms", TokensJson(sessions->think_ms)},
                         {"follow_up_tokens", TokensJson(sessions->follow_up_tokens)}};
  return input;
}

}  // namespace

json CanonicalCorpus(const Corpus& corpus) {
  json personas = json::array();
  for (const Persona& p : corpus.personas)
    personas.push_back({{"name", p.name},
                        {"description", p.description},
                        {"token_env", p.token_env},
                        {"groups", p.groups}});
  json tools = json::array();
  for (const ToolDefinition& t : corpus.tools)
    tools.push_back(
        {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
  json tasks = json::array();
  for (const Task& t : corpus.tasks) {
    json messages = json::array();
    for (const ChatMessage& m : t.messages)
      messages.push_back({{"role", m.role}, {"content", m.content}});
    json checks = json::array();
    for (const Check& c : t.checks) {
      json check = {{"kind", NameOf(c.kind, kCheckKindNames)}};
      if (c.kind == CheckKind::kRefusal)
        check["refusal"] = c.expect_refusal;
      else if (c.kind == CheckKind::kJsonKeys)
        check["keys"] = c.keys;
      else
        check["text"] = c.text;
      if (c.kind == CheckKind::kToolCall) check["arguments"] = c.arguments;
      checks.push_back(check);
    }
    json task = {{"id", t.id},
                 {"prompt", t.prompt},
                 {"messages", messages},
                 {"persona", t.persona.name},
                 {"category", t.category},
                 {"needs", Names(t.needs)},
                 {"reference", t.reference},
                 {"checks", checks},
                 {"rubric", RefJson(t.rubric)},
                 {"approved_by", t.approved_by},
                 {"source", t.source}};
    // Only a task with follow-ups has the key, so that other corpora keep their fingerprints.
    if (!t.follow_ups.empty()) task["follow_ups"] = t.follow_ups;
    if (!t.tags.empty()) task["tags"] = t.tags;
    if (t.example) task["example"] = true;
    if (t.required) task["required"] = true;  // it changes what the gate decides
    tasks.push_back(std::move(task));
  }
  json documents = json::array();
  for (const Document& d : corpus.documents)
    documents.push_back({{"id", d.id},
                         {"title", d.title},
                         {"access", d.access},
                         {"canary", d.canary},
                         {"body", d.body}});
  return {{"name", corpus.name},   {"version", corpus.version},
          {"owner", corpus.owner}, {"description", corpus.description},
          {"personas", personas},  {"tools", tools},
          {"tasks", tasks},        {"documents", documents}};
}

json CanonicalRubric(const Rubric& rubric) {
  json criteria = json::array();
  for (const Criterion& c : rubric.criteria) {
    json scale = json::object();
    for (const auto& [level, anchor] : c.scale)
      scale[std::to_string(level)] = anchor;
    criteria.push_back({{"id", c.id},
                        {"question", c.question},
                        {"weight", c.weight},
                        {"hard", c.hard},
                        {"floor", c.floor},
                        {"scale", scale}});
  }
  return {{"id", rubric.id},
          {"title", rubric.title},
          {"criteria", criteria},
          {"pass_rule",
           {{"min_weighted_mean", Optional(rubric.pass_rule.min_weighted_mean)},
            {"min_each", Optional(rubric.pass_rule.min_each)}}}};
}

namespace {

// The bundle's corpus by its name, version and content; null without one.
json CorpusRefJson(const Bundle& bundle) {
  if (!bundle.corpus) return nullptr;
  return {{"name", bundle.corpus->name},
          {"version", bundle.corpus->version},
          {"sha256", Sha256Hex(CanonicalCorpus(*bundle.corpus).dump())}};
}

// The bundle's rubric by its id and content; null without one.
json RubricRefJson(const Bundle& bundle) {
  if (!bundle.rubric) return nullptr;
  return {{"id", bundle.rubric->id}, {"sha256", Sha256Hex(CanonicalRubric(*bundle.rubric).dump())}};
}

// The scenario's target, without credentials in its URLs.
json TargetJson(const Target& t) {
  // A sim profile named by path enters by its content, like the corpus.
  std::string profile = t.sim_profile;
  if (profile != "default" && profile != "fast") {
    Result<std::string> text = ReadFile(profile);
    profile = "sha256:" + (text.ok() ? Sha256Hex(*text) : std::string("unreadable"));
  }
  return {{"kind", NameOf(t.kind, kTargetKindNames)},
          {"sim_profile", profile},
          {"base_url", UrlWithoutUserinfo(t.base_url)},
          {"api_key_env", t.api_key_env},
          {"metrics_url", UrlWithoutUserinfo(t.metrics_url)},
          {"model", t.model},
          {"endpoint", NameOf(t.endpoint, kEndpointNames)},
          {"stream", t.stream},
          {"timeouts",
           {{"connect_ms", t.timeouts.connect_ms},
            {"first_token_ms", t.timeouts.first_token_ms},
            {"total_ms", t.timeouts.total_ms}}}};
}

// The facts a report records: the model, where it runs, and how it samples.
json ManifestJson(const ManifestFacts& m) {
  return {{"model", m.model},
          {"model_version", m.model_version},
          {"hardware", m.hardware},
          {"serving_stack", m.serving_stack},
          {"sampling",
           {{"temperature", Optional(m.temperature)},
            {"top_p", Optional(m.top_p)},
            {"max_tokens", Optional(m.max_tokens)}}}};
}

// Adds the keys only some scenarios have (decisions, slices, client settings, cost), each only
// when the scenario has it.
void AddOptionalKeys(const Scenario& s, json& canonical) {
  if (s.decisions.present)
    canonical[kDecisionsKey] = {{"owners", s.decisions.owners},
                                {"require_signoff", s.decisions.require_signoff}};
  if (s.slice_s) canonical[kSliceKey] = *s.slice_s;
  // Only a scenario that changes how the client reads has the key, so that others keep their
  // fingerprints. Read stamps change what every latency holds.
  if (s.client != ClientSettings{})
    canonical["client"] = {{"busy_poll", s.client.busy_poll},
                           {"receive_times", NameOf(s.client.receive_times, kReceiveTimesNames)}};
  // Only a scenario with a cost section has the key, which the fingerprint leaves out anyway.
  if (const std::optional<Cost>& cost = s.cost)
    canonical[kCostKey] = {{"price_per_hour", cost->price_per_hour},
                           {"per", NameOf(cost->per, kCostPerNames)},
                           {"count", cost->count},
                           {"currency", cost->currency},
                           {"source", cost->source}};
}

}  // namespace

json CanonicalScenario(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  json stages = json::array();
  for (const Stage& stage : s.stages)
    stages.push_back(StageJson(stage));
  json phases = json::array();
  for (const LoadPhase& phase : s.phases)
    phases.push_back(PhaseJson(phase));
  const json corpus = CorpusRefJson(bundle);
  const json rubric = RubricRefJson(bundle);
  const json target = TargetJson(s.target);
  const json input = InputJson(s);
  json canonical = {
      {"format", 1},
      {"name", s.name},
      {"manifest", ManifestJson(s.manifest)},
      {"seed", s.seed},
      {"corpus", corpus},
      {"rubric", rubric},
      {"target", target},
      {"stages", stages},
      {"input", input},
      {"phases", phases},
      {"thresholds", ThresholdsJson(s)},
      {"quality", QualityJson(s.quality)},
      {"recovery",
       {{"shed_statuses", s.recovery.shed_statuses},
        {"require_retry_after", s.recovery.require_retry_after},
        {"max_shed_latency_ms", s.recovery.max_shed_latency_ms},
        {"max_recovery_s", s.recovery.max_recovery_s}}},
      {"faults", FaultsJson(s.faults)},
      {"on_stage_failure", NameOf(s.on_stage_failure, kOnStageFailureNames)},
      {"triage",
       {{"tool_failure_patterns", s.triage.tool_failure_patterns},
        {"refusal_patterns", s.triage.refusal_patterns}}},
      {"telemetry",
       {{"scrape_interval_ms", s.telemetry.scrape_interval_ms},
        {"gpu", NameOf(s.telemetry.gpu, kGpuTelemetryNames)},
        {"dcgm_url", UrlWithoutUserinfo(s.telemetry.dcgm_url)}}},
  };
  AddOptionalKeys(s, canonical);
  return canonical;
}

std::string FingerprintOf(json canonical, std::initializer_list<const char*> left_out) {
  if (canonical.is_object())  // a store's, read back: whatever it holds
    for (const char* key : left_out)
      canonical.erase(key);
  return Sha256Hex(canonical.dump(-1, ' ', false, json::error_handler_t::replace));
}

Fingerprint ComputeFingerprint(const Bundle& bundle) {
  const json canonical = CanonicalScenario(bundle);
  Fingerprint fingerprint;
  // What the test cost, who decides and how its figures are sliced are kept with the run but are
  // not part of what it measured: two runs that differ only in them are comparable.
  fingerprint.value = FingerprintOf(canonical, {kCostKey, kDecisionsKey, kSliceKey});
  if (!canonical["corpus"].is_null()) fingerprint.corpus_sha = canonical["corpus"]["sha256"];
  if (!canonical["rubric"].is_null()) fingerprint.rubric_sha = canonical["rubric"]["sha256"];
  return fingerprint;
}

std::string ProfileFingerprint(const nlohmann::json& config) {
  return FingerprintOf(config, {"shard", "start_at_unix_ms", "merged_shards"});
}

}  // namespace stagegate::manifest

// The fault controls of a run: access-denial probes and tool-outage probes, one request at a
// time through the final stage's configuration, each judged and stored with its evidence.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "faults/access_denial.h"
#include "faults/actuator.h"
#include "faults/fault_proxy.h"
#include "faults/tool_outage.h"
#include "scenario/runner.h"
#include "scenario/runner_plan.h"
#include "sim/sim_server.h"

namespace stagegate::scenario {

using nlohmann::json;

namespace {

// How long an actuator's command or HTTP call may take.
constexpr std::chrono::milliseconds kActuatorTimeout{30000};

// Points our sim's tools back at its tool service when it goes, once the probes are done with
// the proxy they went through.
struct PointBack {
  sim::SimServer* sim = nullptr;
  ~PointBack() {
    if (sim) sim->SetToolUrl(sim->tool_service_url());
  }
};

// The actuator that takes a probe's tool down and brings it back; `proxy` is the one it drives
// when the probe's actuator is a proxy.
std::unique_ptr<faults::Actuator> MakeActuator(const manifest::ToolOutageProbe& probe,
                                               faults::FaultProxy* proxy) {
  const manifest::Actuator& a = probe.actuator;
  if (a.kind == manifest::ActuatorKind::kProxy) return faults::MakeProxyActuator(*proxy, a);
  if (a.kind == manifest::ActuatorKind::kCommand)
    return faults::MakeCommandActuator(a, probe.name, kActuatorTimeout);
  return faults::MakeHttpActuator(a, kActuatorTimeout);
}

}  // namespace

// One tool-outage probe under way: its parts (before, during and after the fault), each run as
// a step of the runner, and what is seen of the fault. Refers to the runner, the probe and the
// request source, which outlive it.
class Runner::OutageProbeRun {
 public:
  OutageProbeRun(Runner& runner, const manifest::ToolOutageProbe& probe,
                 const load::RequestSource& source, std::string actuator)
      : runner_(runner),
        probe_(probe),
        source_(source),
        label_("tool_outage " + probe.name),
        // A request that hangs is cut soon after the bound it already missed.
        bound_ms_(static_cast<int64_t>(std::ceil(probe.answer_within_ms)) + 1000),
        seen_{.actuator = std::move(actuator)} {}

  // Sends the probe's parts: before, then the fault injected by `actuator` (on a replay, as the
  // first shard's run had it, with no actuator), during, restored, after. `proxy` is the proxy
  // the actuator drives, if any.
  Status Run(faults::Actuator* actuator, faults::FaultProxy* proxy);
  // Judges what was seen and stores it with its evidence, noting in `report` a failed restore.
  Status JudgeAndStore(RunReport& report);

 private:
  // Where a part's records lie in the runner's records, and its first phase.
  struct Part {
    size_t first = 0, count = 0;
    int64_t phase_id = 0;
  };

  // The step of one part; `level` numbers the part's steps.
  PhaseStep PartStep(const std::string& name, int64_t count, int64_t level) const;
  // What the first shard's run kept in a part's config (merge); null when it has no such part.
  json StoredConfig(const std::string& name, int64_t level) const;
  // Runs `count` requests of part `name` and adds them to `part`.
  Status RunPart(const std::string& name, int64_t count, int64_t level, Part& part);
  // A replay: the fault as the first shard's run injected and restored it, and the during part.
  Status ReplayFault();
  // Injects the fault, runs the during part, and restores, whatever happens in between.
  Status InjectFault(faults::Actuator& actuator);
  // The after part, then one request at a time until the tool works or the time is up.
  Status RunAfter();

  Runner& runner_;
  const manifest::ToolOutageProbe& probe_;
  const load::RequestSource& source_;
  const std::string label_;
  const int64_t bound_ms_;
  faults::OutageObservation seen_;
  Part before_, during_, after_;
};

PhaseStep Runner::OutageProbeRun::PartStep(const std::string& name, int64_t count,
                                           int64_t level) const {
  PhaseStep step = runner_.ProbeStep(label_ + " " + name, count, bound_ms_);
  step.level = static_cast<double>(level);
  return step;
}

json Runner::OutageProbeRun::StoredConfig(const std::string& name, int64_t level) const {
  const store::PhaseInfo* p = runner_.Stored("faults", PartStep(name, 1, level));
  return p ? json::parse(p->config_json, nullptr, false) : json();
}

Status Runner::OutageProbeRun::RunPart(const std::string& name, int64_t count, int64_t level,
                                       Part& part) {
  PhaseStep step = PartStep(name, count, level);
  if (name == "during") step.extra_config["actuator"] = seen_.actuator;
  if (name == "after" && seen_.restored_ns) step.extra_config["restored_ns"] = *seen_.restored_ns;
  // Measured again on a resume: the parts of a probe only mean something together.
  Result<StepResult> result = runner_.RunStep("faults", std::move(step), source_, true);
  if (!result.ok()) return result.status();
  if (part.count == 0) part.first = result->first_record;
  part.count += result->record_count;
  if (part.phase_id == 0) part.phase_id = result->phase_id;
  return Status::Ok();
}

Status Runner::OutageProbeRun::ReplayFault() {
  const json during_config = StoredConfig("during", 1);
  const json after_config = StoredConfig("after", 1);
  seen_.actuator = during_config.value("actuator", "");
  seen_.injected = during_config.is_object()
                       ? Status::Ok()
                       : Status::NotFound("not injected in the first shard's run");
  if (seen_.injected.ok()) SG_RETURN_IF_ERROR(RunPart("during", probe_.during, 1, during_));
  seen_.restored = after_config.is_object() || probe_.after == 0
                       ? Status::Ok()
                       : Status::NotFound("not restored in the first shard's run");
  if (after_config.contains("restored_ns") && after_config["restored_ns"].is_number_integer())
    seen_.restored_ns = after_config["restored_ns"].get<int64_t>();
  return Status::Ok();
}

Status Runner::OutageProbeRun::InjectFault(faults::Actuator& actuator) {
  faults::InjectedFault fault(actuator);  // restores on every way out of this function
  if (!runner_.stop_.load()) {
    seen_.injected = fault.Begin();
    if (seen_.injected.ok()) SG_RETURN_IF_ERROR(RunPart("during", probe_.during, 1, during_));
  }
  seen_.restored = fault.Restore();
  seen_.restored_ns = runner_.clock_.NowNs() - runner_.origin_ns_;
  return Status::Ok();
}

Status Runner::OutageProbeRun::RunAfter() {
  SG_RETURN_IF_ERROR(RunPart("after", probe_.after, 1, after_));
  const int64_t deadline_ns =
      *seen_.restored_ns + static_cast<int64_t>(probe_.recover_within_s * 1e9);
  const auto more = [&](int64_t level) {
    return runner_.settings_.replay ? StoredConfig("after", level).is_object()
                                    : runner_.clock_.NowNs() - runner_.origin_ns_ < deadline_ns;
  };
  for (int64_t level = 2; !runner_.stop_.load() && more(level); ++level) {
    const auto records = std::span(runner_.records_).subspan(after_.first, after_.count);
    if (std::any_of(records.begin(), records.end(),
                    [&](const auto& r) { return faults::ToolWorked(probe_, r); }))
      break;
    SG_RETURN_IF_ERROR(RunPart("after", 1, level, after_));
  }
  return Status::Ok();
}

Status Runner::OutageProbeRun::Run(faults::Actuator* actuator, faults::FaultProxy* proxy) {
  const int64_t connections_at_start = proxy ? proxy->connections() : 0;
  if (probe_.before > 0) SG_RETURN_IF_ERROR(RunPart("before", probe_.before, 1, before_));
  if (proxy && probe_.before > 0)
    seen_.proxy_connections_before = proxy->connections() - connections_at_start;
  if (runner_.settings_.replay)
    SG_RETURN_IF_ERROR(ReplayFault());
  else
    SG_RETURN_IF_ERROR(InjectFault(*actuator));
  if (seen_.injected.ok() && seen_.restored.ok() && probe_.after > 0 && !runner_.stop_.load())
    SG_RETURN_IF_ERROR(RunAfter());
  return Status::Ok();
}

Status Runner::OutageProbeRun::JudgeAndStore(RunReport& report) {
  // Spans taken only now: the runner's records grow, and move, while the parts run.
  seen_.before = std::span(runner_.records_).subspan(before_.first, before_.count);
  seen_.during = std::span(runner_.records_).subspan(during_.first, during_.count);
  seen_.after = std::span(runner_.records_).subspan(after_.first, after_.count);
  seen_.interrupted = runner_.stop_.load();
  faults::ToolOutageFinding finding = faults::JudgeToolOutage(probe_, seen_);
  if (!seen_.restored.ok())
    report.notes.push_back("tool-outage probe '" + probe_.name +
                           "': the actuator could not restore, so the tool may still be down: " +
                           seen_.restored.message());
  const int64_t phase_id = during_.phase_id ? during_.phase_id : before_.phase_id;
  SG_RETURN_IF_ERROR(runner_.StoreFaultResult(probe_.name, "tool_outage", phase_id, finding.verdict,
                                              faults::ToolOutageToJson(finding)));
  report.outages.push_back(std::move(finding));
  return Status::Ok();
}

PhaseStep Runner::ProbeStep(std::string label, int64_t count,
                            std::optional<int64_t> bound_ms) const {
  // One request at a time: the probes test access control and failure handling, not load.
  const manifest::Timeouts& timeouts = bundle_.scenario.target.timeouts;
  PhaseStep s{.kind = manifest::PhaseKind::kSteady,
              .level = 1,
              .closed_loop = true,
              .label = std::move(label)};
  s.options = {.concurrency = 1,
               .requests = count,
               .grace_s = 5,
               .workers = 1,
               .timeouts = {.connect_ms = timeouts.connect_ms,
                            .first_token_ms = bound_ms.value_or(timeouts.first_token_ms),
                            .total_ms = bound_ms.value_or(timeouts.total_ms)}};
  return s;
}

std::optional<std::string> Runner::TokenOf(const std::optional<manifest::Ref>& persona,
                                           const Endpoint& endpoint) const {
  const manifest::Corpus* corpus = bundle_.corpus ? &*bundle_.corpus : nullptr;
  const manifest::Persona* p = corpus && persona ? corpus->FindPersona(persona->name) : nullptr;
  return p ? PersonaToken(*p, endpoint.sim) : std::nullopt;
}

Status Runner::StoreFaultResult(const std::string& probe, const std::string& kind, int64_t phase_id,
                                const std::string& verdict, const json& evidence) {
  const auto text = [](const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  SG_RETURN_IF_ERROR(
      store_.AddFaultResult(run_id_, probe, kind, phase_id, verdict, text(evidence)));
  for (const json& q : evidence["requests"])
    SG_RETURN_IF_ERROR(store_.AddFaultRequest(run_id_, probe, kind, q["part"], q["phase_id"],
                                              q["sequence"], q["passed"] ? "pass" : "fail",
                                              text(q)));
  return Status::Ok();
}

Status Runner::RunDenialProbes(const StageRequests& requests, const Endpoint& endpoint,
                               RunReport& report) {
  const manifest::Corpus* corpus = bundle_.corpus ? &*bundle_.corpus : nullptr;
  std::vector<std::string> canaries;
  if (corpus)
    for (const manifest::Document& document : corpus->documents)
      if (!document.canary.empty()) canaries.push_back(document.canary);
  for (const manifest::AccessDenialProbe& probe : bundle_.scenario.faults.access_denial) {
    if (stop_.load()) break;
    const manifest::Task* task =
        corpus && probe.task ? corpus->FindTask(probe.task->name) : nullptr;
    std::optional<std::string> bearer;
    if (probe.credentials == manifest::Credentials::kPersona)
      bearer = TokenOf(probe.persona
                           ? probe.persona
                           : (task ? std::optional<manifest::Ref>(task->persona) : std::nullopt),
                       endpoint);
    else if (probe.credentials == manifest::Credentials::kInvalid)
      bearer = "stagegate-invalid-token";
    const std::string persona =
        probe.persona ? probe.persona->name
        : probe.credentials == manifest::Credentials::kPersona && task
            ? task->persona.name
            : std::string(manifest::NameOf(probe.credentials, manifest::kCredentialsNames));
    const load::RequestSpec spec = requests.Probe(task, probe.prompt, bearer, persona);
    Result<StepResult> attempts =
        RunStep("faults", ProbeStep("access_denial " + probe.name, probe.repeat),
                [&spec](int64_t) { return spec; });
    if (!attempts.ok()) return attempts.status();
    std::span<const load::RequestRecord> control;
    if (probe.positive_control && !stop_.load()) {
      const load::RequestSpec allowed =
          requests.Probe(task, probe.prompt, TokenOf(probe.positive_control, endpoint),
                         probe.positive_control->name);
      Result<StepResult> checked =
          RunStep("faults", ProbeStep("access_denial " + probe.name + " control", 1),
                  [&allowed](int64_t) { return allowed; });
      if (!checked.ok()) return checked.status();
      control = RecordsOf(*checked);
    }
    faults::DenialFinding finding =
        faults::JudgeDenial(probe, RecordsOf(*attempts), control, canaries);
    SG_RETURN_IF_ERROR(StoreFaultResult(probe.name, "access_denial", attempts->phase_id,
                                        finding.verdict, faults::DenialToJson(finding)));
    report.denials.push_back(std::move(finding));
  }
  return Status::Ok();
}

Status Runner::RunToolOutageProbes(const StageRequests& requests, Plan& plan, RunReport& report) {
  const std::vector<manifest::ToolOutageProbe>& probes = bundle_.scenario.faults.tool_outage;
  const manifest::Corpus* corpus = bundle_.corpus ? &*bundle_.corpus : nullptr;
  // Our sim calls its tools through a proxy of ours during these probes only: during the load
  // its hop would add to what the tools stage measures.
  std::unique_ptr<faults::FaultProxy> sim_proxy;
  PointBack point_back;
  const bool any_proxy = std::any_of(probes.begin(), probes.end(), [](const auto& p) {
    return p.actuator.kind == manifest::ActuatorKind::kProxy;
  });
  if (plan.sim && any_proxy) {
    Result<std::unique_ptr<faults::FaultProxy>> proxy =
        faults::FaultProxy::Start("127.0.0.1", plan.sim->tool_port());
    if (!proxy.ok()) return proxy.status().WithContext("starting the fault proxy");
    sim_proxy = std::move(*proxy);
    plan.sim->SetToolUrl(sim_proxy->url());
    point_back.sim = plan.sim.get();
  }
  for (const manifest::ToolOutageProbe& probe : probes) {
    if (stop_.load()) break;
    const manifest::Task* task =
        corpus && probe.task ? corpus->FindTask(probe.task->name) : nullptr;
    const std::optional<manifest::Ref> persona =
        probe.persona ? probe.persona
                      : (task ? std::optional<manifest::Ref>(task->persona) : std::nullopt);
    const load::RequestSpec spec =
        requests.Probe(task, probe.prompt, TokenOf(persona, plan.endpoint),
                       persona ? persona->name : std::string());
    const load::RequestSource source = [&spec](int64_t) { return spec; };

    faults::FaultProxy* proxy = nullptr;
    std::unique_ptr<faults::Actuator> actuator;
    // A replay is judged again from the store: nothing is injected.
    if (!settings_.replay) {
      if (probe.actuator.kind == manifest::ActuatorKind::kProxy)
        proxy = sim_proxy ? sim_proxy.get() : plan.proxies.at(*probe.actuator.listen_port).get();
      actuator = MakeActuator(probe, proxy);
    }
    OutageProbeRun run(*this, probe, source, actuator ? actuator->Describe() : "");
    SG_RETURN_IF_ERROR(run.Run(actuator.get(), proxy));
    SG_RETURN_IF_ERROR(run.JudgeAndStore(report));
  }
  return Status::Ok();
}

}  // namespace stagegate::scenario

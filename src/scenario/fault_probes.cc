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

}  // namespace

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
  struct PointBack {
    sim::SimServer* sim = nullptr;
    ~PointBack() {
      if (sim) sim->SetToolUrl(sim->tool_service_url());
    }
  } point_back;
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

    const manifest::Actuator& a = probe.actuator;
    faults::FaultProxy* proxy = nullptr;
    std::unique_ptr<faults::Actuator> actuator;
    if (settings_.replay) {
      // Judged again from the store: nothing is injected.
    } else if (a.kind == manifest::ActuatorKind::kProxy) {
      proxy = sim_proxy ? sim_proxy.get() : plan.proxies.at(*a.listen_port).get();
      actuator = faults::MakeProxyActuator(*proxy, a);
    } else if (a.kind == manifest::ActuatorKind::kCommand) {
      actuator = faults::MakeCommandActuator(a, probe.name, kActuatorTimeout);
    } else {
      actuator = faults::MakeHttpActuator(a, kActuatorTimeout);
    }

    // A request that hangs is cut soon after the bound it already missed.
    const auto bound_ms = static_cast<int64_t>(std::ceil(probe.answer_within_ms)) + 1000;
    const std::string label = "tool_outage " + probe.name;
    faults::OutageObservation seen{.actuator = actuator ? actuator->Describe() : ""};
    struct Part {
      size_t first = 0, count = 0;
      int64_t phase_id = 0;
    } before, during, after;
    // Measured again on a resume: the parts of a probe only mean something together.
    const auto part_step = [&](const std::string& name, int64_t count, int64_t level) {
      PhaseStep step = ProbeStep(label + " " + name, count, bound_ms);
      step.level = static_cast<double>(level);
      return step;
    };
    // What the first shard's run kept in a part's config (merge); null when it has no such part.
    const auto stored_config = [&](const std::string& name, int64_t level) {
      const store::PhaseInfo* p = Stored("faults", part_step(name, 1, level));
      return p ? json::parse(p->config_json, nullptr, false) : json();
    };
    const auto run_part = [&](const std::string& name, int64_t count, int64_t level,
                              Part& part) -> Status {
      PhaseStep step = part_step(name, count, level);
      if (name == "during") step.extra_config["actuator"] = seen.actuator;
      if (name == "after" && seen.restored_ns) step.extra_config["restored_ns"] = *seen.restored_ns;
      Result<StepResult> result = RunStep("faults", std::move(step), source, true);
      if (!result.ok()) return result.status();
      if (part.count == 0) part.first = result->first_record;
      part.count += result->record_count;
      if (part.phase_id == 0) part.phase_id = result->phase_id;
      return Status::Ok();
    };
    const int64_t connections_at_start = proxy ? proxy->connections() : 0;
    if (probe.before > 0) SG_RETURN_IF_ERROR(run_part("before", probe.before, 1, before));
    if (proxy && probe.before > 0)
      seen.proxy_connections_before = proxy->connections() - connections_at_start;
    if (settings_.replay) {
      const json during_config = stored_config("during", 1);
      const json after_config = stored_config("after", 1);
      seen.actuator = during_config.value("actuator", "");
      seen.injected = during_config.is_object()
                          ? Status::Ok()
                          : Status::NotFound("not injected in the first shard's run");
      if (seen.injected.ok()) SG_RETURN_IF_ERROR(run_part("during", probe.during, 1, during));
      seen.restored = after_config.is_object() || probe.after == 0
                          ? Status::Ok()
                          : Status::NotFound("not restored in the first shard's run");
      if (after_config.contains("restored_ns") && after_config["restored_ns"].is_number_integer())
        seen.restored_ns = after_config["restored_ns"].get<int64_t>();
    } else {
      faults::InjectedFault fault(*actuator);  // restores on every way out of this block
      if (!stop_.load()) {
        seen.injected = fault.Begin();
        if (seen.injected.ok()) SG_RETURN_IF_ERROR(run_part("during", probe.during, 1, during));
      }
      seen.restored = fault.Restore();
      seen.restored_ns = clock_.NowNs() - origin_ns_;
    }
    if (seen.injected.ok() && seen.restored.ok() && probe.after > 0 && !stop_.load()) {
      // The `after` requests, then one at a time until the tool works or the time is up.
      SG_RETURN_IF_ERROR(run_part("after", probe.after, 1, after));
      const int64_t deadline_ns =
          *seen.restored_ns + static_cast<int64_t>(probe.recover_within_s * 1e9);
      const auto more = [&](int64_t level) {
        return settings_.replay ? stored_config("after", level).is_object()
                                : clock_.NowNs() - origin_ns_ < deadline_ns;
      };
      for (int64_t level = 2; !stop_.load() && more(level); ++level) {
        const auto records = std::span(records_).subspan(after.first, after.count);
        if (std::any_of(records.begin(), records.end(),
                        [&](const auto& r) { return faults::ToolWorked(probe, r); }))
          break;
        SG_RETURN_IF_ERROR(run_part("after", 1, level, after));
      }
    }
    seen.before = std::span(records_).subspan(before.first, before.count);
    seen.during = std::span(records_).subspan(during.first, during.count);
    seen.after = std::span(records_).subspan(after.first, after.count);
    seen.interrupted = stop_.load();
    faults::ToolOutageFinding finding = faults::JudgeToolOutage(probe, seen);
    if (!seen.restored.ok())
      report.notes.push_back("tool-outage probe '" + probe.name +
                             "': the actuator could not restore, so the tool may still be down: " +
                             seen.restored.message());
    const int64_t phase_id = during.phase_id ? during.phase_id : before.phase_id;
    SG_RETURN_IF_ERROR(StoreFaultResult(probe.name, "tool_outage", phase_id, finding.verdict,
                                        faults::ToolOutageToJson(finding)));
    report.outages.push_back(std::move(finding));
  }
  return Status::Ok();
}

}  // namespace stagegate::scenario

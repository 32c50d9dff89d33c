#include "manifest/fault_loader.h"

#include "manifest/patterns.h"

namespace stagegate::manifest {

namespace {

constexpr Range kErrorStatus{.min = 400, .max = 599};

std::vector<int64_t> ReadStatuses(const YamlFile& file, const YAML::Node& node,
                                  const std::string& key) {
  std::vector<int64_t> statuses;
  if (!node.IsSequence()) {
    file.Error(node, "'" + key + "' must be a list of HTTP statuses, got " + Describe(node));
    return statuses;
  }
  for (const YAML::Node& item : node) {
    if (auto status = ReadInteger(file, item, "a status in '" + key + "'", kErrorStatus))
      statuses.push_back(*status);
  }
  return statuses;
}

// Reads `task` or `prompt` (exactly one) into the probe's fields.
void ReadTaskOrPrompt(MapReader& map, const std::string& what, std::optional<Ref>& task,
                      std::string& prompt) {
  task = ReadRef(map, "task");
  YAML::Node prompt_node = map.Get("prompt");
  if (prompt_node.IsDefined())
    prompt = ReadString(map.file(), prompt_node, "'prompt'").value_or("");
  if (task && prompt_node.IsDefined()) {
    map.file().Error(prompt_node, "give either 'task' or 'prompt', not both");
  } else if (!task && !prompt_node.IsDefined()) {
    map.file().Error(map.pos(), what + ": give either 'task' (a corpus task) or 'prompt'");
  }
}

HttpCall ReadHttpCall(const YamlFile& file, const YAML::Node& node, const std::string& what) {
  HttpCall call;
  MapReader map(file, node, what);
  call.method = map.String("method").value_or("POST");
  call.url = map.String("url", Need::kRequired).value_or("");
  YAML::Node body = map.Get("body");
  if (body.IsDefined()) call.body = ReadJson(file, body);
  map.Finish();
  return call;
}

Actuator ReadActuator(const YamlFile& file, const YAML::Node& node) {
  Actuator actuator;
  MapReader map(file, node, "actuator");
  actuator.kind =
      map.Enum("kind", kActuatorKindNames, Need::kRequired).value_or(ActuatorKind::kProxy);
  const bool proxy = actuator.kind == ActuatorKind::kProxy;
  const bool command = actuator.kind == ActuatorKind::kCommand;
  const bool http = actuator.kind == ActuatorKind::kHttp;
  YAML::Node mode = map.Get("mode", proxy ? Need::kRequired : Need::kOptional);
  YAML::Node delay = map.Get("delay_ms");
  YAML::Node status = map.Get("status");
  YAML::Node trickle = map.Get("bytes_per_s");
  YAML::Node listen = map.Get("listen_port");
  YAML::Node upstream = map.Get("upstream");
  YAML::Node inject = map.Get("inject", proxy ? Need::kOptional : Need::kRequired);
  YAML::Node restore = map.Get("restore", proxy ? Need::kOptional : Need::kRequired);
  if (mode.IsDefined())
    actuator.mode = ReadEnum(file, mode, "'mode'", kProxyModeNames).value_or(ProxyMode::kRefuse);
  if (delay.IsDefined())
    actuator.delay_ms = ReadInteger(file, delay, "'delay_ms'", kPositive).value_or(0);
  if (status.IsDefined())
    actuator.status = ReadInteger(file, status, "'status'", kErrorStatus).value_or(503);
  if (trickle.IsDefined())
    actuator.bytes_per_s = ReadInteger(file, trickle, "'bytes_per_s'", kPositive).value_or(16);
  if (listen.IsDefined())
    actuator.listen_port = ReadInteger(file, listen, "'listen_port'", {.min = 1, .max = 65535});
  if (upstream.IsDefined()) {
    actuator.upstream = ReadString(file, upstream, "'upstream'").value_or("");
    const size_t colon = actuator.upstream.rfind(':');
    const std::string port = colon == std::string::npos ? "" : actuator.upstream.substr(colon + 1);
    if (!actuator.upstream.empty() && (colon == 0 || port.empty() || port.size() > 5 ||
                                       port.find_first_not_of("0123456789") != std::string::npos ||
                                       std::stoi(port) == 0 || std::stoi(port) > 65535))
      file.Error(upstream, "'upstream' must be host:port, got '" + actuator.upstream + "'");
  }
  if (proxy && listen.IsDefined() != upstream.IsDefined())
    file.Error(listen.IsDefined() ? listen : upstream,
               "'listen_port' and 'upstream' go together: the proxy listens on one and forwards "
               "to the other");
  if (proxy) {
    if (actuator.mode == ProxyMode::kDelay && !delay.IsDefined() && mode.IsDefined())
      file.Error(mode, "proxy mode 'delay' needs 'delay_ms'");
    for (const auto& [node_of, key, owner] : {std::tuple{delay, "delay_ms", ProxyMode::kDelay},
                                              {status, "status", ProxyMode::kStatus},
                                              {trickle, "bytes_per_s", ProxyMode::kTrickle}}) {
      if (node_of.IsDefined() && actuator.mode != owner)
        file.Error(node_of, std::string("'") + key + "' applies only to proxy mode '" +
                                NameOf(owner, kProxyModeNames) + "'");
    }
    for (const auto& [node_of, key] : {std::pair{inject, "inject"}, {restore, "restore"}}) {
      if (node_of.IsDefined())
        file.Error(node_of,
                   std::string("'") + key + "' applies only to actuator kinds command and http");
    }
  } else {
    for (const auto& [node_of, key] : {std::pair{mode, "mode"},
                                       {listen, "listen_port"},
                                       {upstream, "upstream"},
                                       {delay, "delay_ms"},
                                       {status, "status"},
                                       {trickle, "bytes_per_s"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("'") + key + "' applies only to actuator kind proxy");
    }
  }
  if (command) {
    if (inject.IsDefined())
      actuator.inject_command = ReadString(file, inject, "'inject'").value_or("");
    if (restore.IsDefined())
      actuator.restore_command = ReadString(file, restore, "'restore'").value_or("");
  }
  if (http) {
    if (inject.IsDefined()) actuator.inject_http = ReadHttpCall(file, inject, "inject");
    if (restore.IsDefined()) actuator.restore_http = ReadHttpCall(file, restore, "restore");
  }
  map.Finish();
  return actuator;
}

AccessDenialProbe ReadAccessDenial(const YamlFile& file, const YAML::Node& node) {
  AccessDenialProbe probe;
  MapReader map(file, node, "access-denial probe");
  probe.pos = map.pos();
  probe.name = map.String("name", Need::kRequired).value_or("");
  YAML::Node credentials = map.Get("credentials");
  if (credentials.IsDefined())
    probe.credentials = ReadEnum(file, credentials, "'credentials'", kCredentialsNames)
                            .value_or(Credentials::kPersona);
  probe.persona = ReadRef(map, "persona");
  if (probe.credentials == Credentials::kPersona && !probe.persona) {
    file.Error(probe.pos,
               "access-denial probe: give 'persona', or 'credentials: none' or "
               "'credentials: invalid'");
  } else if (probe.credentials != Credentials::kPersona && probe.persona) {
    file.Error(probe.persona->pos, "'persona' applies only with 'credentials: persona'");
  }
  ReadTaskOrPrompt(map, "access-denial probe", probe.task, probe.prompt);
  YAML::Node statuses = map.Get("expect_status");
  if (statuses.IsDefined()) probe.expect_status = ReadStatuses(file, statuses, "expect_status");
  YAML::Node answer = map.Get("expect_answer");
  if (answer.IsDefined())
    probe.expect_answer = ReadPattern(file, answer, "'expect_answer'").value_or("");
  // Neither: the scenario's defaults (ApplyDefaultWording), once its triage section is read.
  probe.positive_control = ReadRef(map, "positive_control");
  probe.repeat = map.Integer("repeat", Need::kOptional, {.min = 1, .max = 1000}).value_or(1);
  map.Finish();
  return probe;
}

ToolOutageProbe ReadToolOutage(const YamlFile& file, const YAML::Node& node) {
  ToolOutageProbe probe;
  MapReader map(file, node, "tool-outage probe");
  probe.pos = map.pos();
  probe.name = map.String("name", Need::kRequired).value_or("");
  ReadTaskOrPrompt(map, "tool-outage probe", probe.task, probe.prompt);
  probe.persona = ReadRef(map, "persona");
  YAML::Node actuator = map.Get("actuator", Need::kRequired);
  if (actuator.IsDefined()) probe.actuator = ReadActuator(file, actuator);
  YAML::Node requests = map.Get("requests");
  if (requests.IsDefined()) {
    MapReader counts(file, requests, "requests");
    probe.before = counts.Integer("before", Need::kOptional, kNonNegative).value_or(probe.before);
    probe.during = counts.Integer("during", Need::kOptional, {.min = 1}).value_or(probe.during);
    probe.after = counts.Integer("after", Need::kOptional, kNonNegative).value_or(probe.after);
    counts.Finish();
  }
  probe.answer_within_ms =
      map.Number("answer_within_ms", Need::kOptional, kPositive).value_or(probe.answer_within_ms);
  YAML::Node expect = map.Get("expect_answer");
  if (expect.IsDefined())
    probe.expect_answer = ReadPattern(file, expect, "'expect_answer'").value_or("");
  YAML::Node must_not = map.Get("must_not");
  if (must_not.IsDefined()) probe.must_not = ReadPattern(file, must_not, "'must_not'").value_or("");
  YAML::Node working = map.Get("expect_working");
  if (working.IsDefined())
    probe.expect_working = ReadPattern(file, working, "'expect_working'").value_or("");
  probe.recover_within_s =
      map.Number("recover_within_s", Need::kOptional, kPositive).value_or(probe.recover_within_s);
  map.Finish();
  return probe;
}

template <typename Probe>
std::vector<Probe> ReadProbeList(const YamlFile& file, const YAML::Node& node,
                                 const std::string& key,
                                 Probe (*read)(const YamlFile&, const YAML::Node&)) {
  std::vector<Probe> probes;
  if (!node.IsDefined()) return probes;
  if (!node.IsSequence()) {
    file.Error(node, "'" + key + "' must be a list of probes, got " + Describe(node));
    return probes;
  }
  for (const YAML::Node& item : node)
    probes.push_back(read(file, item));
  return probes;
}

}  // namespace

std::optional<Ref> ReadRef(MapReader& map, const std::string& key, Need need) {
  YAML::Node node = map.Get(key, need);
  if (!node.IsDefined()) return std::nullopt;
  std::optional<std::string> name = ReadString(map.file(), node, "'" + key + "'");
  if (!name) return std::nullopt;
  return Ref{*name, map.file().Pos(node)};
}

FaultControls ReadFaults(const YamlFile& file, const YAML::Node& node) {
  FaultControls faults;
  MapReader map(file, node, "faults");
  faults.access_denial = ReadProbeList<AccessDenialProbe>(file, map.Get("access_denial"),
                                                          "access_denial", ReadAccessDenial);
  faults.tool_outage =
      ReadProbeList<ToolOutageProbe>(file, map.Get("tool_outage"), "tool_outage", ReadToolOutage);
  map.Finish();

  std::vector<std::pair<std::string, SourcePos>> seen;
  auto check_unique = [&](const std::string& name, const SourcePos& pos) {
    if (name.empty()) return;
    for (const auto& [other, other_pos] : seen) {
      if (other == name) {
        file.Error(pos, "probe name '" + name + "' is used twice (first at line " +
                            std::to_string(other_pos.line) + ")");
        return;
      }
    }
    seen.emplace_back(name, pos);
  };
  for (const AccessDenialProbe& probe : faults.access_denial)
    check_unique(probe.name, probe.pos);
  for (const ToolOutageProbe& probe : faults.tool_outage)
    check_unique(probe.name, probe.pos);
  return faults;
}

namespace {

// "(?:a)|(?:b)": any of the patterns (each checked on its own by the loader).
std::string AnyOf(const std::vector<std::string>& patterns) {
  std::string any;
  for (const std::string& pattern : patterns)
    any += (any.empty() ? "(?:" : "|(?:") + pattern + ")";
  return any;
}

}  // namespace

void ApplyDefaultWording(const TriageRules& triage, FaultControls& faults) {
  for (ToolOutageProbe& probe : faults.tool_outage)
    if (probe.expect_answer.empty()) probe.expect_answer = AnyOf(triage.tool_failure_patterns);
  for (AccessDenialProbe& probe : faults.access_denial) {
    if (!probe.expect_status.empty() || !probe.expect_answer.empty()) continue;
    probe.expect_status = {401, 403};
    probe.expect_answer = AnyOf(triage.refusal_patterns);
  }
}

}  // namespace stagegate::manifest

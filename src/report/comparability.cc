#include "report/comparability.h"

#include <set>

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

std::string Scalar(const json& v) {
  if (v.is_null()) return "";  // shown as "-"
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return FormatNumber(v.get<double>());
  return v.dump();
}

// A short text of any value: scalars as they are, objects as "key value, ..." without nulls and
// empty lists, lists joined by "; ". At most 200 characters.
std::string Compact(const json& v) {
  std::string text;
  if (v.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [key, item] : v.items())
      if (!item.is_null() && !(item.is_array() && item.empty()) &&
          !(item.is_object() && item.empty()))
        parts.push_back(key + " " +
                        (item.is_structured() ? "(" + Compact(item) + ")" : Scalar(item)));
    text = Join(parts, ", ");
  } else if (v.is_array()) {
    std::vector<std::string> parts;
    for (const json& item : v)
      parts.push_back(Compact(item));
    text = Join(parts, "; ");
  } else {
    text = Scalar(v);
  }
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text.empty() ? "-" : text;
}

const json& At(const json& object, const char* key) {
  static const json null;
  if (!object.is_object()) return null;
  auto found = object.find(key);
  return found == object.end() ? null : *found;
}

std::string Text(const json& object, const char* key) {
  const json& v = At(object, key);
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : Scalar(v);
}

std::string Sha(const json& object) {
  const std::string sha = Text(object, "sha256");
  return sha.empty() ? "" : " (sha256 " + sha.substr(0, 12) + ")";
}

// The load phases in a line: "warmup 2 concurrent, 6 requests; steady poisson 3/s for 12 s; ...".
std::string LoadProfile(const json& phases) {
  std::vector<std::string> parts;
  if (!phases.is_array()) return "-";
  for (const json& p : phases) {
    std::string text = Text(p, "kind");
    const auto number = [&](const char* key) {
      const json& v = At(p, key);
      return v.is_number() ? FormatNumber(v.get<double>()) : std::string();
    };
    std::vector<std::string> levels;
    for (const char* key : {"rates", "concurrencies"})
      if (At(p, key).is_array())
        for (const json& level : At(p, key))
          levels.push_back(Scalar(level));
    if (!levels.empty())
      text += " " + Join(levels, "/") + (At(p, "rates").empty() ? " concurrent" : "/s");
    else if (!number("rate").empty())
      text += " " + Text(p, "arrival") + " " + number("rate") + "/s";
    else if (!number("concurrency").empty())
      text += " " + number("concurrency") + " concurrent";
    if (!number("duration_s").empty()) text += " for " + number("duration_s") + " s";
    if (!number("requests").empty()) text += ", " + number("requests") + " requests";
    if (At(p, "spikes").is_array() && !At(p, "spikes").empty()) text += " with spikes";
    parts.push_back(text);
  }
  return Join(parts, "; ");
}

std::string Thresholds(const json& t) {
  std::vector<std::string> parts;
  if (At(t, "latency").is_array())
    for (const json& l : At(t, "latency"))
      parts.push_back(Text(l, "metric") + " p" + Text(l, "percentile") +
                      " <= " + Text(l, "max_ms") + " ms");
  if (At(t, "completion_rate").is_number())
    parts.push_back("completion >= " + Text(t, "completion_rate"));
  return parts.empty() ? "-" : Join(parts, "; ");
}

std::string StageNames(const json& stages) {
  std::vector<std::string> names;
  if (stages.is_array())
    for (const json& s : stages)
      names.push_back(Text(s, "name"));
  return Join(names, " -> ");
}

// "openai http://gpu-01:8000/v1, model llama-3, chat, streaming".
std::string TargetSummary(const json& target) {
  std::vector<std::string> parts;
  const std::string where =
      Text(target, "kind") +
      (Text(target, "base_url").empty() ? std::string() : " " + Text(target, "base_url"));
  parts.push_back(where);
  if (!Text(target, "model").empty()) parts.push_back("model " + Text(target, "model"));
  if (!Text(target, "endpoint").empty()) parts.push_back(Text(target, "endpoint"));
  if (At(target, "stream") == true) parts.push_back("streaming");
  return Join(parts, ", ");
}

std::vector<ComparablePart> ScenarioParts(const json& s) {
  const json& m = At(s, "manifest");
  const json& corpus = At(s, "corpus");
  const json& rubric = At(s, "rubric");
  // The target as the client reaches it. The reference application's latency profile is left
  // out: it is the application under test, whose change is what a comparison looks for.
  json target = At(s, "target");
  if (target.is_object()) target.erase("sim_profile");
  const json load = {{"phases", At(s, "phases")}, {"seed", At(s, "seed")}};
  return {
      {"kind", "scenario run", "scenario"},
      {"model", Text(m, "model") + " " + Text(m, "model_version"),
       json::array({At(m, "model"), At(m, "model_version")})},
      {"hardware", Text(m, "hardware"), At(m, "hardware")},
      {"serving stack", Text(m, "serving_stack"), At(m, "serving_stack")},
      {"sampling", Compact(At(m, "sampling")), At(m, "sampling")},
      {"corpus",
       corpus.is_null() ? "-" : Text(corpus, "name") + " " + Text(corpus, "version") + Sha(corpus),
       corpus},
      {"rubric", rubric.is_null() ? "-" : Text(rubric, "id") + Sha(rubric), rubric},
      {"target", TargetSummary(target), target},
      {"input distribution", Compact(At(s, "input")), At(s, "input")},
      {"load profile", LoadProfile(At(s, "phases")) + "; seed " + Text(s, "seed"), load},
      {"stages", StageNames(At(s, "stages")), At(s, "stages")},
      {"thresholds", Thresholds(At(s, "thresholds")), At(s, "thresholds")},
      {"quality thresholds", Compact(At(s, "quality")), At(s, "quality")},
      {"recovery policy", Compact(At(s, "recovery")), At(s, "recovery")},
      {"fault probes", Compact(At(s, "faults")), At(s, "faults")},
  };
}

std::vector<ComparablePart> ProfileParts(const json& c) {
  const auto pick = [&c](std::initializer_list<const char*> keys) {
    json out = json::object();
    for (const char* key : keys)
      out[key] = At(c, key);
    return out;
  };
  const json target =
      pick({"url", "model", "endpoint", "stream", "api_key_env", "headers", "timeouts_ms"});
  const json input = pick({"input", "extra_inputs"});
  // How the work was split among shards is not what was measured (nor is it in the fingerprint).
  const json load = pick({"concurrency", "request_rate", "arrival", "burstiness", "ramp_to",
                          "spikes", "max_concurrency", "when_full", "trace", "speedup", "requests",
                          "duration_s", "warmup", "grace_s", "seed"});
  return {{"kind", "profile run", "profile"},
          {"target", Compact(target), target},
          {"input distribution", Compact(input), input},
          {"load profile", Compact(load), load},
          {"thresholds", Compact(At(c, "slo")), At(c, "slo")}};
}

// Up to `limit` paths at which two values differ, with both values.
void LeafDifferences(const json& then, const json& now, const std::string& path,
                     std::vector<std::string>& out, size_t limit) {
  if (out.size() >= limit || then == now) return;
  if (then.is_object() && now.is_object()) {
    std::set<std::string> keys;
    for (const auto& [key, value] : then.items())
      keys.insert(key);
    for (const auto& [key, value] : now.items())
      keys.insert(key);
    for (const std::string& key : keys)
      LeafDifferences(At(then, key.c_str()), At(now, key.c_str()),
                      path.empty() ? key : path + "." + key, out, limit);
    return;
  }
  if (then.is_array() && now.is_array() && then.size() == now.size()) {
    for (size_t i = 0; i < then.size(); ++i)
      LeafDifferences(then[i], now[i], path + "[" + std::to_string(i) + "]", out, limit);
    return;
  }
  out.push_back((path.empty() ? "its value" : path) + ": " + Compact(then) + " (baseline) / " +
                Compact(now) + " (this run)");
}

}  // namespace

std::vector<ComparablePart> ComparableParts(const store::RunInfo& run) {
  const json config = json::parse(run.scenario_json, nullptr, false);
  return run.is_profile() ? ProfileParts(config) : ScenarioParts(config);
}

std::vector<std::string> Differences(const store::RunInfo& current,
                                     const store::RunInfo& baseline) {
  const std::vector<ComparablePart> now = ComparableParts(current);
  const std::vector<ComparablePart> then = ComparableParts(baseline);
  if (now.front().value != then.front().value)
    return {"kind: " + then.front().summary + " (baseline) / " + now.front().summary +
            " (this run): a profile run and a scenario run measure different things"};
  std::vector<std::string> lines;
  for (size_t i = 1; i < now.size(); ++i) {
    if (now[i].value == then[i].value) continue;
    // Short summaries that differ say it all; otherwise the fields that differ do.
    if (now[i].summary != then[i].summary && now[i].summary.size() <= 80 &&
        then[i].summary.size() <= 80) {
      lines.push_back(now[i].label + ": " + then[i].summary + " (baseline) / " + now[i].summary +
                      " (this run)");
      continue;
    }
    std::vector<std::string> fields;
    LeafDifferences(then[i].value, now[i].value, "", fields, 4);
    for (const std::string& field : fields)
      lines.push_back(now[i].label + " differs at " + field);
  }
  return lines;
}

}  // namespace stagegate::report

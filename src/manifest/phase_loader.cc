#include "manifest/phase_loader.h"

#include <algorithm>
#include <type_traits>

#include "base/strings.h"

namespace stagegate::manifest {

namespace {

std::vector<Spike> ReadSpikes(const YamlFile& file, const YAML::Node& node) {
  std::vector<Spike> spikes;
  if (!node.IsSequence()) {
    file.Error(node, "'spikes' must be a list, got " + Describe(node));
    return spikes;
  }
  for (const YAML::Node& item : node) {
    MapReader map(file, item, "spike");
    Spike spike;
    spike.at_s =
        map.Number("at_s", Need::kRequired, {.min = 0, .max = kMaxPhaseSeconds}).value_or(0);
    spike.duration_s = map.Number("duration_s", Need::kRequired, kSecondsRange).value_or(0);
    spike.rate = map.Number("rate", Need::kRequired, kRateRange).value_or(0);
    map.Finish();
    // The schedule gives each moment one rate: windows may touch, not overlap.
    for (const Spike& earlier : spikes)
      if (spike.at_s < earlier.at_s + earlier.duration_s &&
          earlier.at_s < spike.at_s + spike.duration_s)
        file.Error(item, "this spike (" + FormatNumber(spike.at_s) + " to " +
                             FormatNumber(spike.at_s + spike.duration_s) +
                             " s) overlaps an earlier one (" + FormatNumber(earlier.at_s) + " to " +
                             FormatNumber(earlier.at_s + earlier.duration_s) + " s)");
    spikes.push_back(spike);
  }
  return spikes;
}

template <typename T>
std::vector<T> ReadLevels(const YamlFile& file, const YAML::Node& node, const std::string& key) {
  std::vector<T> levels;
  if (!node.IsDefined()) return levels;
  if (!node.IsSequence() || node.size() == 0) {
    file.Error(node, "'" + key + "' must be a non-empty list of numbers, got " + Describe(node));
    return levels;
  }
  for (const YAML::Node& item : node) {
    std::optional<double> value;
    if constexpr (std::is_integral_v<T>) {
      if (auto integer = ReadInteger(file, item, "a level of '" + key + "'", kConcurrencyRange))
        value = static_cast<double>(*integer);
    } else {
      value = ReadNumber(file, item, "a level of '" + key + "'", kRateRange);
    }
    if (!value) continue;
    if (!levels.empty() && *value <= static_cast<double>(levels.back())) {
      file.Error(item, "the levels of '" + key + "' must rise, but " + FormatNumber(*value) +
                           " follows " + FormatNumber(static_cast<double>(levels.back())));
      continue;
    }
    levels.push_back(static_cast<T>(*value));
  }
  return levels;
}

// The keys that say how much load a phase offers; an absent one is an undefined node.
struct LoadKeys {
  YAML::Node rate;
  YAML::Node concurrency;
  YAML::Node rates;
  YAML::Node concurrencies;
};

// Reads the phase's load keys (one rate or concurrency, or a sweep's levels) into `phase`.
LoadKeys ReadLoadKeys(const YamlFile& file, MapReader& map, LoadPhase& phase) {
  const LoadKeys keys{.rate = map.Get("rate"),
                      .concurrency = map.Get("concurrency"),
                      .rates = map.Get("rates"),
                      .concurrencies = map.Get("concurrencies")};
  if (keys.rate.IsDefined()) phase.rate = ReadNumber(file, keys.rate, "'rate'", kRateRange);
  if (keys.concurrency.IsDefined())
    phase.concurrency = ReadInteger(file, keys.concurrency, "'concurrency'", kConcurrencyRange);
  phase.rate_levels = ReadLevels<double>(file, keys.rates, "rates");
  phase.concurrency_levels = ReadLevels<int64_t>(file, keys.concurrencies, "concurrencies");
  return keys;
}

// Reads 'search', which only a sweep may set, and only to 'auto'.
void ReadSearch(const YamlFile& file, MapReader& map, LoadPhase& phase) {
  YAML::Node search = map.Get("search");
  if (!search.IsDefined()) return;
  if (phase.kind != PhaseKind::kSweep) {
    file.Error(search, "'search' applies only to a sweep");
  } else if (!search.IsScalar() || search.Scalar() != "auto") {
    file.Error(search,
               "'search' must be 'auto' (find the sustained capacity), got " + Describe(search));
  } else {
    phase.search = true;
  }
}

// Reports load keys that do not fit the phase: a search starts at one rate or concurrency, a
// sweep lists its levels, and any other phase gives exactly one rate or concurrency.
void CheckLoadKeys(const YamlFile& file, const LoadKeys& keys, const LoadPhase& phase,
                   const std::string& name) {
  const bool sweep = phase.kind == PhaseKind::kSweep;
  if (sweep && phase.search) {
    for (const auto& [node_of, key] :
         {std::pair{keys.rates, "rates"}, {keys.concurrencies, "concurrencies"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("a search chooses its own levels: give where it starts "
                                        "as 'rate' or 'concurrency', not '") +
                                key + "'");
    }
    if (keys.rate.IsDefined() && keys.concurrency.IsDefined())
      file.Error(keys.concurrency, "give either 'rate' or 'concurrency', not both");
    else if (!keys.rate.IsDefined() && !keys.concurrency.IsDefined())
      file.Error(phase.pos,
                 "phase 'sweep': a search starts at 'rate' (open loop) or 'concurrency' (closed "
                 "loop)");
  } else if (sweep) {
    for (const auto& [node_of, key] :
         {std::pair{keys.rate, "rate"}, {keys.concurrency, "concurrency"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("a sweep gives its levels as 'rates' or 'concurrencies', "
                                        "not '") +
                                key + "' (or starts a 'search: auto' there)");
    }
    if (keys.rates.IsDefined() && keys.concurrencies.IsDefined()) {
      file.Error(keys.concurrencies, "give either 'rates' or 'concurrencies', not both");
    } else if (!keys.rates.IsDefined() && !keys.concurrencies.IsDefined() &&
               !keys.rate.IsDefined() && !keys.concurrency.IsDefined()) {
      file.Error(phase.pos,
                 "phase 'sweep': give its levels as 'rates' or 'concurrencies', or 'search: auto'");
    }
  } else {
    for (const auto& [node_of, key] :
         {std::pair{keys.rates, "rates"}, {keys.concurrencies, "concurrencies"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("'") + key + "' applies only to a sweep");
    }
    if (keys.rate.IsDefined() && keys.concurrency.IsDefined()) {
      file.Error(keys.concurrency, "give either 'rate' or 'concurrency', not both");
    } else if (!keys.rate.IsDefined() && !keys.concurrency.IsDefined()) {
      file.Error(phase.pos, "phase '" + name +
                                "': give either 'rate' (open loop) or 'concurrency' (closed loop)");
    }
  }
}

// Reads what a sweep level must show and how a search narrows down ('bisect', 'up_to',
// 'resolution', 'keep_pace', 'min_completed', 'max_duration_s'): keys of a sweep only.
void ReadSweepTuning(const YamlFile& file, MapReader& map, LoadPhase& phase) {
  const bool sweep = phase.kind == PhaseKind::kSweep;
  YAML::Node bisect = map.Get("bisect");
  if (bisect.IsDefined()) {
    if (!sweep) file.Error(bisect, "'bisect' applies only to a sweep");
    phase.bisect = ReadInteger(file, bisect, "'bisect'", {.min = 0, .max = 10}).value_or(0);
  }

  for (const char* key : {"up_to", "resolution", "keep_pace", "min_completed", "max_duration_s"}) {
    YAML::Node value = map.Get(key);
    if (!value.IsDefined()) continue;
    const std::string name = std::string("'") + key + "'";
    if (!sweep) {
      file.Error(value, name + " applies only to a sweep");
    } else if ((std::string_view(key) == "up_to" || std::string_view(key) == "resolution") &&
               !phase.search) {
      file.Error(value, name + " applies only to a sweep with 'search: auto'");
    } else if (std::string_view(key) == "up_to") {
      phase.up_to = ReadNumber(file, value, name, kRateRange);
    } else if (std::string_view(key) == "resolution") {
      phase.resolution =
          ReadNumber(file, value, name, {.min = 0.01, .max = 1}).value_or(phase.resolution);
    } else if (std::string_view(key) == "keep_pace") {
      phase.keep_pace = ReadNumber(file, value, name, {.min = 0, .max = 1, .min_exclusive = true})
                            .value_or(phase.keep_pace);
    } else if (std::string_view(key) == "min_completed") {
      phase.min_completed = ReadInteger(file, value, name, {.min = 1, .max = 1'000'000})
                                .value_or(phase.min_completed);
    } else {
      phase.max_duration_s =
          ReadNumber(file, value, name, {.min = 0, .max = 86'400, .min_exclusive = true});
    }
  }
}

// Reads how an open loop sends (arrival, burstiness, ramp, spikes, a cap on requests in flight),
// keys that a closed-loop phase may not have. Returns the 'spikes' node, for later checks.
YAML::Node ReadOpenLoop(const YamlFile& file, MapReader& map, bool closed_loop, LoadPhase& phase) {
  YAML::Node arrival = map.Get("arrival");
  YAML::Node burstiness = map.Get("burstiness");
  YAML::Node ramp_to = map.Get("ramp_to");
  YAML::Node spikes = map.Get("spikes");
  YAML::Node max_concurrency = map.Get("max_concurrency");
  YAML::Node on_full = map.Get("on_full");
  if (arrival.IsDefined())
    phase.arrival =
        ReadEnum(file, arrival, "'arrival'", kArrivalNames).value_or(Arrival::kConstant);
  if (burstiness.IsDefined())
    phase.burstiness = ReadNumber(file, burstiness, "'burstiness'", kPositive);
  if (ramp_to.IsDefined()) phase.ramp_to = ReadNumber(file, ramp_to, "'ramp_to'", kRateRange);
  if (spikes.IsDefined()) phase.spikes = ReadSpikes(file, spikes);
  if (max_concurrency.IsDefined())
    phase.max_concurrency =
        ReadInteger(file, max_concurrency, "'max_concurrency'", kConcurrencyRange);
  if (on_full.IsDefined())
    phase.on_full = ReadEnum(file, on_full, "'on_full'", kOnFullNames).value_or(OnFull::kQueue);
  if (closed_loop) {
    for (const auto& [node_of, key] : {std::pair{arrival, "arrival"},
                                       {burstiness, "burstiness"},
                                       {ramp_to, "ramp_to"},
                                       {spikes, "spikes"},
                                       {max_concurrency, "max_concurrency"},
                                       {on_full, "on_full"}}) {
      if (node_of.IsDefined())
        file.Error(node_of, std::string("'") + key +
                                "' applies only to an open-loop phase (one with a rate)");
    }
  } else {
    if (phase.arrival == Arrival::kGamma && !burstiness.IsDefined() && arrival.IsDefined())
      file.Error(arrival, "arrival 'gamma' needs 'burstiness' (its shape; 1 is Poisson)");
    if (burstiness.IsDefined() && phase.arrival != Arrival::kGamma)
      file.Error(burstiness, "'burstiness' applies only to arrival 'gamma'");
    if (on_full.IsDefined() && !max_concurrency.IsDefined())
      file.Error(on_full, "'on_full' applies only with 'max_concurrency'");
  }
  return spikes;
}

// Reads how long the phase lasts ('duration_s', 'requests') and reports what does not fit in
// it: too many requests to plan, a spike past its end, a sweep's limits below its length or start.
void ReadLength(const YamlFile& file, MapReader& map, const std::string& name,
                const YAML::Node& spikes, LoadPhase& phase) {
  YAML::Node duration = map.Get("duration_s");
  YAML::Node requests = map.Get("requests");
  if (duration.IsDefined())
    phase.duration_s = ReadNumber(file, duration, "'duration_s'", kSecondsRange);
  if (requests.IsDefined())
    phase.requests = ReadInteger(file, requests, "'requests'", {.min = 1, .max = kMaxRequests});
  if (!duration.IsDefined() && !requests.IsDefined())
    file.Error(phase.pos, "phase '" + name + "': give 'duration_s', 'requests' or both");
  // A schedule is planned whole before it is sent: its size is bounded, not only its parts.
  const double fastest = std::max({phase.rate.value_or(0), phase.ramp_to.value_or(0),
                                   phase.rate_levels.empty() ? 0.0 : phase.rate_levels.back()});
  if (phase.duration_s && fastest * *phase.duration_s > static_cast<double>(kMaxRequests))
    file.Error(duration, "phase '" + name + "' would send up to " +
                             FormatNumber(fastest * *phase.duration_s, 0) + " requests; at most " +
                             FormatNumber(kMaxRequests) +
                             " a phase (lower 'duration_s' or the rate)");
  if (phase.duration_s) {
    for (const Spike& spike : phase.spikes) {
      if (spike.at_s + spike.duration_s > *phase.duration_s)
        file.Error(spikes, "a spike ends at " + FormatNumber(spike.at_s + spike.duration_s) +
                               " s, after the phase's " + FormatNumber(*phase.duration_s) + " s");
    }
  }
  if (phase.max_duration_s && phase.duration_s && *phase.max_duration_s < *phase.duration_s)
    file.Error(map.Get("max_duration_s"),
               "'max_duration_s' (" + FormatNumber(*phase.max_duration_s) +
                   ") is shorter than 'duration_s' (" + FormatNumber(*phase.duration_s) + ")");
  if (phase.search && phase.up_to) {
    const std::optional<double> start =
        phase.rate ? phase.rate
                   : (phase.concurrency ? std::optional<double>(*phase.concurrency) : std::nullopt);
    if (start && *phase.up_to < *start)
      file.Error(map.Get("up_to"), "'up_to' (" + FormatNumber(*phase.up_to) +
                                       ") is below where the search starts (" +
                                       FormatNumber(*start) + ")");
  }
}

std::optional<LoadPhase> ReadPhase(const YamlFile& file, PhaseKind kind, const YAML::Node& node) {
  const std::string name = NameOf(kind, kPhaseNames);
  MapReader map(file, node, "phase '" + name + "'");
  if (!map.valid()) return std::nullopt;
  LoadPhase phase;
  phase.kind = kind;
  phase.pos = map.pos();

  const LoadKeys load = ReadLoadKeys(file, map, phase);
  ReadSearch(file, map, phase);
  CheckLoadKeys(file, load, phase, name);
  const bool closed_loop = load.concurrency.IsDefined() || load.concurrencies.IsDefined();
  ReadSweepTuning(file, map, phase);
  const YAML::Node spikes = ReadOpenLoop(file, map, closed_loop, phase);
  ReadLength(file, map, name, spikes, phase);

  phase.grace_s =
      map.Number("grace_s", Need::kOptional, {.min = 0, .max = 3600}).value_or(phase.grace_s);
  YAML::Node window = map.Get("window_s");
  if (window.IsDefined()) {
    if (kind != PhaseKind::kRecovery) file.Error(window, "'window_s' applies only to recovery");
    phase.window_s =
        ReadNumber(file, window, "'window_s'", {.min = 0, .max = 3600, .min_exclusive = true})
            .value_or(phase.window_s);
  }
  map.Finish();
  return phase;
}

}  // namespace

std::vector<LoadPhase> ReadPhases(const YamlFile& file, const YAML::Node& node) {
  std::vector<LoadPhase> phases;
  MapReader map(file, node, "phases");
  for (const EnumName<PhaseKind>& entry : kPhaseNames) {
    YAML::Node value = map.Get(entry.name);
    if (!value.IsDefined()) continue;
    if (std::optional<LoadPhase> phase = ReadPhase(file, entry.value, value))
      phases.push_back(*phase);
  }
  map.Finish();
  return phases;
}

}  // namespace stagegate::manifest

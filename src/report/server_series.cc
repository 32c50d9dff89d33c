#include "report/server_series.h"

#include <algorithm>
#include <array>

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;
using telemetry::Series;

constexpr double kSaturatedShare = 0.95;  // of the KV cache or of the GPUs' time
constexpr double kQueued = 1;             // mean requests waiting over a level

std::vector<std::string> AllNames() {
  std::vector<std::string> names;
  for (const telemetry::VendorName& v : telemetry::VendorNames())
    names.push_back(v.name);
  return names;
}

double Peak(const SeriesValues& values) {
  double peak = 0;
  for (const auto& [t, v] : values)
    peak = std::max(peak, v);
  return peak;
}

double Mean(const SeriesValues& values) {
  double sum = 0;
  for (const auto& [t, v] : values)
    sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// How a series reads at a level: a share's peak, the mean of what waits.
double LevelFigure(Series series, const SeriesValues& values) {
  return series == Series::kWaiting ? Mean(values) : Peak(values);
}

std::string Describe(Series series, double figure) {
  switch (series) {
    case Series::kKvCache:
      return "KV cache at " + FormatNumber(figure * 100, 0) + "%";
    case Series::kGpuUtilization:
      return "GPU utilisation at " + FormatNumber(figure * 100, 0) + "%";
    default:
      break;
  }
  return "requests waiting (" + FormatNumber(figure, 1) + " on average)";
}

}  // namespace

Result<std::map<Series, SeriesValues>> ReadServerSeries(
    store::Store& store, const std::string& run_id, int64_t from_ns, int64_t to_ns,
    std::map<Series, telemetry::VendorName>* chosen_names) {
  Result<std::vector<store::TelemetryPoint>> points =
      store.SeriesPoints(run_id, from_ns, to_ns, AllNames());
  if (!points.ok()) return points.status();
  // Each series is read from the first of its names (in the table's order) that has samples.
  std::map<Series, size_t> chosen;  // series -> index in VendorNames()
  const std::vector<telemetry::VendorName>& table = telemetry::VendorNames();
  const auto index_of = [&table](const std::string& name) {
    for (size_t i = 0; i < table.size(); ++i)
      if (name == table[i].name) return i;
    return table.size();
  };
  for (const store::TelemetryPoint& p : *points) {
    const size_t i = index_of(p.series);
    if (i == table.size()) continue;
    auto [at, added] = chosen.try_emplace(table[i].series, i);
    if (!added) at->second = std::min(at->second, i);
  }
  std::map<Series, SeriesValues> out;
  for (const store::TelemetryPoint& p : *points) {
    const size_t i = index_of(p.series);
    if (i == table.size() || chosen[table[i].series] != i) continue;
    const Series series = table[i].series;
    const double sets = static_cast<double>(std::max<int64_t>(p.label_sets, 1));
    const double value = p.value * table[i].scale / (telemetry::Adds(series) ? 1 : sets);
    out[series].push_back({p.t_ns, value});
  }
  if (chosen_names)
    for (const auto& [series, i] : chosen)
      chosen_names->insert_or_assign(series, table[i]);
  return out;
}

Result<Saturation> FindSaturation(store::Store& store, const store::RunInfo& run,
                                  const std::vector<store::PhaseInfo>& phases,
                                  const std::string& final_stage, const std::string& unit) {
  std::vector<const store::PhaseInfo*> levels;
  for (const store::PhaseInfo& p : phases)
    // A sweep's levels; a profile stored before profiles ran as scenarios named them by kind.
    if (p.stage == final_stage &&
        (p.phase == "sweep" || (run.is_profile() && p.ProfileLevelKind() != "trace")) &&
        !p.at_rest && p.level && p.started_ns && p.ended_ns &&
        p.status != store::PhaseStatus::kSuperseded)
      levels.push_back(&p);
  std::sort(levels.begin(), levels.end(), [](const store::PhaseInfo* a, const store::PhaseInfo* b) {
    return *a->level < *b->level;
  });
  Saturation out{.unit = unit};
  if (levels.empty()) {
    out.sentence = "not known: the store holds no sweep level of the final stage";
    return out;
  }
  constexpr std::array<Series, 3> kOrder = {Series::kKvCache, Series::kGpuUtilization,
                                            Series::kWaiting};
  std::map<Series, double> highest;  // the highest figure seen, for the sentence when none
  bool any = false;
  for (const store::PhaseInfo* level : levels) {
    Result<std::map<Series, SeriesValues>> series =
        ReadServerSeries(store, run.id, *level->started_ns, *level->ended_ns);
    if (!series.ok()) return series.status();
    for (Series s : kOrder) {
      auto found = series->find(s);
      if (found == series->end() || found->second.empty()) continue;
      any = true;
      const double figure = LevelFigure(s, found->second);
      highest[s] = std::max(highest[s], figure);
      const bool saturated = s == Series::kWaiting ? figure >= kQueued : figure >= kSaturatedShare;
      if (!saturated) continue;
      out.series = s;
      out.level = *level->level;
      out.value = figure;
      out.sentence = Describe(s, figure) + " from " + LevelText(*level->level, unit);
      return out;
    }
  }
  if (!any) {
    out.sentence =
        "not known: none of the server's queue, KV cache or GPU series was scraped "
        "during the sweep";
    return out;
  }
  std::vector<std::string> peaks;
  for (Series s : kOrder)
    if (highest.contains(s))
      peaks.push_back(s == Series::kWaiting
                          ? "at most " + FormatNumber(highest[s], 1) + " waiting on average"
                          : std::string(s == Series::kKvCache ? "KV cache" : "GPU utilisation") +
                                " peaked at " + FormatNumber(highest[s] * 100, 0) + "%");
  out.sentence = "nothing saturated up to " + LevelText(*levels.back()->level, unit) + " (" +
                 Join(peaks, ", ") + ")";
  return out;
}

std::string LevelText(double level, const std::string& unit) {
  return unit == "concurrency" ? "concurrency " + FormatNumber(level)
                               : FormatNumber(level) + " " + unit;
}

json SaturationJson(const Saturation& s) {
  return {{"series", s.series ? json(std::string(telemetry::Name(*s.series))) : json(nullptr)},
          {"level", s.level ? json(*s.level) : json(nullptr)},
          {"unit", s.unit},
          {"value", s.value ? json(*s.value) : json(nullptr)},
          {"sentence", s.sentence}};
}

}  // namespace stagegate::report

#include "report/energy.h"

#include <algorithm>
#include <cmath>

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;
using telemetry::Series;

// How far beyond a phase samples are read, so that its boundaries fall between two of them.
constexpr int64_t kMarginNs = 60'000'000'000;
// Below this share of the phase covered by samples, no per-request figure is given.
constexpr double kMinCoveredShare = 0.5;

// The value of `values` at `t_ns`, linear between the samples around it (t_ns within them).
double At(const SeriesValues& values, int64_t t_ns) {
  auto after = std::lower_bound(values.begin(), values.end(), t_ns,
                                [](const auto& point, int64_t t) { return point.first < t; });
  if (after == values.begin()) return after->second;
  if (after == values.end()) return values.back().second;
  const auto before = std::prev(after);
  if (after->first == before->first) return after->second;
  const double f =
      static_cast<double>(t_ns - before->first) / static_cast<double>(after->first - before->first);
  return before->second + f * (after->second - before->second);
}

// The part of [from_ns, to_ns] the samples span, if any.
std::optional<std::pair<int64_t, int64_t>> Covered(const SeriesValues& values, int64_t from_ns,
                                                   int64_t to_ns) {
  if (values.size() < 2 || to_ns <= from_ns) return std::nullopt;
  const int64_t a = std::max(from_ns, values.front().first);
  const int64_t b = std::min(to_ns, values.back().first);
  if (b <= a) return std::nullopt;
  return std::pair{a, b};
}

const store::PhaseInfo* FindPhase(const std::vector<store::PhaseInfo>& phases,
                                  const std::string& stage, const std::string& phase,
                                  std::optional<double> level) {
  for (const store::PhaseInfo& p : phases)
    if (p.stage == stage && p.phase == phase && !p.at_rest && p.started_ns && p.ended_ns &&
        p.status != store::PhaseStatus::kSuperseded && (!level || p.level == level))
      return &p;
  return nullptr;
}

const store::StepFindings* FindStep(const store::StageFindings& stage, const std::string& phase,
                                    std::optional<double> level) {
  for (const store::StepFindings& step : stage.steps)
    if (step.phase == phase && (!level || step.level == level)) return &step;
  return nullptr;
}

// What one energy figure divides: a phase's requests over the phase, or, where `window` is
// given (the sustained capacity), the answers of that window over the window, as every other
// rate at the capacity is.
struct MeasureInput {
  const store::PhaseInfo& phase;
  const store::StepFindings& step;
  std::optional<double> pass_rate;
  std::optional<stats::RateWindow> window;
};

Status Measure(store::Store& store, const store::RunInfo& run, const MeasureInput& in,
               PhaseEnergy& out) {
  int64_t from = *in.phase.started_ns, to = *in.phase.ended_ns;
  const std::optional<double> pass_rate = in.pass_rate;
  if (in.window) {
    to = from + static_cast<int64_t>(std::llround(in.window->to_s * 1e9));
    from += static_cast<int64_t>(std::llround(in.window->from_s * 1e9));
    out.completed = in.window->answered;
    out.output_tokens = in.window->output_tokens;
  } else {
    out.completed = in.step.Requests("completed");
    if (const auto tokens = in.step.metrics.find("output_tokens"); tokens != in.step.metrics.end())
      if (const std::optional<double> mean = tokens->second.At("mean"))
        out.output_tokens = *mean * static_cast<double>(tokens->second.count);
  }
  if (to <= from) {
    out.basis = "the window is empty";
    return Status::Ok();
  }
  out.window_s = static_cast<double>(to - from) / 1e9;
  std::map<Series, telemetry::VendorName> chosen;
  Result<std::map<Series, SeriesValues>> series =
      ReadServerSeries(store, run.id, from - kMarginNs, to + kMarginNs, &chosen);
  if (!series.ok()) return series.status();
  std::optional<std::pair<double, double>> measured;
  if (series->contains(Series::kGpuEnergy)) {
    measured = CounterEnergy(series->at(Series::kGpuEnergy), from, to);
    out.method = "counter";
    out.source = chosen.at(Series::kGpuEnergy).name;
  } else if (series->contains(Series::kGpuPower)) {
    measured = IntegratedEnergy(series->at(Series::kGpuPower), from, to);
    out.method = "integrated power";
    out.source = chosen.at(Series::kGpuPower).name;
  } else {
    out.basis =
        "no GPU energy counter or power was scraped (telemetry.gpu: auto finds NVML; dcgm "
        "reads a DCGM exporter)";
    return Status::Ok();
  }
  if (!measured) {
    out.method.clear();
    out.basis = "the " + out.source + " samples do not reach into the phase";
    return Status::Ok();
  }
  out.joules = measured->first;
  out.covered_share = measured->second;
  if (out.covered_share < kMinCoveredShare) {
    out.basis = "the samples cover only " + FormatNumber(out.covered_share * 100, 0) +
                "% of the phase: too little to divide among its requests";
    return Status::Ok();
  }
  // The joules of the covered part, brought to the whole phase its requests ran in.
  const double joules = *out.joules / out.covered_share;
  if (out.completed > 0) out.per_request = joules / static_cast<double>(out.completed);
  if (out.output_tokens && *out.output_tokens > 0)
    out.per_output_token = joules / *out.output_tokens;
  if (out.completed > 0 && pass_rate && *pass_rate > 0)
    out.per_accepted_answer = joules / (static_cast<double>(out.completed) * *pass_rate);
  if (out.completed == 0)
    out.basis =
        in.window ? "no request was answered in the window" : "no request completed in the phase";
  return Status::Ok();
}

std::string Figure(const std::optional<double>& value, int decimals) {
  return value ? FormatNumber(*value, decimals) : "-";
}

}  // namespace

std::optional<std::pair<double, double>> CounterEnergy(const SeriesValues& counter, int64_t from_ns,
                                                       int64_t to_ns) {
  const auto covered = Covered(counter, from_ns, to_ns);
  if (!covered) return std::nullopt;
  // A counter that drops was reset (the driver reloaded): count on from its new value.
  SeriesValues unwrapped = {{counter.front().first, 0}};
  for (size_t i = 1; i < counter.size(); ++i) {
    const double step = counter[i].second - counter[i - 1].second;
    unwrapped.push_back(
        {counter[i].first, unwrapped.back().second + (step >= 0 ? step : counter[i].second)});
  }
  return std::pair{
      At(unwrapped, covered->second) - At(unwrapped, covered->first),
      static_cast<double>(covered->second - covered->first) / static_cast<double>(to_ns - from_ns)};
}

std::optional<std::pair<double, double>> IntegratedEnergy(const SeriesValues& power,
                                                          int64_t from_ns, int64_t to_ns) {
  const auto covered = Covered(power, from_ns, to_ns);
  if (!covered) return std::nullopt;
  const auto [a, b] = *covered;
  SeriesValues points = {{a, At(power, a)}};
  for (const auto& point : power)
    if (point.first > a && point.first < b) points.push_back(point);
  points.push_back({b, At(power, b)});
  double joules = 0;
  for (size_t i = 1; i < points.size(); ++i)
    joules += (points[i].second + points[i - 1].second) / 2 *
              static_cast<double>(points[i].first - points[i - 1].first) / 1e9;
  return std::pair{joules, static_cast<double>(b - a) / static_cast<double>(to_ns - from_ns)};
}

Result<EnergyFigures> ComputeEnergy(store::Store& store, const store::RunInfo& run,
                                    const std::vector<store::PhaseInfo>& phases,
                                    const store::RunFindings& findings,
                                    std::optional<double> pass_rate) {
  EnergyFigures out{.pass_rate = pass_rate};
  const store::StageFindings* stage = findings.FinalStage();
  if (!stage) return out;
  const auto measure = [&](const std::string& at, const std::string& label,
                           const std::string& phase, std::optional<double> level,
                           std::optional<stats::RateWindow> window) -> Status {
    const store::PhaseInfo* info = FindPhase(phases, stage->name, phase, level);
    const store::StepFindings* step = FindStep(*stage, phase, level);
    if (!info || !step) return Status::Ok();
    PhaseEnergy energy{.at = at, .phase = stage->name + " " + label};
    SG_RETURN_IF_ERROR(Measure(
        store, run,
        {.phase = *info, .step = *step, .pass_rate = pass_rate, .window = std::move(window)},
        energy));
    out.phases.push_back(std::move(energy));
    return Status::Ok();
  };
  SG_RETURN_IF_ERROR(measure("steady", "steady", "steady", std::nullopt, std::nullopt));
  if (stage->capacity && stage->capacity->holds_up_to)
    SG_RETURN_IF_ERROR(
        measure("sustained capacity",
                "sweep at " + LevelText(*stage->capacity->holds_up_to, stage->capacity->unit),
                "sweep", stage->capacity->holds_up_to, stage->capacity->window));
  return out;
}

bool Measured(const EnergyFigures& energy) {
  return std::any_of(energy.phases.begin(), energy.phases.end(),
                     [](const PhaseEnergy& p) { return p.joules.has_value(); });
}

json EnergyJson(const EnergyFigures& energy) {
  const auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json phases = json::array();
  for (const PhaseEnergy& p : energy.phases)
    phases.push_back({{"at", p.at},
                      {"phase", p.phase},
                      {"method", p.method.empty() ? json(nullptr) : json(p.method)},
                      {"source", p.source},
                      {"window_s", p.window_s},
                      {"covered_share", p.covered_share},
                      {"joules", number(p.joules)},
                      {"completed", p.completed},
                      {"output_tokens", number(p.output_tokens)},
                      {"joules_per_request", number(p.per_request)},
                      {"joules_per_output_token", number(p.per_output_token)},
                      {"joules_per_accepted_answer", number(p.per_accepted_answer)},
                      {"basis", p.basis}});
  return {{"information_only", true},
          {"pass_rate", number(energy.pass_rate)},
          {"provisional", energy.provisional},
          {"phases", phases}};
}

std::vector<std::vector<std::string>> EnergyTable(const EnergyFigures& energy) {
  std::vector<std::vector<std::string>> table = {{"at", "phase", "method", "covered", "joules",
                                                  "J per completed request", "J per output token",
                                                  "J per accepted answer", "note"}};
  // While too few answers are scored, a figure from the pass rate says what it rests on.
  const std::string provisional = energy.provisional.empty() ? "" : " (" + energy.provisional + ")";
  for (const PhaseEnergy& p : energy.phases) {
    const std::string per_accepted =
        Figure(p.per_accepted_answer, 3) + (p.per_accepted_answer ? provisional : "");
    table.push_back({p.at, p.phase, p.method.empty() ? "-" : p.method + " (" + p.source + ")",
                     p.method.empty() ? "-" : FormatNumber(p.covered_share * 100, 1) + "%",
                     Figure(p.joules, 1), Figure(p.per_request, 3), Figure(p.per_output_token, 4),
                     per_accepted, p.basis});
  }
  return table;
}

}  // namespace stagegate::report

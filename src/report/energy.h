#pragma once

// Energy per completed request, per output token and per accepted answer, from the GPUs' own
// cumulative energy counters (NVML's nvmlDeviceGetTotalEnergyConsumption, DCGM's
// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) read at the phase's boundaries, or, where no GPU gave a
// counter, from its sampled power integrated over the phase. Information, never a check.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "report/server_series.h"
#include "store/findings.h"
#include "store/store.h"

namespace stagegate::report {

/// The energy of one phase of the final stage.
struct PhaseEnergy {
  std::string at;                // "steady" or "sustained capacity"
  std::string phase;             // "full steady", "full sweep at 8 req/s"
  std::string method;            // "counter", "integrated power", or "" when not known
  std::string source;            // the metric read: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", ...
  double window_s = 0;           // the phase's length
  double covered_share = 0;      // of the window, the part the samples span (0 to 1)
  std::optional<double> joules;  // over the covered part
  int64_t completed = 0;
  std::optional<double> output_tokens;  // of the completed requests, where counted
  std::optional<double> per_request, per_output_token, per_accepted_answer;
  std::string basis;  // why a figure is not known; "" when all are
};

struct EnergyFigures {
  std::vector<PhaseEnergy> phases;
  std::optional<double> pass_rate;  // the reviewers' pass rate, for per accepted answer
  /// What the pass rate rests on while too few answers are scored ("provisional: from 7 of the
  /// 40 answers needed"); "" otherwise. Set by the caller, from the cost's.
  std::string provisional;
};

/// Energy at the final stage's steady phase and at its sweep's highest level that held, from the
/// run's telemetry. A counter that drops (the driver reloaded) counts from its new value.
Result<EnergyFigures> ComputeEnergy(store::Store& store, const store::RunInfo& run,
                                    const std::vector<store::PhaseInfo>& phases,
                                    const store::RunFindings& findings,
                                    std::optional<double> pass_rate);

/// The energy between two times of a cumulative counter's samples (interpolated linearly), or of
/// power samples integrated by the trapezoid rule, over the part of [from_ns, to_ns] the samples
/// span: (joules, covered share). Nothing when the samples do not reach into the span.
std::optional<std::pair<double, double>> CounterEnergy(const SeriesValues& counter, int64_t from_ns,
                                                       int64_t to_ns);
std::optional<std::pair<double, double>> IntegratedEnergy(const SeriesValues& power,
                                                          int64_t from_ns, int64_t to_ns);

/// Whether any phase has joules (else the report says why in one sentence, not a table).
bool Measured(const EnergyFigures& energy);

nlohmann::json EnergyJson(const EnergyFigures& energy);
/// The energy as a table, a header row first; only the header when no phase had any.
std::vector<std::vector<std::string>> EnergyTable(const EnergyFigures& energy);

}  // namespace stagegate::report

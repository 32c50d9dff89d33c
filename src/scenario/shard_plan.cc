#include "scenario/shard_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/clock.h"
#include "base/strings.h"

namespace stagegate::scenario {
namespace {

using manifest::LoadPhase;
using manifest::PhaseKind;

bool UsedByAStage(const manifest::Scenario& scenario, PhaseKind kind) {
  for (const manifest::EffectiveStage& stage : manifest::EffectiveStages(scenario))
    if (stage.phases.empty() ||
        std::find(stage.phases.begin(), stage.phases.end(), kind) != stage.phases.end())
      return true;
  return false;
}

}  // namespace

std::vector<std::string> ShardProblems(const manifest::Bundle& bundle, int64_t shards) {
  std::vector<std::string> problems;
  const manifest::Scenario& scenario = bundle.scenario;
  for (const LoadPhase& phase : scenario.phases) {
    if (!UsedByAStage(scenario, phase.kind)) continue;
    const std::string where = phase.pos.ToString() + ": " +
                              std::string(manifest::NameOf(phase.kind, manifest::kPhaseNames)) +
                              ": a run in " + std::to_string(shards) + " shards ";
    if (phase.search)
      problems.push_back(where +
                         "takes fixed plans only: a search decides each level from the one "
                         "before, which no shard sees whole; give fixed levels (rates or "
                         "concurrencies) instead");
    if (phase.bisect > 0)
      problems.push_back(where +
                         "takes fixed plans only: bisection decides its levels from the ones "
                         "before, which no shard sees whole; drop 'bisect'");
    const bool closed_loop = phase.concurrency || !phase.concurrency_levels.empty();
    if (closed_loop && !phase.duration_s)
      problems.push_back(where +
                         "starts every phase at the same planned offset in every shard, so a "
                         "closed loop needs 'duration_s' (a request count alone ends whenever "
                         "the server lets it)");
    std::vector<int64_t> concurrencies = phase.concurrency_levels;
    if (phase.concurrency) concurrencies.push_back(*phase.concurrency);
    for (int64_t c : concurrencies)
      if (c < shards) {
        problems.push_back(where +
                           "needs at least one request in flight in each shard: " + "concurrency " +
                           std::to_string(c) + " is below " + std::to_string(shards));
        break;
      }
  }
  return problems;
}

int64_t SlotNs(const PhaseStep& step) {
  const load::LoadOptions& o = step.options;
  int64_t span = o.duration_s ? static_cast<int64_t>(*o.duration_s * 1e9) : 0;
  if (!o.arrivals.empty()) span = std::max(span, o.arrivals.back().intended_ns);
  return span + static_cast<int64_t>(o.grace_s * 1e9);
}

void TakeShard(PhaseStep& step, load::Shard shard) {
  step.options.shard = shard;
  if (shard.count <= 1) return;
  std::vector<load::Arrival>& arrivals = step.options.arrivals;
  std::erase_if(arrivals, [shard](const load::Arrival& a) {
    return a.sequence % shard.count != shard.index;
  });
  // What this shard's client is offered: its own part of the schedule.
  if (step.offered_rate) step.offered_rate = OfferedRate(arrivals);
}

Result<load::Shard> ShardOption(const std::string& text) {
  if (!text.starts_with("job/")) return load::ParseShard(text);
  const char* value = std::getenv("JOB_COMPLETION_INDEX");
  const std::optional<int64_t> index = value ? ParseWholeNumber(value) : std::optional<int64_t>();
  const std::optional<int64_t> count = ParseWholeNumber(std::string_view(text).substr(4));
  if (!count || *count < 1)
    return Status::InvalidInput("shard '" + text + "': expected job/N, N a whole number from 1");
  if (!index || *index >= *count)
    return Status::InvalidInput(
        "shard '" + text + "': JOB_COMPLETION_INDEX " +
        (value ? "is '" + std::string(value) + "', not an index from 0 to " +
                     std::to_string(*count - 1)
               : std::string("is not set (it is set in the pods of an Indexed Job)")));
  return load::Shard{.index = *index, .count = *count};
}

Result<int64_t> StartAtOption(const std::string& text) {
  const auto bad = [&text] {
    return Status::InvalidInput("--start-at '" + text +
                                "': expected RFC 3339 with a zone, e.g. 2026-12-02T10:00:00Z, "
                                "or Unix milliseconds");
  };
  // Within a week of now either way: a start further off is a mistake, and its ns would not fit.
  const auto near = [&text](int64_t ms) -> Result<int64_t> {
    constexpr int64_t kWeekMs = 7LL * 86'400'000;
    if (ms < WallUnixMs() - kWeekMs || ms > WallUnixMs() + kWeekMs)
      return Status::InvalidInput("--start-at '" + text + "': more than a week from now");
    return ms;
  };
  if (std::optional<int64_t> ms = ParseWholeNumber(text)) return near(*ms);
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return bad();
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (*rest == '.') {
    int64_t scale = 100;
    for (++rest; std::isdigit(static_cast<unsigned char>(*rest)); ++rest, scale /= 10)
      ms += (*rest - '0') * scale;  // digits past the millisecond add nothing
  }
  if (*rest == 'Z' || *rest == 'z') return rest[1] == '\0' ? near(ms) : bad();
  int hours = 0, minutes = 0;
  char sign = 0, end = 0;
  if (std::sscanf(rest, "%c%2d:%2d%c", &sign, &hours, &minutes, &end) != 3 ||
      (sign != '+' && sign != '-') || hours > 23 || minutes > 59 || std::strlen(rest) != 6)
    return bad();
  const int64_t offset_ms = (hours * 60 + minutes) * 60'000;
  return near(sign == '+' ? ms - offset_ms : ms + offset_ms);
}

}  // namespace stagegate::scenario

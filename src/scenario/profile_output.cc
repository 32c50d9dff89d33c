#include "scenario/profile_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "base/version.h"
#include "console/console.h"
#include "load/aiperf_export.h"
#include "load/record_json.h"
#include "scenario/client_check.h"
#include "scenario/runner.h"
#include "telemetry/series.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;

std::string Ms(const stats::Summary& s, double p) {
  if (s.count == 0) return "-";
  return FormatMilliseconds(s.Percentile(p));
}

std::string LevelName(const ProfileLevel& level) {
  return LevelLabel(level.kind, level.value);
}

nlohmann::json ReceiveJson(const ProfileLevel& level) {
  const load::ReceiveStats& r = level.receive;
  const auto quantile = [&r](double q) {
    const std::optional<double> us = r.ReadDelayQuantileUs(q);
    return us ? nlohmann::json(*us) : nlohmann::json(nullptr);
  };
  return {{"stamped_by", level.receive_times == load::ReceiveTimes::kKernel ? "kernel" : "read"},
          {"kernel_stamped_reads", r.kernel_stamped},
          {"client_stamped_reads", r.client_stamped},
          {"read_delay_p50_us", quantile(0.5)},
          {"read_delay_p99_us", quantile(0.99)},
          {"read_delay_max_us", r.kernel_stamped
                                    ? nlohmann::json(static_cast<double>(r.read_delay_max_ns) / 1e3)
                                    : nlohmann::json(nullptr)}};
}

// The level whose window holds `t_ns`, if any.
const LevelWindow* LevelAt(const std::vector<LevelWindow>& levels, int64_t t_ns) {
  for (const LevelWindow& level : levels)
    if (t_ns >= level.started_ns && t_ns <= level.ended_ns) return &level;
  return nullptr;
}

std::string LabelsJson(const telemetry::Sample& sample) {
  json labels = json::object();
  for (const auto& [name, value] : sample.labels)
    labels[name] = value;
  return labels.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

void CheckClient(ProfileLevel& level, std::span<const load::RequestRecord> records) {
  for (std::string& warning : CheckClient({.metrics = level.metrics,
                              .records = records,
                              .open_loop = level.offered_rate.has_value(),
                              .max_worker_busy = level.max_worker_busy,
                              .receive_times = level.receive_times,
                              .receive = level.receive}))
    level.client_warnings.push_back(std::move(warning));
}

std::string LevelKind(const PhaseStep& step) {
  if (step.kind != manifest::PhaseKind::kSweep) return "trace";
  return step.closed_loop ? "concurrency" : "request_rate";
}

std::string LevelLabel(const std::string& kind, double value) {
  if (kind == "concurrency") return "c=" + FormatNumber(value, 0);
  if (kind == "request_rate") return FormatNumber(value, 2) + "/s";
  return "trace x" + FormatNumber(value, 2);
}

ProfileLevel LevelOf(const StepResult& step, std::span<const load::RequestRecord> records,
                     bool tokenizer) {
  ProfileLevel level{.kind = LevelKind(step.step),
                     .value = step.step.level.value_or(0),
                     .started_ns = step.started_ns,
                     .ended_ns = step.ended_ns,
                     .metrics = step.metrics,
                     .offered_rate = step.step.offered_rate,
                     .wall_s = static_cast<double>(step.ended_ns - step.started_ns) / 1e9,
                     .client_cpu_s = step.client_cpu_s,
                     .idle_poll_s = step.idle_poll_s,
                     .max_worker_busy = step.max_worker_busy,
                     .workers = step.workers,
                     .dropped = step.dropped,
                     .interrupted = step.interrupted,
                     .receive_times = step.step.options.receive_times,
                     .receive = step.receive,
                     .start_lag_ns = step.start_lag_ns,
                     .client_warnings = step.client_warnings,
                     .judgement = step.level,
                     .first_record = step.first_record,
                     .record_count = step.record_count,
                     .sessions = step.sessions,
                     .checks = step.checks};
  if (tokenizer)
    if (std::optional<std::string> check = TokenizerCheck(records))
      level.self_check_warnings.push_back(*check);
  return level;
}

LevelVerdict ProfileLevel::Verdict() const {
  if (judgement) return judgement->verdict;
  return AllPassed(checks) ? LevelVerdict::kPass : LevelVerdict::kFail;
}

std::vector<std::string> ProfileLevel::Warnings() const {
  std::vector<std::string> all = client_warnings;
  all.insert(all.end(), self_check_warnings.begin(), self_check_warnings.end());
  return all;
}

nlohmann::json ProfileFindings(const nlohmann::json& profile, const std::string& model,
                               const std::vector<ProfileLevel>& levels,
                               const std::optional<SweepResult>& sweep, bool search) {
  StageResult stage{.name = "profile"};
  bool interrupted = false;
  for (const ProfileLevel& level : levels) {
    StepResult step{.stage = "profile",
                    .metrics = level.metrics,
                    .judged = true,
                    .interrupted = level.interrupted,
                    .started_ns = level.started_ns,
                    .ended_ns = level.ended_ns,
                    .client_cpu_s = level.client_cpu_s,
                    .receive = level.receive,
                    .start_lag_ns = level.start_lag_ns,
                    .level = level.judgement,
                    .sessions = level.sessions,
                    .client_warnings = level.client_warnings};
    const bool trace = level.kind == "trace";
    step.step.kind = trace ? manifest::PhaseKind::kSteady : manifest::PhaseKind::kSweep;
    if (!trace) step.step.level = level.value;
    step.step.closed_loop = level.kind == "concurrency";
    step.step.offered_rate = level.offered_rate;
    if (level.judgement) step.checks = level.judgement->checks;
    stage.sweep_took_s += level.wall_s;
    interrupted = interrupted || level.interrupted;
    stage.steps.push_back(std::move(step));
  }
  if (sweep) {
    stage.capacity = sweep->finding;
    stage.sweep_levels = sweep->outcomes;
    stage.sweep_search = search;
  }
  manifest::Bundle bundle;
  bundle.scenario.name = "profile";
  bundle.scenario.manifest.model = model;
  const RunReport report{.run_id = profile.value("run_id", ""),
                         .interrupted = interrupted,
                         .stages = {std::move(stage)}};
  nlohmann::json findings = RunJson(bundle, profile.value("fingerprint", ""), report);
  findings["profile"] = profile;
  return findings;
}

Status KeepFindings(store::Store& store, const std::string& run_id, const nlohmann::json& findings,
                    bool interrupted) {
  SG_RETURN_IF_ERROR(store.SetRunFindings(
      run_id, findings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  return store.SetRunStatus(
      run_id, interrupted ? store::RunStatus::kInterrupted : store::RunStatus::kComplete,
      WallUnixMs());
}

std::vector<std::string> ProfileTable(const std::vector<ProfileLevel>& levels) {
  const std::vector<std::string> header = {
      "level", "ok/offered", "req/s", "tok/s",   "goodput", "ttft p50", "p95",
      "p99",   "itl p50",    "p95",   "e2e p50", "p95",     "lag p99",  "level"};
  std::vector<std::vector<std::string>> rows;
  for (const ProfileLevel& level : levels) {
    const load::PhaseMetrics& m = level.metrics;
    rows.push_back({LevelName(level) + (level.interrupted ? "*" : ""),
                    std::to_string(m.completed) + "/" + std::to_string(m.offered),
                    FormatNumber(m.request_throughput, 2),
                    FormatNumber(m.output_token_throughput, 1), FormatNumber(m.goodput, 2),
                    Ms(m.ttft_ms, 50), Ms(m.ttft_ms, 95), Ms(m.ttft_ms, 99), Ms(m.itl_ms, 50),
                    Ms(m.itl_ms, 95), Ms(m.e2e_ms, 50), Ms(m.e2e_ms, 95), Ms(m.schedule_lag_ms, 99),
                    VerdictName(level.Verdict())});
  }
  std::vector<std::string> lines = console::FormatTable(header, rows);
  lines.front() += "   (latencies in ms)";
  return lines;
}

std::vector<std::string> SelfCheckLines(const ProfileLevel& level) {
  const load::PhaseMetrics& m = level.metrics;
  // An open loop whose arrivals span no time (one, or all at one instant) has no rate, and is
  // still not a closed loop.
  const std::string offered = level.offered_rate ? FormatNumber(*level.offered_rate, 2) + "/s"
                              : level.kind == "concurrency"
                                  ? "closed loop"
                                  : std::to_string(m.offered) + " at once (open loop, no rate)";
  std::vector<std::string> lines = {
      "self-check " + LevelName(level) + ": offered " + offered + ", achieved " +
      FormatNumber(m.achieved_rate, 2) + "/s; schedule lag p99 " +
      (m.schedule_lag_ms.count ? FormatNumber(m.schedule_lag_ms.Percentile(99), 3) : "-") +
      " ms, max " + (m.schedule_lag_ms.count ? FormatNumber(m.schedule_lag_ms.max, 3) : "-") +
      " ms; client CPU " + FormatNumber(level.client_cpu_s, 3) + " s over " +
      FormatNumber(level.wall_s, 3) + " s (" +
      (level.idle_poll_s >= 0.0005 ? FormatNumber(level.idle_poll_s, 3) + " s of it idle polling, "
                                   : "") +
      std::to_string(level.workers) + " workers, busiest " +
      FormatNumber(level.max_worker_busy * 100, 0) + "%)"};
  const load::ReceiveStats& receive = level.receive;
  const int64_t reads = receive.kernel_stamped + receive.client_stamped;
  if (reads > 0) {
    std::string line = "  arrivals stamped ";
    line += level.receive_times == load::ReceiveTimes::kKernel
                ? "by the kernel's receive time for " +
                      FormatNumber(100.0 * static_cast<double>(receive.kernel_stamped) / reads, 1) +
                      "% of reads"
                : "when read (--receive-times read)";
    if (receive.kernel_stamped > 0)
      line += "; the client read them p50 " +
              FormatMicroseconds(*receive.ReadDelayQuantileUs(0.5)) + ", p99 " +
              FormatMicroseconds(*receive.ReadDelayQuantileUs(0.99)) + ", max " +
              FormatMicroseconds(static_cast<double>(receive.read_delay_max_ns) / 1e3) +
              " after they arrived";
    lines.push_back(line);
  }
  for (const std::string& warning : level.Warnings())
    lines.push_back("  warning: " + warning);
  return lines;
}

std::vector<std::string> SessionLines(const ProfileLevel& level) {
  if (!level.sessions) return {};
  return load::SessionSummaryLines(*level.sessions, "  ");
}

std::optional<std::string> TokenizerCheck(std::span<const load::RequestRecord> records) {
  std::vector<double> differences;
  for (const load::RequestRecord& r : records)
    if (r.input_token_source == "usage" && r.input_tokens && r.requested_input_tokens &&
        *r.requested_input_tokens > 0)
      differences.push_back(static_cast<double>(*r.input_tokens - *r.requested_input_tokens) /
                            static_cast<double>(*r.requested_input_tokens));
  if (differences.empty()) return std::nullopt;
  std::sort(differences.begin(), differences.end());
  const double median = stats::PercentileOfSorted(differences, 50);
  if (std::abs(median) <= 0.02) return std::nullopt;
  return "the server counted " + FormatNumber(std::abs(median) * 100, 1) + "% " +
         (median > 0 ? "more" : "fewer") + " input tokens than the tokenizer (median of " +
         std::to_string(differences.size()) +
         " requests): a chat template adds a few, past 2% the tokenizer may not be the model's";
}

nlohmann::json ProfileJson(const nlohmann::json& config, const std::string& fingerprint,
                           const std::string& run_id, const std::vector<ProfileLevel>& levels,
                           bool interrupted) {
  nlohmann::json out = {{"schema_version", 1},
                        {"stagegate_version", kVersion},
                        {"run_id", run_id},
                        {"fingerprint", fingerprint},
                        {"interrupted", interrupted},
                        {"config", config},
                        {"levels", nlohmann::json::array()}};
  for (const ProfileLevel& level : levels) {
    nlohmann::json row = load::MetricsToJson(level.metrics);
    row["kind"] = level.kind;
    row["value"] = level.value;
    row["interrupted"] = level.interrupted;
    if (level.judgement) row["judgement"] = LevelJudgementJson(*level.judgement);
    row["self_check"] = {
        {"offered_rate", level.offered_rate ? nlohmann::json(*level.offered_rate) : nullptr},
        {"achieved_rate", level.metrics.achieved_rate},
        {"schedule_lag_p99_ms", level.metrics.schedule_lag_ms.count
                                    ? nlohmann::json(level.metrics.schedule_lag_ms.Percentile(99))
                                    : nullptr},
        {"schedule_lag_max_ms", level.metrics.schedule_lag_ms.count
                                    ? nlohmann::json(level.metrics.schedule_lag_ms.max)
                                    : nullptr},
        {"client_cpu_s", level.client_cpu_s},
        {"client_idle_poll_s", level.idle_poll_s},
        {"wall_s", level.wall_s},
        {"workers", level.workers},
        {"max_worker_busy", level.max_worker_busy},
        {"dropped", level.dropped},
        {"receive_times", ReceiveJson(level)},
        {"warnings", level.Warnings()}};
    if (level.sessions) row["sessions"] = load::SessionMetricsToJson(*level.sessions);
    if (level.start_lag_ns > 0) row["start_lag_ms"] = static_cast<double>(level.start_lag_ns) / 1e6;
    out["levels"].push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> CapacityLines(const std::vector<ProfileLevel>& levels,
                                       const std::optional<SweepResult>& sweep,
                                       const std::string& unit, bool search) {
  if (!sweep) return {};
  const stats::CapacityFinding& c = sweep->finding;
  std::vector<std::string> lines = {"capacity: " +
                                    stats::DescribeCapacity(c, sweep->outcomes, unit)};
  if (c.holds_up_to) lines.push_back("  " + stats::DescribeCapacityRates(c, unit));
  for (const ProfileLevel& level : levels)
    if (level.judgement && level.judgement->verdict != LevelVerdict::kPass)
      lines.push_back("  at " + FormatNumber(level.value, 6) + " " + unit + ": " +
                      level.judgement->reason);
  if (search)
    lines.push_back("  search: " + std::to_string(sweep->outcomes.size()) + " levels in " +
                    FormatNumber(sweep->took_s, 0) + " s");
  return lines;
}

std::string ProfileCsv(const std::vector<ProfileLevel>& levels) {
  std::string csv =
      "kind,value,offered,sent,completed,completion_rate,achieved_rate,request_throughput,"
      "output_token_throughput,goodput,level_verdict,sustained_rate";
  const std::vector<std::string> metrics = {"ttft_ms",         "ttst_ms",      "itl_ms",
                                            "tpot_ms",         "e2e_ms",       "corrected_ms",
                                            "schedule_lag_ms", "output_tokens"};
  for (const std::string& metric : metrics)
    for (const char* stat : {"mean", "p50", "p90", "p95", "p99", "max"})
      csv.append(",").append(metric).append("_").append(stat);
  csv += "\n";
  const auto number = [](double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.6g", value);
    return std::string(text);
  };
  for (const ProfileLevel& level : levels) {
    const load::PhaseMetrics& m = level.metrics;
    csv += level.kind + "," + number(level.value) + "," + std::to_string(m.offered) + "," +
           std::to_string(m.sent) + "," + std::to_string(m.completed) + "," +
           number(m.completion_rate) + "," + number(m.achieved_rate) + "," +
           number(m.request_throughput) + "," + number(m.output_token_throughput) + "," +
           number(m.goodput) + "," + VerdictName(level.Verdict()) + "," +
           (level.judgement && level.judgement->completed_rate
                ? number(*level.judgement->completed_rate)
                : "");
    for (const auto& [name, summary] : load::NamedSummaries(m)) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) continue;
      if (summary->count == 0) {
        csv += ",,,,,,";
        continue;
      }
      for (double value : {summary->mean, summary->Percentile(50), summary->Percentile(90),
                           summary->Percentile(95), summary->Percentile(99), summary->max})
        csv.append(",").append(number(value));
    }
    csv += "\n";
  }
  return csv;
}

Result<std::vector<std::string>> WriteProfileAiperf(
    const std::string& out_dir, const nlohmann::json& config, const std::string& run_id,
    const std::vector<ProfileLevel>& levels, std::span<const load::RequestRecord> records,
    const std::vector<load::Slo>& slos, const load::SyntheticOptions* synthetic,
    int64_t wall_origin_ns) {
  using json = nlohmann::json;
  // The config may be a merged one read back from the shards' stores: a field of another type
  // than its own is left out, never thrown on.
  const auto field = [&config](const char* key, const json& otherwise) {
    const json& value = config.is_object() && config.contains(key) ? config[key] : otherwise;
    return value.type() == otherwise.type() ? value : otherwise;
  };
  const bool seeded = config.is_object() && config.contains("seed") && config["seed"].is_number();
  json input = {{"random_seed", seeded ? config["seed"] : json()}};
  if (synthetic)
    input["prompt"] = {
        {"input_tokens",
         {{"mean", synthetic->input_tokens.mean}, {"stddev", synthetic->input_tokens.std}}},
        {"output_tokens",
         {{"mean", synthetic->output_tokens.mean}, {"stddev", synthetic->output_tokens.std}}}};
  if (synthetic && synthetic->prefixes.count > 0)
    input["prompt"]["prefix_prompt"] = {{"pool_size", synthetic->prefixes.count},
                                        {"length", synthetic->prefixes.tokens}};
  std::vector<std::string> written;
  for (const ProfileLevel& level : levels) {
    json loadgen = {{"request_count", level.metrics.offered}};
    if (level.kind == "concurrency")
      loadgen["concurrency"] = level.value;
    else if (level.kind == "request_rate")
      loadgen.update({{"request_rate", level.value}, {"arrival", field("arrival", "")}});
    else
      loadgen.update({{"trace", field("trace", "")}, {"speedup", level.value}});
    const std::string dir = levels.size() == 1
                                ? out_dir
                                : out_dir + "/aiperf/" + level.kind + FormatNumber(level.value, 3);
    SG_RETURN_IF_ERROR(load::WriteAiperfExport(
        dir, {.records = records.subspan(level.first_record, level.record_count),
              .slos = slos,
              .wall_origin_ns = wall_origin_ns,
              .interrupted = level.interrupted,
              .input_config = {{"endpoint",
                                {{"model_names", {field("model", "")}},
                                 {"type", field("endpoint", "")},
                                 {"streaming", field("stream", true)},
                                 {"url", field("url", "")}}},
                               {"input", input},
                               {"loadgen", loadgen}},
              .stagegate = {{"run_id", run_id},
                            {"token_counts", field("token_counts", "")},
                            {"level", {{"kind", level.kind}, {"value", level.value}}},
                            {"output_tokens_from_usage", level.metrics.usage_tokens},
                            {"output_tokens_counted", level.metrics.counted_tokens}}}));
    written.push_back(dir);
  }
  return written;
}

Result<std::vector<std::string>> WriteProfileOutputs(const std::string& out_dir,
                                                     const nlohmann::json& profile,
                                                     const std::vector<ProfileLevel>& levels,
                                                     std::span<const load::RequestRecord> records,
                                                     const std::vector<load::Slo>& slos,
                                                     const load::SyntheticOptions* synthetic,
                                                     int64_t wall_origin_ns) {
  std::error_code made;
  std::filesystem::create_directories(out_dir, made);
  if (made) return Status::IoError(out_dir + ": " + made.message());
  SG_RETURN_IF_ERROR(WriteFileAtomically(
      out_dir + "/profile.json",
      profile.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  SG_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/profile.csv", ProfileCsv(levels)));
  SG_RETURN_IF_ERROR(load::WriteRequestsJsonl(out_dir + "/requests.jsonl", records));
  return WriteProfileAiperf(out_dir, profile["config"], profile.value("run_id", ""), levels,
                            records, slos, synthetic, wall_origin_ns);
}

nlohmann::json ServerMetricsJson(const std::vector<TelemetrySource>& telemetry,
                                 const std::vector<LevelWindow>& levels,
                                 const std::vector<LevelSeries>& series_of) {
  using json = nlohmann::json;
  json sources = json::array();
  for (const TelemetrySource& s : telemetry)
    sources.push_back({{"source", s.source},
                       {"url", s.url},
                       {"scrapes", s.scrapes},
                       {"failures", s.failures},
                       {"last_error", s.last_error}});
  // Per level and canonical series: each scrape's value, then their mean and peak.
  json per_level = json::array();
  for (size_t i = 0; i < levels.size() && i < series_of.size(); ++i) {
    const LevelWindow& level = levels[i];
    json series = json::object();
    for (const auto& [name, values] : series_of[i]) {
      double sum = 0, peak = values.front().second;
      for (const auto& [t, v] : values) {
        sum += v;
        peak = std::max(peak, v);
      }
      series[std::string(telemetry::Name(name))] = {
          {"scrapes", values.size()},
          {"mean", sum / static_cast<double>(values.size())},
          {"max", peak}};
    }
    per_level.push_back({{"kind", level.kind},
                         {"value", level.value},
                         {"started_ns", level.started_ns},
                         {"ended_ns", level.ended_ns},
                         {"series", series}});
  }
  return {{"sources", sources}, {"levels", per_level}};
}

std::string ServerMetricsCsv(const std::vector<telemetry::TimedSample>& samples,
                             const std::vector<LevelWindow>& levels) {
  std::string out = "t_ns,level,source,series,labels,value,canonical,canonical_value\n";
  for (const telemetry::TimedSample& t : samples) {
    const LevelWindow* level = LevelAt(levels, t.t_ns);
    const std::optional<telemetry::VendorName> v = telemetry::Recognise(t.sample.name);
    out += std::to_string(t.t_ns) + "," +
           (level ? CsvField(level->kind + "=" + FormatNumber(level->value)) : "") + "," +
           CsvField(t.source) + "," + CsvField(t.sample.name) + "," +
           CsvField(LabelsJson(t.sample)) + "," + FormatNumber(t.sample.value, 6) + "," +
           (v ? CsvField(std::string(telemetry::Name(v->series))) : "") + "," +
           (v ? FormatNumber(t.sample.value * v->scale, 6) : "") + "\n";
  }
  return out;
}

}  // namespace stagegate::scenario

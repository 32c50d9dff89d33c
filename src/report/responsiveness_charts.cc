// The responsiveness section's charts in report.html: TTFT at steady load as a CDF, the sweep's
// latency and throughput by level, and the run's timelines (requests, latency, the server's
// series).

#include "report/responsiveness_charts.h"

#include <algorithm>
#include <cmath>

#include "base/strings.h"
#include "report/svg.h"

namespace stagegate::report {
namespace {

// The scenario's latency limits of one metric, as the charts' reference lines.
std::vector<RefLine> LimitLines(const ReportModel& m, const std::string& metric) {
  std::vector<RefLine> lines;
  for (const store::StoredLatencyThreshold& t : m.latency_limits)
    if (t.metric == metric)
      lines.push_back({.horizontal = true,
                       .value = t.max_ms,
                       .label = metric + " p" + FormatNumber(t.percentile) + " limit " +
                                FormatNumber(t.max_ms) + " ms"});
  return lines;
}

std::string HtmlSteadyCdf(const ReportModel& m) {
  if (m.charts.steady_ttft_ms.empty()) return "";
  Chart cdf{.title = "TTFT at steady load, by stage (CDF)",
            .description =
                "The share of requests (y) whose time to first token was at most x ms, one "
                "line a stage.",
            .x_label = "time to first token (ms)",
            .y_label = "share of requests",
            .log_x = true};
  for (const auto& [stage, values] : m.charts.steady_ttft_ms)
    cdf.series.push_back(CdfSeries(stage, values));
  for (const RefLine& limit : LimitLines(m, "ttft"))
    cdf.lines.push_back({.horizontal = false, .value = limit.value, .label = limit.label});
  return "<figure>" + LineChartSvg(cdf) + "</figure>\n";
}

std::string HtmlSweepCharts(const ReportModel& m) {
  if (m.charts.sweep.empty()) return "";
  Chart latency{.title = "Latency against offered load (final stage sweep)",
                .description =
                    "p95 latencies at each sweep level, with the thresholds and the limit of "
                    "acceptable responsiveness.",
                .x_label = "offered load (" + m.charts.sweep_unit + ")",
                .y_label = "ms"};
  Chart goodput{
      .title = "Goodput against offered load (final stage sweep)",
      .description = "Requests completed within every threshold, per second, at each sweep level.",
      .x_label = "offered load (" + m.charts.sweep_unit + ")",
      .y_label = "requests/s within thresholds"};
  for (const ChartLine& line : m.charts.sweep) {
    Series s{.name = line.name, .dots = true};
    for (const auto& [x, y] : line.points)
      s.points.push_back({x, y});
    (line.name == "goodput" ? goodput : latency).series.push_back(std::move(s));
  }
  for (const char* metric : {"ttft", "e2e"})
    for (const RefLine& limit : LimitLines(m, metric))
      latency.lines.push_back(limit);
  std::string out;
  for (Chart* chart : {&latency, &goodput}) {
    // Where acceptable responsiveness ends: between the last level that held and the first that
    // did not.
    if (m.charts.holds_up_to && m.charts.fails_at)
      chart->bands.push_back({.from = *m.charts.holds_up_to,
                              .to = *m.charts.fails_at,
                              .label = "limit " + FormatNumber(*m.charts.holds_up_to) + "-" +
                                       FormatNumber(*m.charts.fails_at)});
    else if (m.charts.fails_at)
      chart->lines.push_back({.horizontal = false,
                              .value = *m.charts.fails_at,
                              .label = "fails at " + FormatNumber(*m.charts.fails_at)});
    if (!chart->series.empty()) out += "<figure>" + LineChartSvg(*chart) + "</figure>\n";
  }
  return out;
}

std::string HtmlTimelineCharts(const ReportModel& m) {
  if (m.charts.timeline.empty()) return "";
  std::vector<Band> bands;
  for (const auto& [phase, span] : m.charts.phases)
    bands.push_back({.from = span.first, .to = span.second, .label = phase});
  Chart offered{.title = "Offered load around burst and overload (final stage)",
                .description =
                    "Requests sent a second, in each slice of the burst, overload and recovery "
                    "phases.",
                .x_label = "seconds",
                .y_label = "requests sent per second",
                .bands = bands};
  const std::string slice =
      m.charts.slice_s == 1 ? "second" : FormatNumber(m.charts.slice_s, 2) + " s slice";
  Chart ttft{.title = "TTFT p95 " + slice + " by " + slice + " (final stage)",
             .description =
                 "The 95th percentile of time to first token of the requests sent in "
                 "each " +
                 slice + ".",
             .x_label = "seconds",
             .y_label = "ms",
             .lines = LimitLines(m, "ttft"),
             .bands = bands};
  for (const ChartLine& line : m.charts.timeline) {
    Series s{.name = line.name, .step = line.name == "sent/s"};
    for (const auto& [x, y] : line.points)
      s.points.push_back({x, y});
    (line.name == "sent/s" ? offered : ttft).series.push_back(std::move(s));
  }
  std::string out = "<figure>" + LineChartSvg(offered) + "</figure>\n<figure>" +
                    LineChartSvg(ttft) + "</figure>\n";
  // The server's and the GPUs' series under the TTFT, on the same seconds.
  double last_s = 0;
  for (const auto& [phase, span] : m.charts.phases)
    last_s = std::max(last_s, span.second);
  const auto under = [&](const std::vector<ChartLine>& lines, std::string title,
                         std::string y_label, bool step) {
    if (lines.empty()) return std::string();
    Chart chart{.title = std::move(title),
                .description =
                    "Scraped from the target's metrics or the GPUs over the seconds of "
                    "the charts above.",
                .x_label = "seconds",
                .y_label = std::move(y_label),
                .x_min = 0,
                .x_max = last_s,
                .y_min = 0,
                .bands = bands};
    for (const ChartLine& line : lines) {
      Series s{.name = line.name, .step = step};
      for (const auto& [x, y] : line.points)
        s.points.push_back({x, y});
      chart.series.push_back(std::move(s));
    }
    return "<figure>" + LineChartSvg(chart) + "</figure>\n";
  };
  return out +
         under(m.charts.server, "The server's requests running and waiting", "requests", true) +
         under(m.charts.server_share, "KV cache and GPU utilisation", "%", false) +
         under(m.charts.gpu_power, "GPU power, all GPUs", "W", false) +
         under(m.charts.gpu_memory, "GPU memory in use, all GPUs", "GiB", false);
}

}  // namespace

std::string ResponsivenessChartsHtml(const ReportModel& m) {
  return HtmlSteadyCdf(m) + HtmlSweepCharts(m) + HtmlTimelineCharts(m);
}

}  // namespace stagegate::report

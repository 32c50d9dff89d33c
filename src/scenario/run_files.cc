#include "scenario/run_files.h"

#include <cctype>
#include <filesystem>
#include <span>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "load/aiperf_export.h"
#include "load/record_json.h"
#include "manifest/enum_name.h"

namespace stagegate::scenario {
namespace {

// Each load phase's AIPerf-compatible export, in out_dir/aiperf/<stage>-<phase>[-<level>]: the
// records of one step, as AIPerf keeps a directory per benchmark.
Status WriteRunAiperf(const std::string& out_dir, const manifest::Bundle& bundle,
                      const RunReport& report, const Runner& runner) {
  const manifest::Target& target = bundle.scenario.target;
  const nlohmann::json endpoint = {
      {"model_names", {target.model}},
      {"type", target.endpoint == manifest::Endpoint::kChat ? "chat" : "completions"},
      {"streaming", target.stream},
      {"url", target.base_url.empty() ? "stagegate sim" : UrlWithoutUserinfo(target.base_url)}};
  const std::span<const load::RequestRecord> records = runner.records();
  const int64_t wall_origin_ns = WallNsAtSteady(runner.origin_ns());
  for (const StageResult& stage : report.stages) {
    for (const StepResult& step : stage.steps) {
      if (step.step.kind == manifest::PhaseKind::kWarmup || !step.step.label.empty()) continue;
      const std::string phase = manifest::NameOf(step.step.kind, manifest::kPhaseNames);
      std::string name = stage.name + "-" + phase;
      if (step.step.kind == manifest::PhaseKind::kSweep && step.step.level)
        name += "-" + FormatNumber(*step.step.level, 3);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
      nlohmann::json loadgen = {{"request_count", step.metrics.offered}};
      if (step.step.level)
        loadgen[step.step.closed_loop ? "concurrency" : "request_rate"] = *step.step.level;
      SG_RETURN_IF_ERROR(load::WriteAiperfExport(
          out_dir + "/aiperf/" + name,
          {.records = records.subspan(step.first_record, step.record_count),
           .wall_origin_ns = wall_origin_ns,
           .interrupted = step.interrupted,
           .input_config = {{"endpoint", endpoint},
                            {"input", {{"random_seed", bundle.scenario.seed}}},
                            {"loadgen", loadgen}},
           .stagegate = {{"run_id", report.run_id},
                         {"stage", stage.name},
                         {"phase", phase},
                         {"phase_id", step.phase_id},
                         {"output_tokens_from_usage", step.metrics.usage_tokens},
                         {"output_tokens_counted", step.metrics.counted_tokens}}}));
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteRunFiles(const std::string& out_dir, const manifest::Bundle& bundle,
                     const std::string& fingerprint, const RunReport& report, const Runner& runner,
                     store::Store& store) {
  std::error_code made;
  std::filesystem::create_directories(out_dir, made);
  if (made) return Status::IoError(out_dir + ": " + made.message());
  const nlohmann::json run_json = RunJson(bundle, fingerprint, report);
  SG_RETURN_IF_ERROR(WriteFileAtomically(
      out_dir + "/run.json",
      run_json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  SG_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/stages.csv", StagesCsv(report)));
  SG_RETURN_IF_ERROR(load::WriteRequestsJsonl(out_dir + "/requests.jsonl", runner.records()));
  SG_RETURN_IF_ERROR(WriteRunAiperf(out_dir, bundle, report, runner));
  return store.SetRunFindings(
      report.run_id, run_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace stagegate::scenario

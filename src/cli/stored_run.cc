#include "cli/stored_run.h"

#include <filesystem>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "manifest/fingerprint.h"
#include "sim/profile.h"
#include "store/findings.h"

namespace stagegate::cli {

Result<OpenedRun> OpenRun(const GlobalOptions& global, const std::string& run_id) {
  Result<std::unique_ptr<store::Store>> store = store::Store::OpenExisting(global.db_path);
  if (!store.ok()) return store.status();
  Result<std::optional<store::RunInfo>> found = (*store)->FindRun(run_id);
  if (!found.ok()) return found.status();
  if (!*found) return Status::InvalidInput("no run " + run_id + " in " + global.db_path);
  return OpenedRun{std::move(*store), **found};
}

std::optional<manifest::Bundle> LoadBundleAsRunWill(const std::string& path,
                                                    console::Console& console,
                                                    scenario::InputFiles& input) {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(path, diagnostics);
  // The sim's latency profile is the application's, not the manifest's, but a run reads it
  // before it sends anything: check it as the run will.
  if (bundle && bundle->scenario.target.kind == manifest::TargetKind::kSim &&
      !sim::LoadSimProfile(bundle->scenario.target.sim_profile, diagnostics))
    bundle.reset();
  // The tokenizer and the dataset are read as the run will read them, so that their problems
  // (a dataset's bad lines) show now.
  if (bundle && !scenario::LoadInputFiles(bundle->scenario, diagnostics, input)) bundle.reset();
  if (bundle) return bundle;
  for (const manifest::Diagnostic& diagnostic : diagnostics.Sorted())
    console.Error(diagnostic.ToString());
  const size_t count = diagnostics.Count();
  console.Error(std::to_string(count) + (count == 1 ? " problem" : " problems") + " in " + path +
                " and the files it names");
  return std::nullopt;
}

ExitCode Fail(console::Console& console, const std::string& command, const Status& status) {
  for (const std::string& line : Split(status.message(), '\n'))
    console.Error("stagegate " + command + ": " + line);
  return status.code() == Status::Code::kInvalidInput ? ExitCode::kInvalidInput
                                                      : ExitCode::kRuntimeFailure;
}

nlohmann::json WithRunFolder(nlohmann::json settings, const std::string& out_dir) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(out_dir, error);
  settings["out_dir"] =
      (error ? std::filesystem::path(out_dir) : absolute).lexically_normal().string();
  return settings;
}

std::optional<std::string> RunFolder(const store::RunInfo& run) {
  const nlohmann::json settings = nlohmann::json::parse(run.settings_json, nullptr, false);
  if (!settings.is_object() || !settings.contains("out_dir") || !settings["out_dir"].is_string() ||
      settings["out_dir"].get<std::string>().empty())
    return std::nullopt;
  return settings["out_dir"].get<std::string>();
}

std::string ReportCommandLine(const GlobalOptions& global, const std::string& run_id) {
  return "stagegate " +
         (global.db_path == store::kDefaultStorePath ? std::string()
                                                     : "--db " + ShellWord(global.db_path) + " ") +
         "report " + run_id;
}

std::optional<manifest::Bundle> RunBundle(const store::RunInfo& run, std::string& problem) {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(run.scenario_file, diagnostics);
  if (!bundle) {
    problem = "the run's scenario " + run.scenario_file + " cannot be read again";
    for (const manifest::Diagnostic& d : diagnostics.Sorted())
      problem += "\n" + d.ToString();
    return std::nullopt;
  }
  // The corpus and rubric the run used, by the sha256 of their canonical forms.
  const store::StoredScenario then = store::ParseScenario(run.scenario_json);
  const manifest::Fingerprint now = manifest::ComputeFingerprint(*bundle);
  for (const auto& [part, used, current] :
       {std::tuple{"corpus", then.corpus_sha256, now.corpus_sha},
        std::tuple{"rubric", then.rubric_sha256, now.rubric_sha}}) {
    if (used != current) {
      problem = std::string("the ") + part + " of " + run.scenario_file +
                " has changed since run " + run.id + ": restore the " + part + " the run used (" +
                (used.empty() ? "unknown" : "sha256 " + used) + ")";
      return std::nullopt;
    }
  }
  return bundle;
}

}  // namespace stagegate::cli

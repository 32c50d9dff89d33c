#include "scenario/run_bundle.h"

#include <tuple>

#include "manifest/fingerprint.h"
#include "sim/profile.h"
#include "store/findings.h"

namespace stagegate::scenario {

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

std::optional<manifest::Bundle> LoadBundleAsRunWill(const std::string& path,
                                                    manifest::Diagnostics& diagnostics,
                                                    InputFiles& input) {
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(path, diagnostics);
  // The sim's latency profile is the application's, not the manifest's, but a run reads it
  // before it sends anything: check it as the run will.
  if (bundle && bundle->scenario.target.kind == manifest::TargetKind::kSim &&
      !sim::LoadSimProfile(bundle->scenario.target.sim_profile, diagnostics))
    bundle.reset();
  // The tokenizer and the dataset are read as the run will read them, so that their problems
  // (a dataset's bad lines) show now.
  if (bundle && !LoadInputFiles(bundle->scenario, diagnostics, input)) bundle.reset();
  return bundle;
}

}  // namespace stagegate::scenario

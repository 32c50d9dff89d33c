// The scenario loader on any file (the corpus and rubric it names are not opened: see the corpus
// and rubric targets), then what `stagegate validate --json` makes of a scenario that loads: its
// effective stages and canonical form.

#include <cstdint>

#include "fuzz_support.h"
#include "manifest/bundle.h"
#include "manifest/fingerprint.h"
#include "manifest/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace manifest = stagegate::manifest;

  const std::string path =
      stagegate::fuzz::WriteScratchFile("scenario.yaml", stagegate::fuzz::AsText(data, size));
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Scenario> scenario = manifest::LoadScenario(path, diagnostics);
  if (!scenario) {
    if (diagnostics.empty()) stagegate::fuzz::Fail("not loaded, and no problem reported");
    (void)diagnostics.ToString();
    return 0;
  }
  (void)manifest::EffectiveStages(*scenario);
  const manifest::Bundle bundle{.scenario = std::move(*scenario)};
  (void)manifest::ComputeFingerprint(bundle);
  return 0;
}

// The rubric loader on any file, then the canonical form of a rubric that loads.

#include <cstdint>

#include "fuzz_support.h"
#include "manifest/fingerprint.h"
#include "manifest/rubric.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace manifest = stagegate::manifest;

  const std::string path =
      stagegate::fuzz::WriteScratchFile("rubric.yaml", stagegate::fuzz::AsText(data, size));
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Rubric> rubric = manifest::LoadRubric(path, diagnostics);
  if (!rubric) {
    if (diagnostics.empty()) stagegate::fuzz::Fail("not loaded, and no problem reported");
    (void)diagnostics.ToString();
    return 0;
  }
  (void)manifest::CanonicalRubric(*rubric).dump();
  return 0;
}

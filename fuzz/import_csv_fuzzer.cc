// The score import on any CSV file (a filled-in CSV packet).

#include <cstdint>

#include "fuzz_support.h"
#include "import_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stagegate::fuzz::FuzzImport(stagegate::fuzz::AsText(data, size), "scores.csv");
  return 0;
}

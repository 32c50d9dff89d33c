// The score import on any JSON Lines file (the reviewer page's download, a filled-in packet).

#include <cstdint>

#include "fuzz_support.h"
#include "import_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stagegate::fuzz::FuzzImport(stagegate::fuzz::AsText(data, size), "scores.jsonl");
  return 0;
}

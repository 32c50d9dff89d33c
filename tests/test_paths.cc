#include "test_paths.h"

namespace stagegate::testing {

const char* SourceDir() {
  return STAGEGATE_SOURCE_DIR;
}
const char* TestdataDir() {
  return STAGEGATE_TESTDATA;
}
const char* StagegateBinary() {
  return STAGEGATE_BINARY;
}
const char* FakeNvmlLibrary() {
  return FAKE_NVML_LIBRARY;
}

}  // namespace stagegate::testing

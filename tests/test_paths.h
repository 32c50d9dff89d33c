#pragma once

// Where this build's tests find their inputs and the programs they run. CMakeLists.txt gives the
// absolute paths to test_paths.cc alone: no other test source's compile command names the folder
// of the checkout, so ccache serves a fresh clone in another folder (CI's) from an earlier build.

namespace stagegate::testing {

/// The checkout: corpus/, scenarios/, rubrics/ and tests/ are below it.
const char* SourceDir();
/// tests/testdata in the checkout.
const char* TestdataDir();
/// The stagegate executable of this build.
const char* StagegateBinary();
/// The stand-in for NVIDIA's libnvidia-ml of this build (tests/telemetry/fake_nvml.cc).
const char* FakeNvmlLibrary();

}  // namespace stagegate::testing

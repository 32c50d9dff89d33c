#pragma once

namespace stagegate {

/// Process exit codes, the same for every subcommand. Documented in `stagegate --help` and
/// docs/cli.md; scripts and CI systems depend on them, so values never change.
enum class ExitCode : int {
  kOk = 0,              // done; for a gate: ready
  kGateFailed = 1,      // a gate or check ran and failed (not ready)
  kInvalidInput = 2,    // bad usage, or a manifest, corpus, rubric or file with problems
  kRuntimeFailure = 3,  // could not do the work: I/O, store, port in use, ...
  kPending = 4,         // a gate that cannot decide yet (quality scores missing)
  kInterrupted = 130,   // stopped by SIGINT; what was measured is kept
};

inline int ToInt(ExitCode code) {
  return static_cast<int>(code);
}

/// Text for --help, one line per code.
inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0    ok (for --gate: ready)\n"
    "  1    a gate or check failed (not ready)\n"
    "  2    invalid input or usage: every problem is printed as path:line:col: message\n"
    "  3    runtime failure (I/O, store, network setup)\n"
    "  4    a gate that cannot decide yet (pending)\n"
    "  130  interrupted; what was measured is kept\n";

}  // namespace stagegate

#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_codes.h"
#include "console/console.h"

namespace stagegate::scenario {
struct RunSeam;
}

namespace stagegate::cli {

/// Options every subcommand shares.
struct GlobalOptions {
  std::string db_path;
  bool quiet = false;
  /// What `run` and `profile` read time from and send through: null for the steady clock and
  /// curl; a test in this process gives a fake clock and a scripted application
  /// (scenario/runner.h).
  const scenario::RunSeam* seam = nullptr;
};

/// One subcommand. Configure() declares its options on its CLI11 subcommand (each with its
/// default shown in --help); Run() is called once after a successful parse.
class Command {
 public:
  virtual ~Command() = default;
  virtual void Configure(CLI::App& app) = 0;
  virtual ExitCode Run(const GlobalOptions& global, console::Console& console) = 0;
};

struct CommandEntry {
  const char* name;
  const char* summary;
  std::unique_ptr<Command> (*make)();
};

/// The command table: every subcommand, in the order --help lists them.
const std::vector<CommandEntry>& Commands();

/// A CLI11 check that the value is a finite number between `min` and `max` (inclusive), applied
/// to each item of a list option. Integer options still refuse fractions when converted.
CLI::Validator Between(double min, double max);

/// A CLI11 check that the value is an absolute http:// or https:// URL (http::CheckHttpUrl).
CLI::Validator HttpUrl();

/// A CLI11 check for a base URL that a file or manifest will hold (http::CheckBaseUrlToKeep): no
/// credential, query string, fragment or endpoint path in it.
CLI::Validator BaseUrlToKeep();

/// The largest seed accepted: 2^53 - 1, every value of which a JSON number holds exactly.
inline constexpr double kMaxSeed = 9007199254740991.0;
/// The longest a timeout may be: one day, in milliseconds.
inline constexpr double kMaxTimeoutMs = 86'400'000.0;

/// Parses `argv`, runs the chosen subcommand on `console`, and returns the process exit code. An
/// exception that escapes a subcommand is printed as "stagegate <command>: internal error: ..."
/// and exits 3. `seam`: GlobalOptions::seam.
int Main(int argc, const char* const* argv, console::Console& console,
         const scenario::RunSeam* seam = nullptr);

/// Runs `run` and returns its exit code; an exception escaping it is printed as
/// "<name>: internal error: <what>" and returns 3 (runtime failure).
int RunGuarded(const std::string& name, const std::function<ExitCode()>& run,
               console::Console& console);

/// Makes std::terminate (an exception escaping a thread, say) print the same one line, naming the
/// command Main is running, and exit 3 instead of aborting. For main() to call once.
void InstallLastResortHandler();
/// The command the terminate handler names ("stagegate run"); Main sets it.
void SetRunningCommand(std::string_view name);

// One factory per subcommand, each defined in its own file.
std::unique_ptr<Command> MakeInitCommand();
std::unique_ptr<Command> MakeCorpusCommand();
std::unique_ptr<Command> MakeValidateCommand();
std::unique_ptr<Command> MakeSimCommand();
std::unique_ptr<Command> MakeProfileCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeMergeCommand();
std::unique_ptr<Command> MakeExportCommand();
std::unique_ptr<Command> MakeImportCommand();
std::unique_ptr<Command> MakeJudgeCommand();
std::unique_ptr<Command> MakeQualityCommand();
std::unique_ptr<Command> MakeTriageCommand();
std::unique_ptr<Command> MakeReportCommand();
std::unique_ptr<Command> MakeRunsCommand();
std::unique_ptr<Command> MakeSignoffCommand();
std::unique_ptr<Command> MakeCompareCommand();
std::unique_ptr<Command> MakeK8sCommand();

}  // namespace stagegate::cli

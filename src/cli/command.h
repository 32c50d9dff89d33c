#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "console/console.h"

namespace stagegate::cli {

/// Options every subcommand shares.
struct GlobalOptions {
  std::string db_path;
  bool quiet = false;
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

/// Parses `argv`, runs the chosen subcommand on `console`, and returns the process exit code.
int Main(int argc, const char* const* argv, console::Console& console);

// One factory per subcommand, each defined in its own file.
std::unique_ptr<Command> MakeValidateCommand();
std::unique_ptr<Command> MakeSimCommand();
std::unique_ptr<Command> MakeProfileCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeExportCommand();
std::unique_ptr<Command> MakeImportCommand();
std::unique_ptr<Command> MakeJudgeCommand();
std::unique_ptr<Command> MakeQualityCommand();
std::unique_ptr<Command> MakeTriageCommand();
std::unique_ptr<Command> MakeReportCommand();
std::unique_ptr<Command> MakeRunsCommand();
std::unique_ptr<Command> MakeCompareCommand();

}  // namespace stagegate::cli

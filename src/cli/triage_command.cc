// `stagegate triage RUN`: placeholder until the triage command lands.

#include "cli/command.h"

namespace stagegate::cli {
namespace {

class TriageCommand : public Command {
 public:
  void Configure(CLI::App& app) override { app.add_option("run", run_id_, "The run")->required(); }
  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    console.Error("stagegate triage: not built yet");
    return ExitCode::kRuntimeFailure;
  }

 private:
  std::string run_id_;
};

}  // namespace

std::unique_ptr<Command> MakeTriageCommand() {
  return std::make_unique<TriageCommand>();
}

}  // namespace stagegate::cli

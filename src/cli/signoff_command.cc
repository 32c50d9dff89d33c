// `stagegate signoff RUN`: an owner's decision on one condition of a run, recorded in the store
// with the evidence it was made on.

#include <algorithm>

#include "base/clock.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "console/console.h"
#include "report/decisions.h"
#include "report/model.h"
#include "scenario/run_bundle.h"

namespace stagegate::cli {
namespace {

// Why `text` cannot be recorded as `what`, or "". The report shows it to the people who decide,
// so it must read as it is: no bytes that are not UTF-8 (they would be kept as U+FFFD), no
// control characters, and nothing that reorders the text after it or breaks its line (a name
// with U+202E reads backwards from there).
std::string TextProblem(const std::string& text, const char* what, size_t max, bool lines) {
  if (text.size() > max)
    return std::string(what) + " is " + std::to_string(text.size()) + " bytes: at most " +
           std::to_string(max);
  if (std::optional<std::string> problem = DisplayTextProblem(text, lines))
    return std::string(what) + " " + *problem;
  return "";
}

class SignoffCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run decided on")->required();
    app.add_option("--condition", condition_, "The condition decided on")
        ->required()
        ->check(CLI::IsMember({"responsiveness", "quality", "recoverability"}));
    app.add_option("--by", by_, "Who decides (the condition's owner, as the scenario names them)")
        ->required();
    app.add_option("--decision", decision_, "accept or reject")
        ->required()
        ->check(CLI::IsMember({"accept", "reject"}));
    app.add_option("--note", note_,
                   "Why (shown in the report; with a rejection, the reason the run is not ready)");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override {
    if (Trim(by_).empty())
      return Fail(console, "signoff", Status::InvalidInput("--by must name who decides"));
    for (const std::string& problem :
         {TextProblem(by_, "--by", 200, false), TextProblem(note_, "--note", 4000, true)})
      if (!problem.empty()) return Fail(console, "signoff", Status::InvalidInput(problem));
    Result<OpenedRun> opened = OpenRun(global, run_id_);
    if (!opened.ok()) return Fail(console, "signoff", opened.status());
    const report::Condition condition = *report::ConditionNamed(condition_);
    Result<std::string> evidence =
        report::ConditionEvidence(*opened->store, opened->run, condition);
    if (!evidence.ok()) return Fail(console, "signoff", evidence.status());
    const store::Signoff signoff{.run_id = opened->run.id,
                                 .condition = condition_,
                                 .signed_by = std::string(Trim(by_)),
                                 .decision = decision_,
                                 .note = note_,
                                 .evidence = *evidence,
                                 .signed_unix_ms = WallUnixMs()};
    if (Status added = opened->store->AddSignoff(signoff); !added.ok())
      return Fail(console, "signoff", added);
    console.Line("recorded: " + condition_ + " " +
                 (decision_ == "accept" ? "accepted" : "rejected") + " by " + signoff.signed_by +
                 " on the evidence as it is now (" + evidence->substr(0, 12) + ")");
    // The verdict as the report will now give it.
    std::string problem;
    std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
    Result<report::ReportModel> model = report::BuildReport(
        *opened->store, opened->run, bundle ? &*bundle : nullptr, /*charts=*/false);
    if (!model.ok()) return Fail(console, "signoff", model.status());
    console.Line("verdict: " + std::string(report::Name(model->verdict)));
    for (const std::string& reason : model->verdict_reasons)
      console.Line("  " + reason);
    return ExitCode::kOk;
  }

 private:
  std::string run_id_, condition_, by_, decision_, note_;
};

}  // namespace

std::unique_ptr<Command> MakeSignoffCommand() {
  return std::make_unique<SignoffCommand>();
}

}  // namespace stagegate::cli

// `stagegate triage RUN [--class C] [--csv]`: one class for each request of a stored run (shed,
// error, denied, tool-failure, wrong, slow, ok) with the evidence that decided it and its trace
// id, so that support can tell slow generation, wrong answers and downstream tool failures apart.
// Reads the store alone, plus the run's corpus for the automated checks when it can still be read.

#include <algorithm>
#include <cstdio>
#include <map>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "report/triage.h"
#include "report/triaged_run.h"
#include "scenario/run_bundle.h"
#include "store/store.h"

namespace stagegate::cli {
namespace {

using report::TriagedRequest;

// The phase as support reads it: a sweep names its level.
std::string PhaseName(const store::PhaseInfo& phase) {
  if (phase.phase == "sweep" && phase.level) return "sweep " + FormatNumber(*phase.level, 3);
  return phase.phase;
}

std::optional<double> MsBetween(const std::optional<int64_t>& from,
                                const std::optional<int64_t>& to) {
  if (!from || !to) return std::nullopt;
  return static_cast<double>(*to - *from) / 1e6;
}

std::string MsField(const std::optional<double>& ms) {
  return ms ? FormatNumber(*ms, 3) : "";
}

class TriageCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("run", run_id_, "The run whose requests to classify")->required();
    app.add_option(
        "--class", class_,
        "List the requests of one class (" + Join(report::TriageClassNames(), ", ") + ")");
    app.add_flag("--csv", csv_, "Print every request (or the class's) as CSV");
  }

  ExitCode Run(const GlobalOptions& global, console::Console& console) override;

 private:
  void PrintSummary(const std::vector<TriagedRequest>& triaged, console::Console& console) const;
  void PrintList(const std::vector<const TriagedRequest*>& listed, console::Console& console) const;
  void PrintCsv(const std::vector<const TriagedRequest*>& listed, console::Console& console) const;

  std::string run_id_;
  std::string class_;
  bool csv_ = false;
};

ExitCode TriageCommand::Run(const GlobalOptions& global, console::Console& console) {
  std::optional<report::TriageClass> only;
  if (!class_.empty()) {
    only = report::TriageClassFromName(class_);
    if (!only) {
      const std::vector<std::string> names = report::TriageClassNames();
      return Fail(
          console, "triage",
          Status::InvalidInput("unknown class '" + class_ + "'" + DidYouMean(class_, names) +
                               "; the classes are " + Join(names, ", ")));
    }
  }
  Result<OpenedRun> opened = OpenRun(global, run_id_);
  if (!opened.ok()) return Fail(console, "triage", opened.status());
  std::string problem;
  const std::optional<manifest::Bundle> bundle = scenario::RunBundle(opened->run, problem);
  Result<report::TriagedRun> run =
      report::TriageStoredRun(*opened->store, opened->run, bundle ? &*bundle : nullptr, problem);
  if (!run.ok()) return Fail(console, "triage", run.status());
  const std::vector<TriagedRequest>& triaged = run->triaged;
  const std::vector<std::string>& notes = run->notes;

  std::vector<const TriagedRequest*> listed;
  for (const TriagedRequest& t : triaged)
    if (!only || t.triage.triage_class == *only) listed.push_back(&t);
  if (csv_) {
    for (const std::string& note : notes)
      console.Error("stagegate triage: note: " + note);
    PrintCsv(listed, console);
    return ExitCode::kOk;
  }
  console.Line("run " + run_id_ + " (" + opened->run.scenario_name + "): " +
               std::to_string(triaged.size()) + " requests, warmup and superseded phases left out");
  PrintSummary(triaged, console);
  for (const std::string& note : notes)
    console.Line("note: " + note);
  if (only) {
    console.Line("");
    PrintList(listed, console);
  }
  return ExitCode::kOk;
}

void TriageCommand::PrintSummary(const std::vector<TriagedRequest>& triaged,
                                 console::Console& console) const {
  std::map<std::string, int64_t> counts;
  for (const TriagedRequest& t : triaged)
    ++counts[std::string(report::TriageClassName(t.triage.triage_class))];
  std::vector<std::vector<std::string>> rows;
  for (const std::string& name : report::TriageClassNames()) {
    const int64_t count = counts[name];
    const double share =
        triaged.empty() ? 0
                        : 100.0 * static_cast<double>(count) / static_cast<double>(triaged.size());
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.1f%%", share);
    rows.push_back({name, std::to_string(count), percent});
  }
  for (const std::string& line : console::FormatTable({"class", "requests", "share"}, rows))
    console.Line(line);
}

void TriageCommand::PrintList(const std::vector<const TriagedRequest*>& listed,
                              console::Console& console) const {
  const std::vector<std::string> header = {"request", "stage/phase", "task",
                                           "class",   "trace",       "evidence"};
  std::vector<std::vector<std::string>> rows;
  for (const TriagedRequest* t : listed)
    rows.push_back(
        {std::to_string(t->record->id), t->phase->StageLabel() + "/" + PhaseName(*t->phase),
         t->record->task_id.empty() ? "-" : t->record->task_id,
         std::string(report::TriageClassName(t->triage.triage_class)),
         t->record->trace_id.empty() ? "-" : t->record->trace_id, Join(t->triage.evidence, "; ")});
  // Every column aligned left, the evidence last and unpadded: it is as long as it needs to be.
  std::vector<size_t> widths(header.size() - 1);
  for (size_t i = 0; i < widths.size(); ++i) {
    widths[i] = header[i].size();
    for (const std::vector<std::string>& row : rows)
      widths[i] = std::max(widths[i], row[i].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < widths.size(); ++i)
      text += cells[i] + std::string(widths[i] - cells[i].size() + 2, ' ');
    return text + cells.back();
  };
  console.Line(line(header));
  for (const std::vector<std::string>& row : rows)
    console.Line(line(row));
  if (rows.empty()) console.Line("(none)");
}

void TriageCommand::PrintCsv(const std::vector<const TriagedRequest*>& listed,
                             console::Console& console) const {
  console.Line(
      "run_id,request_id,stage,phase,task,persona,class,trace_id,status,outcome,ttft_ms,e2e_ms,"
      "evidence");
  for (const TriagedRequest* t : listed) {
    const load::RequestRecord& r = *t->record;
    const std::vector<std::string> fields = {
        run_id_,
        std::to_string(r.id),
        t->phase->StageLabel(),
        PhaseName(*t->phase),
        r.task_id,
        r.persona,
        std::string(report::TriageClassName(t->triage.triage_class)),
        r.trace_id,
        r.http_status ? std::to_string(*r.http_status) : "",
        std::string(load::OutcomeName(r.outcome)),
        MsField(MsBetween(r.sent_ns, r.first_token_ns)),
        MsField(MsBetween(r.sent_ns, r.end_ns)),
        Join(t->triage.evidence, "; ")};
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line += ',';
      line += CsvField(fields[i]);
    }
    console.Line(line);
  }
}

}  // namespace

std::unique_ptr<Command> MakeTriageCommand() {
  return std::make_unique<TriageCommand>();
}

}  // namespace stagegate::cli

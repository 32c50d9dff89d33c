#include "cli/stored_run.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "manifest/fingerprint.h"

namespace stagegate::cli {

Result<OpenedRun> OpenRun(const GlobalOptions& global, const std::string& run_id) {
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(global.db_path);
  if (!store.ok()) return store.status();
  Result<std::optional<store::RunInfo>> found = (*store)->FindRun(run_id);
  if (!found.ok()) return found.status();
  if (!*found) return Status::InvalidInput("no run " + run_id + " in " + global.db_path);
  return OpenedRun{std::move(*store), **found};
}

ExitCode Fail(console::Console& console, const std::string& command, const Status& status) {
  for (const std::string& line : Split(status.message(), '\n'))
    console.Error("stagegate " + command + ": " + line);
  return status.code() == Status::Code::kInvalidInput ? ExitCode::kInvalidInput
                                                      : ExitCode::kRuntimeFailure;
}

std::optional<manifest::Bundle> RunBundle(const store::RunInfo& run, std::string& problem) {
  using json = nlohmann::json;
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle = manifest::LoadBundle(run.scenario_file, diagnostics);
  if (!bundle) {
    problem = "the run's scenario " + run.scenario_file + " cannot be read again";
    for (const manifest::Diagnostic& d : diagnostics.Sorted())
      problem += "\n" + d.ToString();
    return std::nullopt;
  }
  const json then = json::parse(run.scenario_json, nullptr, false);
  const json now = manifest::CanonicalScenario(*bundle);
  for (const char* part : {"corpus", "rubric"}) {
    if (!then.is_object() || !then.contains(part) || then[part] != now[part]) {
      problem = std::string("the ") + part + " of " + run.scenario_file +
                " has changed since run " + run.id + ": restore the " + part + " the run used (" +
                (then.is_object() && then.contains(part) ? then[part].dump() : "unknown") + ")";
      return std::nullopt;
    }
  }
  return bundle;
}

}  // namespace stagegate::cli

#pragma once

// What the commands that work on a stored run share: opening the store and the run, loading a
// scenario as the run will (its problems printed), writing a run's report files (its verdict
// printed), and printing a failure.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/command.h"
#include "manifest/bundle.h"
#include "scenario/stage_requests.h"
#include "store/store.h"

namespace stagegate::cli {

/// The store and one of its runs.
struct OpenedRun {
  std::unique_ptr<store::Store> store;
  store::RunInfo run;
};

/// Opens the store of `global` and finds `run_id` in it (InvalidInput when it is not there).
Result<OpenedRun> OpenRun(const GlobalOptions& global, const std::string& run_id);

/// scenario::LoadBundleAsRunWill, with every problem printed to the console as
/// "path:line:col: message", then how many there were; nothing is returned then.
std::optional<manifest::Bundle> LoadBundleAsRunWill(const std::string& path,
                                                    console::Console& console,
                                                    scenario::InputFiles& input);

/// report::WriteReportFiles for a run whose scenario was read again (`bundle`, not null), with
/// the verdict and its reasons printed to the console.
Status WriteReportFiles(store::Store& store, const store::RunInfo& run,
                        const manifest::Bundle* bundle, const std::string& dir,
                        std::vector<std::string> formats, std::vector<std::string>& written,
                        console::Console& console);

/// Prints `status` line by line as "stagegate COMMAND: ..." and returns its exit code
/// (InvalidInput: 2, anything else: 3).
ExitCode Fail(console::Console& console, const std::string& command, const Status& status);

/// `settings` with the folder a run (or merge) writes its files to, as an absolute path, kept
/// as "out_dir": where `report` writes by default.
nlohmann::json WithRunFolder(nlohmann::json settings, const std::string& out_dir);

/// The folder a run wrote its files to, when it kept it (runs stored before it was kept did not).
std::optional<std::string> RunFolder(const store::RunInfo& run);

/// "stagegate report RUN", with the --db it needs when the store is not the default one.
std::string ReportCommandLine(const GlobalOptions& global, const std::string& run_id);

}  // namespace stagegate::cli

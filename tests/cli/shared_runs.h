#pragma once

// Runs that tests only read, made once for the whole suite. ctest runs each test tagged
// [shared-runs-setup] first and alone (the fixture `shared_runs`, CMakeLists.txt), so the runs'
// real-time verdicts are not moved by other tests' load; each test tagged [shared-runs] copies
// the folder it needs into its own. Run outside ctest, the first test to need a folder makes it.

#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <string>

#include "store/sqlite.h"
#include "test_util.h"

namespace stagegate::testing {

/// build-test/shared-runs: beside the binaries, so each build has its own.
inline std::string SharedRunsDir() {
  return std::filesystem::path(StagegateBinary()).parent_path() / "shared-runs";
}

/// Makes shared folder `name`: `make` makes its runs in a folder of its own, which is then
/// copied and renamed into place, so a shared folder that exists is whole.
inline void MakeSharedRuns(const std::string& name,
                           const std::function<void(const TempDir&)>& make) {
  TempDir made;
  make(made);
  WriteText(made / "made_in.txt", made.path());
  const std::string final_dir = SharedRunsDir() + "/" + name;
  const std::string making = final_dir + ".making";
  std::filesystem::remove_all(making);
  std::filesystem::create_directories(making);
  std::filesystem::copy(made.path(), making, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(final_dir);
  std::filesystem::rename(making, final_dir);
}

/// Copies shared folder `name` (its store, out/ and scenario) into `dir`, making it with `make`
/// first when there is none. The store names the folder its runs were made in (where `export`
/// reads the scenario again): the copy's store names `dir`, as if they were made there.
inline void CopySharedRuns(const TempDir& dir, const std::string& name,
                           const std::function<void(const TempDir&)>& make) {
  const std::string from = SharedRunsDir() + "/" + name;
  if (!std::filesystem::is_directory(from)) MakeSharedRuns(name, make);
  std::filesystem::copy(
      from, dir.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  const std::string made_in = ReadText(from + "/made_in.txt");
  REQUIRE(made_in.size() > 20);  // a test's own folder, which nothing else contains
  auto db = Ok(store::Database::Open(dir / "store.db", false));
  // The folders are bound, not spliced into the SQL text.
  for (const char* column : {"scenario_file", "settings_json"}) {
    Result<store::Statement> update = store::Statement::Prepare(
        *db, "UPDATE runs SET " + std::string(column) + " = replace(" + column + ", ?1, ?2)");
    REQUIRE(update.ok());
    update->Bind(1, made_in).Bind(2, dir.path());
    REQUIRE(update->Run().ok());
  }
}

}  // namespace stagegate::testing

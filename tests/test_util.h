#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/strings.h"
#include "store/sqlite.h"
#include "test_paths.h"

namespace stagegate::testing {

// A Status that must be ok: the test stops with its message otherwise.
inline void RequireOk(const Status& status) {
  INFO(status.message());
  REQUIRE(status.ok());
}

// The value of a Result that must be ok: the test stops with its message otherwise.
template <typename T>
T Ok(Result<T> result) {
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(result).value();
}

inline std::string Testdata(const std::string& relative) {
  return std::string(TestdataDir()) + "/" + relative;
}

inline std::string SourcePath(const std::string& relative) {
  return std::string(SourceDir()) + "/" + relative;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Each line of the file at `path` parsed as JSON (a requests.jsonl).
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadText(path));
  for (std::string line; std::getline(in, line);)
    lines.push_back(nlohmann::json::parse(line));
  return lines;
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

using stagegate::ReplaceAll;

/// Whether the golden files are to be written rather than compared: STAGEGATE_UPDATE_GOLDEN=1
/// (read the diff before keeping it).
inline bool UpdatingGolden() {
  return std::getenv("STAGEGATE_UPDATE_GOLDEN") != nullptr;
}

/// `actual` against the golden file at `path`, which STAGEGATE_UPDATE_GOLDEN=1 writes first.
inline void CheckGoldenFile(const std::string& path, const std::string& actual) {
  if (UpdatingGolden()) WriteText(path, actual);
  INFO("golden file "
       << path << " (STAGEGATE_UPDATE_GOLDEN=1 rewrites it; read the diff before keeping it)");
  CHECK(actual == ReadText(path));
}

/// A fresh folder under the system's temporary folder, removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = (std::filesystem::temp_directory_path() /
             ("stagegate-test-" + std::to_string(seed()) + std::to_string(seed())))
                .string();
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// The folders tests/testdata/fingerprint/base.yaml refers to, copied into `dir`: corpora/mini,
/// rubrics/mini.yaml, and an empty scenarios/ for the scenario itself. Returns base.yaml's text,
/// for a test to edit and write as dir/scenarios/NAME.yaml.
inline std::string FingerprintBase(const TempDir& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir / "scenarios");
  fs::create_directories(dir / "corpora");
  fs::copy(Testdata("corpora/mini"), dir / "corpora/mini", fs::copy_options::recursive);
  fs::create_directories(dir / "rubrics");
  fs::copy(Testdata("rubrics/mini.yaml"), dir / "rubrics/mini.yaml");
  return ReadText(Testdata("fingerprint/base.yaml"));
}

/// What a run of the stagegate binary printed and returned.
struct Ran {
  int exit_code = -1;
  std::string out, err;
};

/// A scenario of tests/testdata/run, its ../../../ paths pointing into the source tree.
inline std::string TestScenarioText(const std::string& name) {
  return ReplaceAll(ReadText(Testdata("run/" + name)), "../../../", SourcePath(""));
}

/// Runs `command` with /bin/sh, its stderr joined to its stdout (in `out`); exit code -1 when it
/// did not exit, 127 when the shell found no such program.
inline Ran RunShell(const std::string& command) {
  Ran ran;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
    ran.out += buffer;
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

/// Python 3's figures for a test: what `script` (a path under the source tree) prints as JSON
/// with `args` (each quoted), or a failed check naming what Python said. `needs` says which
/// Debian package the script's modules come with.
inline nlohmann::json PythonFigures(const std::string& script, const std::vector<std::string>& args,
                                    const std::string& needs) {
  std::string command = "/usr/bin/python3 '" + SourcePath(script) + "'";
  for (const std::string& arg : args)
    command += " '" + arg + "'";
  const Ran ran = RunShell(command);
  INFO("python3 said: " << ran.out << " (" << needs << ")");
  REQUIRE(ran.exit_code == 0);
  return nlohmann::json::parse(ran.out);
}

/// Runs the stagegate binary with `args` (after `--db DIR/store.db`), its output going to files
/// under `dir`; `on_started` runs while it runs (e.g. to send it a signal).
inline Ran RunStagegate(const TempDir& dir, std::vector<std::string> args,
                        const std::function<void(pid_t)>& on_started = nullptr) {
  std::vector<std::string> full = {StagegateBinary(), "--db", dir / "store.db"};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : full)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string out_path = dir / "stdout.txt", err_path = dir / "stderr.txt";
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, StagegateBinary(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  if (on_started) on_started(pid);
  int status = 0;
  waitpid(pid, &status, 0);
  Ran ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  ran.out = ReadText(out_path);
  ran.err = ReadText(err_path);
  return ran;
}

/// Runs the scenario `text` (written to DIR/NAME) into DIR/store.db and DIR/out; fails the test
/// unless it exits 0. Returns the run id.
inline std::string RunScenarioText(const TempDir& dir, const std::string& name,
                                   const std::string& text) {
  WriteText(dir / name, text);
  const Ran ran = RunStagegate(dir, {"--quiet", "run", dir / name, "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  return nlohmann::json::parse(ReadText(dir / "out/run.json"))["run_id"];
}

/// Whether `condition` came to hold within `deadline_s` seconds, asked every 10 ms: how a test
/// waits for something to happen, never for a fixed time.
inline bool WaitUntil(const std::function<bool()>& condition, double deadline_s = 60) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

/// The number `sql` (a SELECT COUNT) gives over the store at `db` while another process writes
/// it, or -1 while it cannot be read: not made yet, its tables not there yet, or locked.
inline int64_t CountInStore(const std::string& db, const std::string& sql) {
  if (!std::filesystem::exists(db)) return -1;
  auto database = store::Database::Open(db, /*create=*/false);
  if (!database.ok()) return -1;
  auto query = store::Statement::Prepare(**database, sql);
  if (!query.ok() || !query->Step()) return -1;
  return query->Int(0);
}

/// An `on_started` for RunStagegate that sends `signal` once `sql` counts at least `at_least` in
/// the store at `db`: a signal at a moment the test names, not after a fixed time. When that
/// has not happened within 60 s, the test fails and the process is killed.
inline std::function<void(pid_t)> SignalWhen(std::string db, std::string sql, int64_t at_least,
                                             int signal) {
  return [db = std::move(db), sql = std::move(sql), at_least, signal](pid_t pid) {
    const bool reached = WaitUntil([&] { return CountInStore(db, sql) >= at_least; });
    if (!reached) FAIL_CHECK("within 60 s, " << sql << " never reached " << at_least);
    kill(pid, reached ? signal : SIGKILL);
  };
}

}  // namespace stagegate::testing

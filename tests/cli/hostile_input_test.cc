// Hostile command lines and input files: each ends in a documented exit code with a message,
// never an abort, a hang or an unbounded read.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cli/command.h"
#include "cli/invoke.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using testing::TempDir;
using testing::Testdata;

TEST_CASE("validate of a device, a FIFO or a symlink loop exits 2 at once", "[cli][hostile]") {
  TempDir dir;
  Invocation zero = Invoke({"validate", "/dev/zero"});
  CHECK(zero.exit_code == 2);
  CHECK(zero.err.find("/dev/zero: not a regular file (a device, FIFO or socket)\n") == 0);

  REQUIRE(mkfifo((dir / "fifo.yaml").c_str(), 0600) == 0);
  Invocation fifo = Invoke({"validate", dir / "fifo.yaml"});  // opening it would block forever
  CHECK(fifo.exit_code == 2);
  CHECK(fifo.err.find("fifo.yaml: not a regular file") != std::string::npos);

  std::filesystem::create_symlink(dir / "b.yaml", dir / "a.yaml");
  std::filesystem::create_symlink(dir / "a.yaml", dir / "b.yaml");
  Invocation loop = Invoke({"validate", dir / "a.yaml"});
  CHECK(loop.exit_code == 2);
  CHECK(loop.err.find("a.yaml: Too many levels of symbolic links\n") != std::string::npos);
}

TEST_CASE("numbers outside their range are usage errors", "[cli][hostile]") {
  TempDir dir;
  const auto profile = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "--db", dir / "store.db", "profile", "--url", "http://127.0.0.1:9/v1", "--model", "m"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Invoke(args);
  };
  Invocation negative = profile({"--total-timeout-ms", "-5"});
  CHECK(negative.exit_code == 2);
  CHECK(negative.err.find("--total-timeout-ms: must be between 1 and 86400000, got -5") !=
        std::string::npos);
  CHECK(profile({"--concurrency", "1,9223372036854775807"}).exit_code == 2);
  CHECK(profile({"--request-rate", "nan"}).exit_code == 2);
  CHECK(profile({"--duration", "inf"}).exit_code == 2);
  CHECK(profile({"--seed", "-1"}).exit_code == 2);

  Invocation seed = Invoke(
      {"--db", dir / "store.db", "run", Testdata("run/fail-every-request.yaml"), "--seed", "-1"});
  CHECK(seed.exit_code == 2);
  CHECK(seed.err.find("--seed: must be between 0 and") != std::string::npos);
}

TEST_CASE("targets that are not http(s) URLs are usage errors", "[cli][hostile]") {
  for (const std::string url : {"file:///etc/passwd", "gopher://127.0.0.1/", "127.0.0.1:8000"}) {
    INFO(url);
    Invocation run = Invoke({"profile", "--url", url, "--model", "m"});
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("--url: ") != std::string::npos);
  }
}

TEST_CASE("global options may come after the command", "[cli][hostile]") {
  TempDir dir;
  // Each names the store it was given (and, reading only, makes none).
  Invocation after = Invoke({"runs", "--db", dir / "after.db", "-q"});
  CHECK(after.exit_code == 0);
  CHECK(after.out.find("no store at " + std::string(dir / "after.db")) != std::string::npos);
  Invocation before = Invoke({"--db", dir / "before.db", "runs"});
  CHECK(before.exit_code == 0);
  CHECK(before.out.find("no store at " + std::string(dir / "before.db")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "before.db"));
}

TEST_CASE("an exception escaping a command exits 3 with one line naming it", "[cli][hostile]") {
  std::ostringstream out, err;
  console::Console console(out, err, false);
  const int code = RunGuarded(
      "stagegate report",
      []() -> ExitCode { throw std::runtime_error("type_error.302: type must be number"); },
      console);
  CHECK(code == 3);
  CHECK(err.str() == "stagegate report: internal error: type_error.302: type must be number\n");
  CHECK(RunGuarded(
            "stagegate runs", [] { return ExitCode::kPending; }, console) == 4);
}

TEST_CASE("an exception escaping a thread exits 3 instead of aborting", "[cli][hostile]") {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    InstallLastResortHandler();
    SetRunningCommand("stagegate run");
    std::thread([] { throw std::logic_error("escaped a worker"); }).join();
    _exit(0);  // not reached
  }
  close(pipe_fds[1]);
  std::string printed;
  char buffer[256];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    printed.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));  // not killed by SIGABRT
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(printed == "stagegate run: internal error: escaped a worker\n");
}

}  // namespace
}  // namespace stagegate::cli

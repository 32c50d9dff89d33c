// `stagegate sim` as a process: it starts listening within a second and stops cleanly on SIGINT
// and SIGTERM.

#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "sim/http_test_client.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Process {
  pid_t pid = -1;
  int out = -1;
};

Process SpawnSim() {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string corpus = testing::SourcePath("corpus/service-desk");
  const char* argv[] = {STAGEGATE_BINARY, "sim",          "--port", "0",
                        "--corpus",       corpus.c_str(), nullptr};
  Process process;
  REQUIRE(posix_spawn(&process.pid, STAGEGATE_BINARY, &actions, nullptr, const_cast<char**>(argv),
                      environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  process.out = pipe_fds[0];
  return process;
}

// Reads the child's output until the "listening on" line, for at most `limit`.
std::string ReadUntilListening(int fd, std::chrono::milliseconds limit) {
  std::string out;
  auto deadline = Clock::now() + limit;
  while (out.find('\n') == std::string::npos && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (poll(&p, 1, std::max(left, 0)) <= 0) break;
    char buffer[512];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

int WaitExit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 500; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -2;  // did not stop within 5 s
}

TEST_CASE("stagegate sim starts within a second and stops cleanly on SIGINT and SIGTERM",
          "[cli][sim]") {
  for (int signal_number : {SIGINT, SIGTERM}) {
    INFO("signal " << signal_number);
    auto started = Clock::now();
    Process sim = SpawnSim();
    std::string line = ReadUntilListening(sim.out, std::chrono::milliseconds(1000));
    double startup_s = std::chrono::duration<double>(Clock::now() - started).count();
    size_t at = line.find("listening on http://127.0.0.1:");
    REQUIRE(at != std::string::npos);
    CHECK(startup_s < 1.0);
    std::string url = line.substr(at + 13, line.find(' ', at + 13) - at - 13);
    CHECK(testing::Request(url + "/health").status == 200);
    kill(sim.pid, signal_number);
    CHECK(WaitExit(sim.pid) == 0);
    std::string rest = ReadUntilListening(sim.out, std::chrono::milliseconds(500));
    CHECK(rest.find("sim stopped") != std::string::npos);
    close(sim.out);
  }
}

}  // namespace
}  // namespace stagegate::cli

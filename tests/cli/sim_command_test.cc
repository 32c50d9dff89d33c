// `stagegate sim` as a process: it starts listening within a second, stops cleanly on SIGINT and
// SIGTERM, and finds its default corpus from anywhere or says how to give one.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/http_test_client.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Process {
  pid_t pid = -1;
  int out = -1;
};

// Starts `binary sim --port 0 extra...` in `dir` ("": this process's), its stdout on a pipe and
// its stderr in `err_path` when given.
Process SpawnSim(const std::vector<std::string>& extra,
                 const std::string& binary = testing::StagegateBinary(),
                 const std::string& dir = "", const std::string& err_path = "") {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  if (!err_path.empty())
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::vector<std::string> args = {binary, "sim", "--port", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  Process process;
  REQUIRE(posix_spawn(&process.pid, binary.c_str(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  process.out = pipe_fds[0];
  return process;
}

Process SpawnSim() {
  return SpawnSim({"--corpus", testing::SourcePath("corpus/service-desk")});
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

// The corpus a started sim names on its "listening on" line, after stopping it; or what went wrong.
std::string ServedCorpus(const std::string& binary, const std::string& dir) {
  Process sim = SpawnSim({}, binary, dir);
  std::string line = ReadUntilListening(sim.out, std::chrono::milliseconds(3000));
  kill(sim.pid, SIGINT);
  const int exit_code = WaitExit(sim.pid);
  close(sim.out);
  const size_t at = line.find(", corpus ");
  if (exit_code != 0 || at == std::string::npos)
    return "exit " + std::to_string(exit_code) + ": " + line;
  return line.substr(at + 9, line.find(", tools at ") - at - 9);
}

TEST_CASE("stagegate sim finds the default corpus outside the checkout, or says how to give one",
          "[cli][sim]") {
  // An executable away from any checkout, run from a folder that holds no corpus.
  namespace fs = std::filesystem;
  testing::TempDir temp;
  const std::string root = fs::canonical(temp.path()).string();
  fs::create_directories(root + "/bin");
  fs::create_directories(root + "/elsewhere");
  const std::string binary = root + "/bin/stagegate";
  fs::copy_file(testing::StagegateBinary(), binary);
  fs::permissions(binary, fs::perms::owner_all);

  Process missing = SpawnSim({}, binary, root + "/elsewhere", root + "/stderr.txt");
  CHECK(WaitExit(missing.pid) == 2);
  close(missing.out);
  CHECK(testing::ReadText(root + "/stderr.txt") ==
        "stagegate sim: no corpus found at " + root + "/elsewhere/corpus/service-desk or " + root +
            "/corpus/service-desk: pass --corpus DIR (the folder with corpus.yaml)\n");

  // Beside the executable: <exe dir>/../corpus/service-desk, as build/stagegate in a checkout.
  fs::create_directory_symlink(testing::SourcePath("corpus"), root + "/corpus");
  CHECK(ServedCorpus(binary, root + "/elsewhere") == root + "/corpus/service-desk");

  // The current folder comes first.
  fs::create_directories(root + "/elsewhere/corpus");
  fs::create_directory_symlink(testing::SourcePath("corpus/service-desk"),
                               root + "/elsewhere/corpus/service-desk");
  CHECK(ServedCorpus(binary, root + "/elsewhere") == root + "/elsewhere/corpus/service-desk");
}

}  // namespace
}  // namespace stagegate::cli

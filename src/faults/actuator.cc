#include "faults/actuator.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/redact.h"
#include "http/blocking_call.h"

extern char** environ;

namespace stagegate::faults {
namespace {

constexpr size_t kKeptOutput = 4096;

class ProxyActuator : public Actuator {
 public:
  ProxyActuator(FaultProxy& proxy, ProxyFault fault) : proxy_(proxy), fault_(fault) {}
  Status Inject() override {
    proxy_.Set(fault_);
    return Status::Ok();
  }
  Status Restore() override {
    proxy_.Set(ProxyFault{});
    return Status::Ok();
  }
  std::string Describe() const override {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) on " " + std::to_string(...).
    std::string text = "proxy ";
    text += ModeName(fault_.mode);
    const auto add = [&text](int64_t value, const char* unit) {
      text += ' ';
      text += std::to_string(value);
      text += unit;
    };
    if (fault_.mode == ProxyFault::Mode::kDelay) add(fault_.delay_ms, " ms");
    if (fault_.mode == ProxyFault::Mode::kStatus) add(fault_.status, "");
    if (fault_.mode == ProxyFault::Mode::kTrickle) add(fault_.bytes_per_s, " B/s");
    return text;
  }

 private:
  FaultProxy& proxy_;
  ProxyFault fault_;
};

class CommandActuator : public Actuator {
 public:
  CommandActuator(const manifest::Actuator& actuator, std::string probe,
                  std::chrono::milliseconds timeout)
      : inject_(actuator.inject_command),
        restore_(actuator.restore_command),
        probe_(std::move(probe)),
        timeout_(timeout) {}
  Status Inject() override { return Run(inject_, "inject"); }
  Status Restore() override { return Run(restore_, "restore"); }
  std::string Describe() const override { return "command"; }

 private:
  Status Run(const std::string& command, const std::string& action) {
    Result<CommandResult> result = RunShellCommand(
        command, {"STAGEGATE_PROBE=" + probe_, "STAGEGATE_ACTION=" + action}, timeout_);
    if (!result.ok()) return result.status();
    if (result->exit_code == 0) return Status::Ok();
    std::string why = result->timed_out ? "ran past " + std::to_string(timeout_.count()) + " ms"
                      : result->exit_code < 0
                          ? "was killed by a signal"
                          : "exited with status " + std::to_string(result->exit_code);
    std::string output = result->output;
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r'))
      output.pop_back();
    if (!output.empty()) why += ": " + output;
    return Status::IoError("the " + action + " command " + why);
  }

  std::string inject_, restore_, probe_;
  std::chrono::milliseconds timeout_;
};

class HttpActuator : public Actuator {
 public:
  HttpActuator(const manifest::Actuator& actuator, std::chrono::milliseconds timeout)
      : inject_(actuator.inject_http), restore_(actuator.restore_http), timeout_(timeout) {}
  Status Inject() override { return Send(inject_, "inject"); }
  Status Restore() override { return Send(restore_, "restore"); }
  // Stored with the probe's findings: the URL without its credentials.
  std::string Describe() const override {
    return "http " + inject_.method + " " + UrlWithoutUserinfo(inject_.url);
  }

 private:
  Status Send(const manifest::HttpCall& call, const std::string& action) const {
    http::CallRequest request{
        .method = call.method,
        .url = call.url,
        .headers = call.body.is_null() ? std::vector<std::string>{}
                                       : std::vector<std::string>{"Content-Type: application/json"},
        .body = call.body.is_null() ? "" : call.body.dump(),
        .timeout_ms = timeout_.count(),
        .max_body = kKeptOutput};
    Result<http::CallReply> reply = http::Call(request);
    // The message reaches the probe's findings: no URL credentials, nor an echo of them.
    const std::string what =
        "the " + action + " request (" + call.method + " " + UrlWithoutUserinfo(call.url) + ")";
    Redactor redactor;
    redactor.AddAll(UrlSecrets(call.url));
    if (!reply.ok()) return Status::IoError(what + " failed: " + reply.status().message());
    if (reply->status < 200 || reply->status > 299)
      return Status::IoError(
          what + " was answered " + std::to_string(reply->status) +
          (reply->body.empty() ? "" : ": " + redactor.Apply(reply->body.substr(0, 200))));
    return Status::Ok();
  }

  manifest::HttpCall inject_, restore_;
  std::chrono::milliseconds timeout_;
};

// This process's environment, with `extra` ("NAME=value") added.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    env_strings.emplace_back(*e);
  for (const std::string& variable : extra)
    env_strings.push_back(variable);
  return env_strings;
}

// Starts `command` with /bin/sh -c in a process group of its own, with the default signal mask
// and SIGINT, SIGTERM and SIGPIPE at their defaults, stdin from /dev/null and stdout and stderr to
// `output_fd`. Sets `pid`; returns posix_spawn's error number (0 once started).
int SpawnShell(const std::string& command, const std::vector<std::string>& extra_env, int output_fd,
               pid_t& pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, output_fd, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> env_strings = EnvironmentWith(extra_env);
  std::vector<char*> envp;
  for (std::string& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string shell = "/bin/sh", flag = "-c", text = command;
  char* argv[] = {shell.data(), flag.data(), text.data(), nullptr};

  const int spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return spawned;
}

// Reads what the non-blocking `fd` holds now into `output`, keeping about its last kKeptOutput
// bytes. Sets `open` to false at end of file, or when the read fails.
void Drain(int fd, bool& open, std::string& output) {
  char buffer[4096];
  ssize_t n;
  while (open && (n = read(fd, buffer, sizeof buffer)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) open = false;
      return;
    }
    output.append(buffer, static_cast<size_t>(n));
    if (output.size() > 2 * kKeptOutput) output.erase(0, output.size() - kKeptOutput);
  }
  open = false;  // end of file
}

// Waits for the shell `pid` to exit, reading its output from `fd` meanwhile, or kills its
// process group at `deadline` (result.timed_out). Returns its wait status.
int AwaitShell(pid_t pid, int fd, std::chrono::steady_clock::time_point deadline,
               CommandResult& result) {
  // Until the shell exits, not until its output closes: a command may leave a daemon running
  // that still holds the pipe.
  bool open = true, exited = false;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) exited = true;
    Drain(fd, open, result.output);
    if (exited) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    pollfd poll_fd{.fd = fd, .events = POLLIN, .revents = 0};
    if (open) {
      poll(&poll_fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 20)));
    } else {
      usleep(static_cast<useconds_t>(std::min<int64_t>(left.count(), 20) * 1000));
    }
  }
  return status;
}

}  // namespace

std::unique_ptr<Actuator> MakeProxyActuator(FaultProxy& proxy, const manifest::Actuator& actuator) {
  return std::make_unique<ProxyActuator>(proxy, FaultOf(actuator));
}

std::unique_ptr<Actuator> MakeCommandActuator(const manifest::Actuator& actuator, std::string probe,
                                              std::chrono::milliseconds timeout) {
  return std::make_unique<CommandActuator>(actuator, std::move(probe), timeout);
}

std::unique_ptr<Actuator> MakeHttpActuator(const manifest::Actuator& actuator,
                                           std::chrono::milliseconds timeout) {
  return std::make_unique<HttpActuator>(actuator, timeout);
}

Result<CommandResult> RunShellCommand(const std::string& command,
                                      const std::vector<std::string>& extra_env,
                                      std::chrono::milliseconds timeout) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = 0;
  const int spawned = SpawnShell(command, extra_env, pipe_fds[1], pid);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return Status::IoError(std::string("cannot start /bin/sh: ") + std::strerror(spawned));
  }

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  const int status = AwaitShell(pid, pipe_fds[0], deadline, result);
  close(pipe_fds[0]);
  if (result.output.size() > kKeptOutput)
    result.output.erase(0, result.output.size() - kKeptOutput);
  result.exit_code = !result.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

InjectedFault::~InjectedFault() {
  (void)Restore();
}

Status InjectedFault::Begin() {
  injected_ = true;
  Status injected = actuator_.Inject();
  if (!injected.ok()) {
    Status restored = Restore();
    if (!restored.ok()) return Status::IoError(injected.message() + "; " + restored.message());
  }
  return injected;
}

Status InjectedFault::Restore() {
  if (!injected_) return Status::Ok();
  injected_ = false;
  return actuator_.Restore();
}

}  // namespace stagegate::faults

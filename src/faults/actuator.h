#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "faults/fault_proxy.h"
#include "manifest/scenario.h"

namespace stagegate::faults {

/// What makes a downstream tool unavailable for a tool-outage probe, and brings it back.
class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual Status Inject() = 0;
  virtual Status Restore() = 0;
  /// "proxy refuse", "command", "http POST http://...": for the probe's evidence. Never the
  /// text of a command, which may hold what the user would not want in a report.
  virtual std::string Describe() const = 0;
};

/// Switches `proxy` (which must outlive it) to the actuator's mode on Inject and back to pass on
/// Restore.
std::unique_ptr<Actuator> MakeProxyActuator(FaultProxy& proxy, const manifest::Actuator& actuator);

/// Runs the actuator's inject and restore commands with /bin/sh -c. Each command sees the
/// environment of stagegate plus STAGEGATE_PROBE (the probe's name) and STAGEGATE_ACTION
/// (inject or restore); a command that runs past `timeout` is killed, with its process group.
/// A non-zero exit is a failure whose message ends with the command's last output.
std::unique_ptr<Actuator> MakeCommandActuator(const manifest::Actuator& actuator, std::string probe,
                                              std::chrono::milliseconds timeout);

/// Sends the actuator's inject and restore HTTP requests (a JSON body when one is given); any
/// answer but 2xx, or no answer within `timeout`, is a failure.
std::unique_ptr<Actuator> MakeHttpActuator(const manifest::Actuator& actuator,
                                           std::chrono::milliseconds timeout);

/// The result of one shell command.
struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or the timeout
  bool timed_out = false;
  std::string output;  // stdout and stderr together, the last 4 KiB
};

/// Runs `command` with /bin/sh -c in its own process group, with the default signal mask (the
/// caller may block SIGINT), `extra_env` ("NAME=value") added to this process's environment, and
/// stdin from /dev/null. Fails only when the shell cannot be started.
Result<CommandResult> RunShellCommand(const std::string& command,
                                      const std::vector<std::string>& extra_env,
                                      std::chrono::milliseconds timeout);

/// Holds a fault for as long as it lives: Inject on Begin, Restore on Restore or when destroyed,
/// so that a probe that fails or is interrupted between the two still restores.
class InjectedFault {
 public:
  explicit InjectedFault(Actuator& actuator) : actuator_(actuator) {}
  ~InjectedFault();
  InjectedFault(const InjectedFault&) = delete;
  InjectedFault& operator=(const InjectedFault&) = delete;

  /// Injects. When injecting fails it still restores (a command may have half done its work).
  Status Begin();
  /// Restores once; later calls, and the destructor, do nothing.
  Status Restore();
  bool injected() const { return injected_; }

 private:
  Actuator& actuator_;
  bool injected_ = false;
};

}  // namespace stagegate::faults

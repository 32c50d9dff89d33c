#include "faults/actuator.h"

#include <catch2/catch.hpp>

#include <pthread.h>
#include <signal.h>

#include <filesystem>

#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::faults {
namespace {

using namespace std::chrono_literals;

TEST_CASE("RunShellCommand returns the exit status and the output", "[faults][actuator]") {
  Result<CommandResult> ran = RunShellCommand("echo out; echo err >&2; exit 3", {}, 5s);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == 3);
  CHECK_FALSE(ran->timed_out);
  CHECK(ran->output == "out\nerr\n");
}

TEST_CASE("RunShellCommand adds its variables to the environment", "[faults][actuator]") {
  Result<CommandResult> ran = RunShellCommand("printf '%s/%s' \"$STAGEGATE_PROBE\" \"$HOME\"",
                                              {"STAGEGATE_PROBE=down"}, 5s);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == 0);
  CHECK(ran->output == "down/" + std::string(getenv("HOME")));
}

TEST_CASE("RunShellCommand keeps only the last 4 KiB of a long output", "[faults][actuator]") {
  Result<CommandResult> ran =
      RunShellCommand("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done", {}, 10s);
  REQUIRE(ran.ok());
  CHECK(ran->output.size() == 4096);
  CHECK(ran->output.substr(ran->output.size() - 9) == "line1999\n");
}

TEST_CASE("RunShellCommand kills a command that runs past its timeout", "[faults][actuator]") {
  Result<CommandResult> ran = RunShellCommand("echo started; sleep 30", {}, 300ms);
  REQUIRE(ran.ok());
  CHECK(ran->timed_out);
  CHECK(ran->exit_code == -1);
  CHECK(ran->output == "started\n");
}

TEST_CASE("RunShellCommand returns when the shell exits, even if a daemon keeps its output open",
          "[faults][actuator]") {
  // The background sleep holds the pipe for 20 s: waiting for the end of the output would time
  // out.
  Result<CommandResult> ran = RunShellCommand("sleep 20 & echo started", {}, 5s);
  REQUIRE(ran.ok());
  CHECK_FALSE(ran->timed_out);
  CHECK(ran->exit_code == 0);
  CHECK(ran->output == "started\n");
  (void)RunShellCommand("pkill -f '^sleep 20$'", {}, 5s);
}

TEST_CASE("RunShellCommand gives the command the default signal mask", "[faults][actuator]") {
  // stagegate blocks SIGINT in every thread; a restore command must still be stoppable.
  sigset_t interrupt, previous;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, &previous);
  Result<CommandResult> ran = RunShellCommand("kill -INT $$; echo survived", {}, 5s);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == -1);  // killed by the signal
  CHECK(ran->output.empty());
}

manifest::Actuator Commands(const std::string& inject, const std::string& restore) {
  return manifest::Actuator{.kind = manifest::ActuatorKind::kCommand,
                            .inject_command = inject,
                            .restore_command = restore};
}

TEST_CASE("a command actuator runs its inject and restore commands", "[faults][actuator]") {
  testing::TempDir dir;
  const std::string state = dir / "state";
  std::unique_ptr<Actuator> actuator =
      MakeCommandActuator(Commands("echo \"$STAGEGATE_ACTION $STAGEGATE_PROBE\" > " + state,
                                   "echo \"$STAGEGATE_ACTION $STAGEGATE_PROBE\" >> " + state),
                          "tickets-down", 5s);
  CHECK(actuator->Describe() == "command");
  REQUIRE(actuator->Inject().ok());
  CHECK(testing::ReadText(state) == "inject tickets-down\n");
  REQUIRE(actuator->Restore().ok());
  CHECK(testing::ReadText(state) == "inject tickets-down\nrestore tickets-down\n");
}

TEST_CASE("a failing command names the action, the status and the output", "[faults][actuator]") {
  std::unique_ptr<Actuator> actuator = MakeCommandActuator(
      Commands("echo 'no such unit: tickets' >&2; exit 5", "sleep 5"), "p", 200ms);
  const Status injected = actuator->Inject();
  REQUIRE_FALSE(injected.ok());
  CHECK(injected.message() == "the inject command exited with status 5: no such unit: tickets");
  const Status restored = actuator->Restore();
  REQUIRE_FALSE(restored.ok());
  CHECK(restored.message() == "the restore command ran past 200 ms");
}

// The sim's tool service stands in for an admin API: POST /tools/lookup_ticket answers 200, an
// unknown path 404.
TEST_CASE("an HTTP actuator sends its calls and fails on any answer but 2xx",
          "[faults][actuator]") {
  Result<std::unique_ptr<sim::SimServer>> sim = sim::SimServer::Start({});
  REQUIRE(sim.ok());
  const std::string base = (*sim)->tool_service_url();
  manifest::Actuator a{.kind = manifest::ActuatorKind::kHttp};
  a.inject_http = {.method = "POST",
                   .url = base + "/tools/lookup_ticket",
                   .body = {{"arguments", {{"ticket_id", "INC-204518"}}}, {"persona", "employee"}}};
  a.restore_http = {.method = "POST", .url = base + "/no-such-endpoint", .body = nullptr};
  std::unique_ptr<Actuator> actuator = MakeHttpActuator(a, 2s);
  CHECK(actuator->Describe() == "http POST " + base + "/tools/lookup_ticket");
  const Status injected = actuator->Inject();
  INFO(injected.message());
  CHECK(injected.ok());
  const Status restored = actuator->Restore();
  REQUIRE_FALSE(restored.ok());
  CHECK(restored.message().rfind(
            "the restore request (POST " + base + "/no-such-endpoint) was answered 404", 0) == 0);

  // A URL's credentials are sent, never described.
  manifest::Actuator with_password = a;
  with_password.inject_http.url = "http://ops:pw-Zq81@" + base.substr(7) + "/tools/lookup_ticket";
  CHECK(MakeHttpActuator(with_password, 2s)->Describe() ==
        "http POST " + base + "/tools/lookup_ticket");

  (*sim)->Stop();
  const Status unreachable = actuator->Inject();
  REQUIRE_FALSE(unreachable.ok());
  CHECK(unreachable.message().find("the inject request (POST " + base) == 0);
  CHECK(unreachable.message().find(") failed: ") != std::string::npos);
}

TEST_CASE("a proxy actuator switches the proxy to its mode and back to pass",
          "[faults][actuator]") {
  Result<std::unique_ptr<sim::SimServer>> sim = sim::SimServer::Start({});
  REQUIRE(sim.ok());
  Result<std::unique_ptr<FaultProxy>> proxy = FaultProxy::Start("127.0.0.1", (*sim)->tool_port());
  REQUIRE(proxy.ok());
  manifest::Actuator a{
      .kind = manifest::ActuatorKind::kProxy, .mode = manifest::ProxyMode::kStatus, .status = 502};
  std::unique_ptr<Actuator> actuator = MakeProxyActuator(**proxy, a);
  CHECK(actuator->Describe() == "proxy status 502");
  REQUIRE(actuator->Inject().ok());
  CHECK((*proxy)->fault().mode == ProxyFault::Mode::kStatus);
  CHECK((*proxy)->fault().status == 502);
  REQUIRE(actuator->Restore().ok());
  CHECK((*proxy)->fault().mode == ProxyFault::Mode::kPass);
}

// Counts what it is asked to do; fails when told to.
class CountingActuator : public Actuator {
 public:
  Status Inject() override {
    ++injects;
    return fail_inject ? Status::IoError("inject failed") : Status::Ok();
  }
  Status Restore() override {
    ++restores;
    return Status::Ok();
  }
  std::string Describe() const override { return "counting"; }
  int injects = 0, restores = 0;
  bool fail_inject = false;
};

TEST_CASE("InjectedFault restores exactly once, however the probe ends", "[faults][actuator]") {
  CountingActuator actuator;
  SECTION("restored by hand") {
    {
      InjectedFault fault(actuator);
      REQUIRE(fault.Begin().ok());
      CHECK(fault.injected());
      REQUIRE(fault.Restore().ok());
      REQUIRE(fault.Restore().ok());
    }
    CHECK(actuator.restores == 1);
  }
  SECTION("left early: the destructor restores") {
    {
      InjectedFault fault(actuator);
      REQUIRE(fault.Begin().ok());
    }
    CHECK(actuator.injects == 1);
    CHECK(actuator.restores == 1);
  }
  SECTION("never begun: nothing to restore") {
    { InjectedFault fault(actuator); }
    CHECK(actuator.restores == 0);
  }
  SECTION("a failed inject is restored at once") {
    actuator.fail_inject = true;
    {
      InjectedFault fault(actuator);
      CHECK(fault.Begin().message() == "inject failed");
      CHECK_FALSE(fault.injected());
    }
    CHECK(actuator.restores == 1);
  }
}

}  // namespace
}  // namespace stagegate::faults

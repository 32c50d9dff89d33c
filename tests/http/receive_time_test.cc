// The process's recv() keeps the kernel's receive stamp of each read, for the socket it read.

#include "http/receive_time.h"

#include "base/clock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace stagegate::http {
namespace {

/// A connected pair of loopback TCP sockets.
struct TcpPair {
  TcpPair() {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(listen(listener, 1) == 0);
    socklen_t length = sizeof address;
    REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    client = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    server = accept(listener, nullptr, nullptr);
    REQUIRE(server >= 0);
    close(listener);
  }
  ~TcpPair() {
    close(client);
    close(server);
  }
  int client = -1;
  int server = -1;
};

void Send(int socket, const char* text) {
  const auto length = static_cast<ssize_t>(std::strlen(text));
  REQUIRE(send(socket, text, std::strlen(text), MSG_NOSIGNAL) == length);
}

TEST_CASE("recv returns what arrived and keeps when the kernel received it", "[http]") {
  TcpPair pair;
  const ReceiveStampingOn stamping;
  REQUIRE(stamping.on());
  REQUIRE(EnableReceiveTimestamps(pair.client));
  Send(pair.server, "first");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));

  char buffer[64];
  REQUIRE(recv(pair.client, buffer, sizeof buffer, 0) == 5);
  CHECK(std::string(buffer, 5) == "first");
  const std::optional<int64_t> stamp = LastReceiveRealtimeNs(pair.client);
  REQUIRE(stamp);
  // Read 30 ms after it arrived: the stamp is the arrival, not the read.
  const int64_t steady_now = SteadyClock::Get().NowNs();
  const int64_t age = steady_now - RealtimeToSteadyNs(*stamp, steady_now);
  CHECK(age >= 30'000'000);
  CHECK(age < 2'000'000'000);
  // It is this socket's, and only until it is forgotten.
  CHECK_FALSE(LastReceiveRealtimeNs(pair.server));
  ForgetLastReceive();
  CHECK_FALSE(LastReceiveRealtimeNs(pair.client));
}

TEST_CASE("a read without a stamp leaves none, and errors pass through unchanged", "[http]") {
  TcpPair pair;  // stamping never asked for
  Send(pair.client, "plain");
  char buffer[64];
  REQUIRE(recv(pair.server, buffer, sizeof buffer, 0) == 5);
  CHECK_FALSE(LastReceiveRealtimeNs(pair.server));

  // Nothing to read: -1 with EAGAIN, as glibc's recv gives.
  errno = 0;
  CHECK(recv(pair.server, buffer, sizeof buffer, MSG_DONTWAIT) == -1);
  CHECK(errno == EAGAIN);
  CHECK(recv(-1, buffer, sizeof buffer, 0) == -1);
  CHECK(errno == EBADF);
}

TEST_CASE("a later read's stamp replaces an earlier one, and a peek keeps none", "[http]") {
  TcpPair pair;
  const ReceiveStampingOn stamping;
  REQUIRE(stamping.on());
  REQUIRE(EnableReceiveTimestamps(pair.client));
  char buffer[64];
  Send(pair.server, "a");
  REQUIRE(recv(pair.client, buffer, sizeof buffer, 0) == 1);
  const std::optional<int64_t> first = LastReceiveRealtimeNs(pair.client);
  REQUIRE(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Send(pair.server, "bc");
  REQUIRE(recv(pair.client, buffer, sizeof buffer, MSG_PEEK) == 2);
  CHECK_FALSE(LastReceiveRealtimeNs(pair.client));
  REQUIRE(recv(pair.client, buffer, sizeof buffer, 0) == 2);
  const std::optional<int64_t> second = LastReceiveRealtimeNs(pair.client);
  REQUIRE(second);
  CHECK(*second - *first >= 10'000'000);
}

TEST_CASE("a wall-clock stamp converts to the steady clock through their offset", "[http]") {
  timespec wall{};
  const int64_t steady_before = SteadyClock::Get().NowNs();
  clock_gettime(CLOCK_REALTIME, &wall);
  const int64_t steady_after = SteadyClock::Get().NowNs();
  const int64_t converted =
      RealtimeToSteadyNs(int64_t{wall.tv_sec} * 1'000'000'000 + wall.tv_nsec, steady_after);
  // Within the bracket of the two steady readings, give or take the offset's own bracket.
  CHECK(converted >= steady_before - 50'000);
  CHECK(converted <= steady_after + 50'000);
  // A stamp 5 ms older converts to 5 ms earlier.
  const int64_t older = RealtimeToSteadyNs(
      int64_t{wall.tv_sec} * 1'000'000'000 + wall.tv_nsec - 5'000'000, steady_after);
  CHECK(converted - older == 5'000'000);
}

}  // namespace
}  // namespace stagegate::http

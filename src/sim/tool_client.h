#pragma once

#include <asio.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace stagegate::sim {

/// The outcome of one call to the tool service.
struct ToolResponse {
  bool ok = false;    // a complete HTTP response arrived in time
  int status = 0;     // its status, when ok
  std::string body;   // its body, when ok
  std::string error;  // why not, when !ok: "connection refused", "timed out after 2000 ms", ...
};

/// POSTs `body` (JSON) to `url` (http://host:port/path, loopback) and calls `done` once, on the
/// io_context's thread, with what happened within `timeout`. A refused or reset connection, a
/// malformed response and a timeout are all outcomes, never exceptions.
void PostJson(asio::io_context& io, const std::string& url, std::string body,
              std::chrono::milliseconds timeout, std::function<void(ToolResponse)> done);

}  // namespace stagegate::sim

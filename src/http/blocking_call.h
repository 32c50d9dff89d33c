#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace stagegate::http {

/// One blocking HTTP request, for the few a command sends outside a load phase (an actuator's
/// call, `init`'s probe of an endpoint).
struct CallRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent when not empty
  int64_t timeout_ms = 10'000;
  size_t max_body = 1 << 20;  // bytes of the answer kept; the rest is read and dropped
};

struct CallReply {
  long status = 0;
  std::string content_type;
  std::string body;  // at most max_body bytes
};

/// Sends `request` and waits for the whole answer. A transport failure (refused, timed out, bad
/// URL) is an IoError with curl's message; any HTTP status is a reply.
Result<CallReply> Call(const CallRequest& request);

}  // namespace stagegate::http

#pragma once

#include <asio.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/ground_truth.h"
#include "sim/http_server.h"
#include "sim/metrics.h"

namespace stagegate::sim {

/// A tool call the response carries: for the client to run (finish_reason tool_calls), or as
/// evidence of one the application ran itself before answering.
struct ToolCallOut {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text
};

/// Everything decided about a response before the model generates it.
struct Reply {
  bool chat = true;  // chat completions, else completions
  bool stream = true;
  bool include_usage = false;
  bool timestamps = false;  // ground truth: each chunk carries the server's send time
  std::string model;
  std::string id;
  int64_t prompt_tokens = 1;
  std::optional<int64_t> cached_tokens;  // from the prefix cache, when it is on
  std::vector<std::string> tokens;       // the generated text, one streamed token each
  std::string finish_reason = "stop";    // stop, length or tool_calls
  std::optional<ToolCallOut> tool_call;
  bool tool_call_for_client = false;  // the tool call is the whole answer
  std::string fault;                  // a misbehaviour to act out (docs/sim.md)
  std::string server_timing;          // components measured before generation
  /// With `timestamps` and a traceparent: where each content chunk's send time is logged.
  GroundTruthLog* truth = nullptr;
  std::string trace_id;
};

/// Generates `reply` through the engine and writes it to `responder` as OpenAI's wire format:
/// SSE chunks (role first, content deltas, finish, optional usage, [DONE]) or one JSON body.
/// Acts out the reply's misbehaviour. Everything runs on the io_context's thread.
void Generate(asio::io_context& io, BatchEngine& engine, Metrics& metrics, Reply reply,
              std::shared_ptr<HttpResponder> responder, double retry_after_s);

/// An OpenAI-style error body: {"error": {"message", "type", "code"}}.
std::string ErrorBody(int status, const std::string& message);

}  // namespace stagegate::sim

#include "sim/generation.h"

#include <chrono>
#include <ctime>
#include <functional>
#include <utility>

#include "base/strings.h"

namespace stagegate::sim {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string Timing(const std::string& name, double ms) {
  return name + ";dur=" + FormatNumber(ms, 3);
}

// The state of one response while the engine generates it.
struct Stream : std::enable_shared_from_this<Stream> {
  asio::io_context& io;
  BatchEngine& engine;
  Metrics& metrics;
  Reply reply;
  std::shared_ptr<HttpResponder> responder;
  double retry_after_s;
  Clock::time_point submitted = Clock::now();
  Clock::time_point admitted;
  Clock::time_point first_token;
  std::string text;            // for a non-streamed reply
  std::string trickle_buffer;  // bytes waiting to be trickled out
  asio::steady_timer trickle_timer{io};
  std::string content_prefix;  // see EmitContent
  std::string content_suffix;
  bool started = false;
  bool stopped = false;  // the fault ended this stream early; ignore further events
  uint64_t sequence = 0;
  int64_t created = std::time(nullptr);

  Stream(asio::io_context& io_in, BatchEngine& engine_in, Metrics& metrics_in, Reply reply_in,
         std::shared_ptr<HttpResponder> responder_in, double retry)
      : io(io_in),
        engine(engine_in),
        metrics(metrics_in),
        reply(std::move(reply_in)),
        responder(std::move(responder_in)),
        retry_after_s(retry) {}

  json Chunk(json choice) const {
    json chunk = {{"id", reply.id},
                  {"object", reply.chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", created},
                  {"model", reply.model},
                  {"choices", choice.is_null() ? json::array() : json::array({choice})}};
    if (reply.timestamps) chunk["sim_sent_ns"] = SteadyNanos();
    return chunk;
  }

  json ContentChoice(const std::string& piece, const json& finish) const {
    if (reply.chat)
      return {{"index", 0},
              {"delta", {{"content", piece}}},
              {"logprobs", nullptr},
              {"finish_reason", finish}};
    return {{"index", 0}, {"text", piece}, {"logprobs", nullptr}, {"finish_reason", finish}};
  }

  json Usage() const {
    int64_t completion = static_cast<int64_t>(reply.tokens.size());
    json usage = {{"prompt_tokens", reply.prompt_tokens},
                  {"completion_tokens", completion},
                  {"total_tokens", reply.prompt_tokens + completion}};
    // OpenAI's field, as vLLM fills it with prefix caching on.
    if (reply.cached_tokens)
      usage["prompt_tokens_details"] = {{"cached_tokens", *reply.cached_tokens}};
    return usage;
  }

  void Emit(const std::string& event, std::function<void(int64_t)> on_written = nullptr) {
    if (reply.fault == "trickle") {
      trickle_buffer += event;
      if (trickle_buffer.size() == event.size()) Trickle();
      return;
    }
    responder->Write(event, std::move(on_written));
  }

  // Slow trickle: a few bytes at a time, so the stream is valid but takes far longer than the
  // model did.
  void Trickle() {
    if (trickle_buffer.empty() || responder->closed()) return;
    size_t n = std::min<size_t>(32, trickle_buffer.size());
    responder->Write(trickle_buffer.substr(0, n));
    trickle_buffer.erase(0, n);
    trickle_timer.expires_after(std::chrono::milliseconds(10));
    trickle_timer.async_wait([self = shared_from_this()](asio::error_code error) {
      if (error) return;
      self->Trickle();
      if (self->trickle_buffer.empty() && self->stopped) self->responder->EndStream();
    });
  }

  void EmitJson(const json& chunk) {
    Emit("data: " + chunk.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n");
  }

  void Start() {
    auto self = shared_from_this();
    SequenceEvents events;
    events.on_admitted = [self] { self->OnAdmitted(); };
    events.on_token = [self](int64_t index) { self->OnToken(index); };
    events.on_done = [self] { self->OnDone(); };
    events.on_rejected = [self](int64_t status) { self->OnRejected(status); };
    sequence = engine.Submit(reply.prompt_tokens, static_cast<int64_t>(reply.tokens.size()),
                             std::move(events), reply.cached_tokens.value_or(0));
  }

  void OnRejected(int64_t status) {
    HeaderList headers = {{"Content-Type", "application/json"}};
    if (status == 429 || status == 503)
      headers.push_back({"Retry-After", FormatNumber(retry_after_s, 0)});
    std::string message = status == 429 ? "the server is overloaded: the request queue is full"
                                        : "the request waited too long in the queue";
    responder->Send(static_cast<int>(status), headers,
                    ErrorBody(static_cast<int>(status), message));
    metrics.CountHttpRequest(reply.chat ? "/v1/chat/completions" : "/v1/completions", status);
  }

  void OnAdmitted() {
    admitted = Clock::now();
    std::string timing = reply.server_timing;
    timing += (timing.empty() ? "" : ", ") + Timing("queue", MillisSince(submitted));
    if (!reply.stream) {
      reply.server_timing = timing;
      return;
    }
    started = true;
    responder->StartStream(200, {{"Content-Type", "text/event-stream"},
                                 {"Cache-Control", "no-cache"},
                                 {"Server-Timing", timing}});
    if (reply.chat) {
      json delta = {{"role", "assistant"}, {"content", ""}};
      if (reply.tool_call) {
        json call = {
            {"index", 0},
            {"id", reply.tool_call->id},
            {"type", "function"},
            {"function",
             {{"name", reply.tool_call->name},
              {"arguments", reply.tool_call_for_client ? "" : reply.tool_call->arguments}}}};
        delta = {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({call})}};
      }
      EmitJson(Chunk(
          {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}}));
    }
  }

  void OnToken(int64_t index) {
    if (stopped || responder->closed()) {
      if (responder->closed() && !stopped) Cancel();
      return;
    }
    if (index == 0) {
      first_token = Clock::now();
      metrics.ObserveTimeToFirstToken(
          std::chrono::duration<double>(first_token - submitted).count());
    }
    const std::string& piece = reply.tokens[static_cast<size_t>(index)];
    if (!reply.stream) {
      text += piece;
      return;
    }
    const int64_t half = static_cast<int64_t>(reply.tokens.size()) / 2;
    if (reply.fault == "reset" && index == half) {
      stopped = true;
      responder->Abort();
      return Cancel();
    }
    if (reply.fault == "stall" && index == half) {
      stopped = true;  // keep the connection open and send nothing more
      return;
    }
    if (reply.fault == "error-after-200" && index == std::min<int64_t>(3, half)) {
      Emit("data: " +
           json({{"error",
                  {{"message", "internal error while generating"},
                   {"type", "server_error"},
                   {"code", 500}}}})
               .dump() +
           "\n\n");
      stopped = true;
      responder->EndStream();
      return Cancel();
    }
    if (reply.fault == "malformed" && index == std::min<int64_t>(2, half))
      Emit("data: {\"id\":\"" + reply.id + "\",\"choices\":[{\"delta\":{\"content\":\"oops\"\n\n");
    if (reply.fault == "invalid-utf8" && index == std::min<int64_t>(2, half)) {
      // Built by hand: a JSON library would refuse to write these bytes.
      Emit("data: {\"id\":\"" + reply.id +
           "\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{"
           "\"content\":\"\xff\xfe\"},\"finish_reason\":null}]}\n\n");
    }
    if (reply.tool_call && reply.tool_call_for_client) {
      json call = {{"index", 0}, {"function", {{"arguments", piece}}}};
      EmitJson(Chunk({{"index", 0},
                      {"delta", {{"tool_calls", json::array({call})}}},
                      {"logprobs", nullptr},
                      {"finish_reason", nullptr}}));
      return;
    }
    EmitContent(piece);
  }

  // The hot path: a content chunk is the same JSON every time but for the token (and the send
  // time), so it is assembled from a cached prefix and suffix instead of built as a JSON tree.
  // The text is byte for byte what EmitJson(Chunk(ContentChoice(piece, nullptr))) writes.
  void EmitContent(const std::string& piece) {
    if (content_prefix.empty()) {
      json sample = Chunk(ContentChoice("\x01", nullptr));
      sample.erase("sim_sent_ns");
      std::string text = sample.dump();
      size_t at = text.find("\"\\u0001\"");
      content_prefix = "data: " + text.substr(0, at);
      content_suffix = text.substr(at + 8);
      content_suffix.pop_back();  // the closing brace; the send time may go before it
    }
    std::string event = content_prefix;
    event += json(piece).dump(-1, ' ', false, json::error_handler_t::replace);
    event += content_suffix;
    std::function<void(int64_t)> on_written;
    if (reply.timestamps) {
      event += ",\"sim_sent_ns\":" + std::to_string(SteadyNanos());
      // The log keeps when the chunk reached the socket: the truth a client is measured against.
      if (reply.truth != nullptr && !reply.trace_id.empty())
        on_written = [truth = reply.truth, trace_id = reply.trace_id](int64_t written_ns) {
          truth->RecordChunk(trace_id, written_ns);
        };
    }
    event += "}\n\n";
    Emit(event, std::move(on_written));
  }

  void OnDone() {
    if (stopped) return;
    const double decode_ms = first_token.time_since_epoch().count() ? MillisSince(first_token) : 0;
    const double prefill_ms =
        std::chrono::duration<double, std::milli>(first_token - admitted).count();
    metrics.CountFinished(reply.finish_reason);
    metrics.ObserveE2eLatency(std::chrono::duration<double>(Clock::now() - submitted).count());
    const char* path = reply.chat ? "/v1/chat/completions" : "/v1/completions";
    metrics.CountHttpRequest(path, reply.fault == "500" ? 500 : 200);
    if (!reply.stream) return SendWhole(prefill_ms, decode_ms);
    if (reply.chat) {
      EmitJson(Chunk({{"index", 0},
                      {"delta", json::object()},
                      {"logprobs", nullptr},
                      {"finish_reason", reply.finish_reason}}));
    } else {
      EmitJson(Chunk(ContentChoice("", reply.finish_reason)));
    }
    if (reply.include_usage) {
      json usage = Chunk(nullptr);
      usage["usage"] = Usage();
      EmitJson(usage);
    }
    Emit(": server-timing " + Timing("prefill", prefill_ms) + ", " + Timing("decode", decode_ms) +
         "\n\n");
    if (reply.fault != "no-done") Emit("data: [DONE]\n\n");
    stopped = true;
    if (reply.fault == "no-done") return responder->CloseMidStream();
    if (reply.fault != "trickle" || trickle_buffer.empty()) responder->EndStream();
  }

  void SendWhole(double prefill_ms, double decode_ms) {
    json message = {{"role", "assistant"}, {"content", text}};
    if (reply.tool_call) {
      json call = {{"id", reply.tool_call->id},
                   {"type", "function"},
                   {"function",
                    {{"name", reply.tool_call->name}, {"arguments", reply.tool_call->arguments}}}};
      message["tool_calls"] = json::array({call});
      if (reply.tool_call_for_client) message["content"] = nullptr;
    }
    json choice = reply.chat ? json{{"index", 0},
                                    {"message", message},
                                    {"logprobs", nullptr},
                                    {"finish_reason", reply.finish_reason}}
                             : json{{"index", 0},
                                    {"text", text},
                                    {"logprobs", nullptr},
                                    {"finish_reason", reply.finish_reason}};
    json body = {{"id", reply.id},
                 {"object", reply.chat ? "chat.completion" : "text_completion"},
                 {"created", created},
                 {"model", reply.model},
                 {"choices", json::array({choice})},
                 {"usage", Usage()}};
    std::string timing = reply.server_timing + ", " + Timing("prefill", prefill_ms) + ", " +
                         Timing("decode", decode_ms);
    responder->Send(200, {{"Content-Type", "application/json"}, {"Server-Timing", timing}},
                    body.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  // Drops the sequence from the engine. The engine holds the only references to this stream, in
  // the sequence's events: nothing of `this` may be touched once engine.Cancel returns (the engine
  // keeps the events alive until the current event returns, and not a moment longer).
  void Cancel() {
    const uint64_t id = std::exchange(sequence, 0);
    if (id != 0) engine.Cancel(id);
  }
};

}  // namespace

std::string ErrorBody(int status, const std::string& message) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 429 ? "rate_limit_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  return json({{"error", {{"message", message}, {"type", type}, {"code", status}}}}).dump();
}

void Generate(asio::io_context& io, BatchEngine& engine, Metrics& metrics, Reply reply,
              std::shared_ptr<HttpResponder> responder, double retry_after_s) {
  auto stream = std::make_shared<Stream>(io, engine, metrics, std::move(reply),
                                         std::move(responder), retry_after_s);
  stream->Start();
}

}  // namespace stagegate::sim

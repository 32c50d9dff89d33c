#include "http/scripted_transport.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/http_header.h"

namespace stagegate::http {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

std::string SseEvent(const nlohmann::json& data) {
  return "data: " + data.dump() + "\n\n";
}

nlohmann::json ChunkWith(const nlohmann::json& delta) {
  return {{"id", "chatcmpl-scripted"},
          {"object", "chat.completion.chunk"},
          {"model", "scripted"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}}}}};
}

}  // namespace

std::string HeaderOf(const ScriptedRequest& request, std::string_view name) {
  for (const std::string& line : request.headers) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos ||
        !SameHeaderName(std::string_view(line).substr(0, colon), name))
      continue;
    const size_t value = line.find_first_not_of(' ', colon + 1);
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

ScriptedResponse ScriptedResponse::Failure(CURLcode code, int64_t at_ns) {
  ScriptedResponse response;
  response.no_response = true;
  response.end = code;
  response.end_at_ns = at_ns;
  return response;
}

ScriptedResponse ScriptedResponse::StreamedAnswer(const std::vector<std::string>& tokens,
                                                  int64_t ttft_ns, int64_t itl_ns,
                                                  int64_t prompt_tokens) {
  ScriptedResponse response;
  response.headers = {"Content-Type: text/event-stream"};
  response.headers_at_ns = ttft_ns;
  for (size_t i = 0; i < tokens.size(); ++i) {
    nlohmann::json delta = {{"content", tokens[i]}};
    if (i == 0) delta["role"] = "assistant";
    response.body.push_back(
        {ttft_ns + static_cast<int64_t>(i) * itl_ns, SseEvent(ChunkWith(delta))});
  }
  const int64_t last = tokens.empty() ? ttft_ns : response.body.back().at_ns;
  nlohmann::json usage = ChunkWith(nlohmann::json::object());
  usage["choices"] = nlohmann::json::array();
  usage["usage"] = {{"prompt_tokens", prompt_tokens},
                    {"completion_tokens", static_cast<int64_t>(tokens.size())},
                    {"total_tokens", prompt_tokens + static_cast<int64_t>(tokens.size())}};
  nlohmann::json stop = ChunkWith(nlohmann::json::object());
  stop["choices"][0]["finish_reason"] = "stop";
  response.body.push_back({last, SseEvent(stop) + SseEvent(usage) + "data: [DONE]\n\n"});
  return response;
}

ScriptedResponse ScriptedResponse::WholeAnswer(const std::string& content, int64_t at_ns) {
  ScriptedResponse response;
  response.headers = {"Content-Type: application/json"};
  response.headers_at_ns = at_ns;
  const nlohmann::json body = {
      {"id", "chatcmpl-scripted"},
      {"object", "chat.completion"},
      {"model", "scripted"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", content}}},
         {"finish_reason", "stop"}}}},
      {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 1}, {"total_tokens", 11}}}};
  response.body.push_back({at_ns, body.dump()});
  return response;
}

ScriptedResponse ScriptedResponse::Error(long status, int64_t at_ns,
                                         std::vector<std::string> headers) {
  ScriptedResponse response;
  response.status = status;
  response.headers = std::move(headers);
  response.headers.push_back("Content-Type: application/json");
  response.headers_at_ns = at_ns;
  response.body.push_back(
      {at_ns,
       nlohmann::json{{"error", {{"message", "scripted " + std::to_string(status)}}}}.dump()});
  return response;
}

ScriptedTransport::ScriptedTransport(FakeClock& clock, Script script)
    : clock_(clock), script_(std::move(script)) {}

TransportFactory ScriptedTransport::Factory(FakeClock& clock, Script script) {
  return [&clock, script = std::move(script)]() -> Result<std::unique_ptr<Transport>> {
    return std::unique_ptr<Transport>(new ScriptedTransport(clock, script));
  };
}

bool ScriptedTransport::Add(Transfer* transfer) {
  const Transfer::Request asked = transfer->request();
  Playing playing;
  playing.sent_ns = clock_.NowNs();
  playing.order = added_++;
  if (asked.total_timeout_ms > 0)
    playing.timeout_at_ns = playing.sent_ns + asked.total_timeout_ms * 1'000'000;
  transfer->OnSent();
  playing.response =
      script_(ScriptedRequest{.url = std::string(asked.url),
                              .body = std::string(asked.body),
                              .sent_ns = playing.sent_ns,
                              .headers = {asked.headers.begin(), asked.headers.end()}});
  ++requests_;
  playing_[transfer] = std::move(playing);
  return true;
}

void ScriptedTransport::Remove(Transfer* transfer) {
  playing_.erase(transfer);
}

int64_t ScriptedTransport::PartNs(const Playing& playing) {
  const ScriptedResponse& response = playing.response;
  if (response.no_response) return response.hang ? kNever : playing.sent_ns + response.end_at_ns;
  if (!playing.headers_done) return playing.sent_ns + response.headers_at_ns;
  if (playing.next_chunk < response.body.size())
    return playing.sent_ns + response.body[playing.next_chunk].at_ns;
  if (response.hang) return kNever;
  const int64_t last = response.body.empty() ? response.headers_at_ns : response.body.back().at_ns;
  return playing.sent_ns + std::max(last, response.end_at_ns);
}

int64_t ScriptedTransport::NextEventNs(const Playing& playing) {
  const int64_t part = PartNs(playing);
  return playing.timeout_at_ns >= 0 ? std::min(part, playing.timeout_at_ns) : part;
}

bool ScriptedTransport::Deliver(Transfer* transfer, Playing& playing, int64_t now_ns) {
  const ScriptedResponse& response = playing.response;
  while (true) {
    const int64_t part = PartNs(playing);
    // What is due at the timeout's own moment still arrives; what comes later does not.
    if (playing.timeout_at_ns >= 0 && part > playing.timeout_at_ns) {
      if (playing.timeout_at_ns > now_ns) return false;
      transfer->OnDone(CURLE_OPERATION_TIMEDOUT);
      return true;
    }
    if (part > now_ns) return false;
    if (response.no_response) {
      transfer->OnDone(response.end);
      return true;
    }
    if (!playing.headers_done) {
      playing.headers_done = true;
      transfer->OnStatus(response.status);
      transfer->OnHeader("HTTP/1.1 " + std::to_string(response.status) + "\r\n");
      for (const std::string& header : response.headers)
        transfer->OnHeader(header + "\r\n");
      transfer->OnHeader("\r\n");
      continue;
    }
    if (playing.next_chunk < response.body.size()) {
      const std::string& bytes = response.body[playing.next_chunk++].bytes;
      if (transfer->OnBody(bytes) != bytes.size()) {
        transfer->OnDone(CURLE_WRITE_ERROR);  // as curl ends a transfer its writer refused
        return true;
      }
      continue;
    }
    transfer->OnDone(response.end);
    return true;
  }
}

void ScriptedTransport::WaitAndDrive(int64_t deadline_ns, int max_wait_ms) {
  const int64_t now = clock_.NowNs();
  int64_t until = now + int64_t{max_wait_ms} * 1'000'000;
  if (deadline_ns >= 0) until = std::min(until, deadline_ns);
  int64_t next = kNever;
  for (const auto& [transfer, playing] : playing_)
    next = std::min(next, NextEventNs(playing));
  clock_.AdvanceTo(std::min(until, next));
  const int64_t at = clock_.NowNs();
  // In the order they are due, ties in the order the requests were added.
  std::vector<std::pair<std::pair<int64_t, uint64_t>, Transfer*>> due;
  for (const auto& [transfer, playing] : playing_) {
    const int64_t when = NextEventNs(playing);
    if (when <= at) due.push_back({{when, playing.order}, transfer});
  }
  std::sort(due.begin(), due.end());
  for (const auto& [key, transfer] : due) {
    auto found = playing_.find(transfer);
    if (found == playing_.end()) continue;
    // OnDone may hand the transfer back to its owner, which may reuse it: forget it first.
    Playing playing = std::move(found->second);
    playing_.erase(found);
    if (!Deliver(transfer, playing, at)) playing_[transfer] = std::move(playing);
  }
}

}  // namespace stagegate::http

#include "sim/sim_server.h"

#include <future>

#include "sim/application.h"
#include "sim/generation.h"
#include "sim/http_server.h"
#include "sim/tool_backend.h"

namespace stagegate::sim {

/// The downstream tool service: POST /tools/<name> with {"arguments": {...}, "persona": "..."}.
/// Each call costs the profile's tool latency.
class ToolService {
 public:
  ToolService(asio::io_context& io, const SimProfile& profile) : io_(io), profile_(profile) {}

  void Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder) {
    if (request.method == "GET" && request.path == "/health")
      return responder->Send(200, {{"Content-Type", "application/json"}}, R"({"status":"ok"})");
    if (request.method != "POST" || !request.path.starts_with("/tools/"))
      return responder->Send(404, {{"Content-Type", "application/json"}},
                             ErrorBody(404, "no route " + request.method + " " + request.path));
    nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
    if (!body.is_object())
      return responder->Send(400, {{"Content-Type", "application/json"}},
                             ErrorBody(400, "the request body is not a JSON object"));
    std::string name = request.path.substr(7);
    nlohmann::json arguments =
        body.contains("arguments") ? body["arguments"] : nlohmann::json::object();
    std::string persona = body.contains("persona") && body["persona"].is_string()
                              ? body["persona"].get<std::string>()
                              : "";
    auto timer = std::make_shared<asio::steady_timer>(io_);
    timer->expires_after(
        std::chrono::microseconds(static_cast<int64_t>(profile_.tool_latency_ms * 1000)));
    timer->async_wait([this, timer, responder, name, arguments, persona](asio::error_code) {
      ToolResult result = backend_.Call(name, arguments, persona);
      responder->Send(result.status, {{"Content-Type", "application/json"}}, result.body.dump());
    });
  }

 private:
  asio::io_context& io_;
  const SimProfile& profile_;
  ToolBackend backend_;
};

SimServer::SimServer(SimOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<SimServer>> SimServer::Start(SimOptions options) {
  std::unique_ptr<SimServer> server(new SimServer(std::move(options)));
  SimServer& s = *server;
  s.application_ =
      std::make_unique<Application>(s.io_, s.options_.profile, s.options_.corpus, s.options_.model);
  if (!s.options_.profile.tokenizer.empty()) {
    Result<std::unique_ptr<tokenize::Tokenizer>> tokenizer =
        tokenize::Tokenizer::Load(s.options_.profile.tokenizer);
    if (!tokenizer.ok()) return tokenizer.status();
    s.tokenizer_ = std::move(*tokenizer);
    s.application_->set_tokenizer(s.tokenizer_.get());
  }
  s.tools_ = std::make_unique<ToolService>(s.io_, s.options_.profile);
  Application* application = s.application_.get();
  ToolService* tools = s.tools_.get();
  s.api_server_ = std::make_unique<HttpServer>(
      s.io_, [application](HttpRequest r, std::shared_ptr<HttpResponder> w) {
        application->Handle(std::move(r), std::move(w));
      });
  s.tool_server_ =
      std::make_unique<HttpServer>(s.io_, [tools](HttpRequest r, std::shared_ptr<HttpResponder> w) {
        tools->Handle(std::move(r), std::move(w));
      });
  Status listening = s.api_server_->Listen(s.options_.host, s.options_.port);
  if (!listening.ok()) return listening;
  listening = s.tool_server_->Listen(s.options_.host, s.options_.tool_port);
  if (!listening.ok()) return listening.WithContext("tool service");
  s.port_ = s.api_server_->port();
  s.tool_port_ = s.tool_server_->port();
  application->set_tool_url(s.options_.tool_url.empty() ? s.tool_service_url()
                                                        : s.options_.tool_url);
  s.thread_ = std::thread([&io = s.io_] {
    auto guard = asio::make_work_guard(io);
    io.run();
  });
  return server;
}

SimServer::~SimServer() {
  Stop();
}

std::string SimServer::base_url() const {
  return "http://" + options_.host + ":" + std::to_string(port_);
}

std::string SimServer::tool_service_url() const {
  return "http://" + options_.host + ":" + std::to_string(tool_port_);
}

void SimServer::SetToolUrl(std::string url) {
  if (stopped_) return;
  std::promise<void> done;
  asio::post(io_, [this, &done, url = std::move(url)]() mutable {
    application_->set_tool_url(std::move(url));
    done.set_value();
  });
  done.get_future().wait();
}

void SimServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (thread_.joinable()) {
    asio::post(io_, [this] {
      api_server_->Stop();
      tool_server_->Stop();
      io_.stop();
    });
    thread_.join();
  }
}

}  // namespace stagegate::sim

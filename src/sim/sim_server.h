#pragma once

#include <asio.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "manifest/corpus.h"
#include "sim/profile.h"
#include "tokenize/tokenizer.h"

namespace stagegate::sim {

struct SimOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;       // 0: any free port
  uint16_t tool_port = 0;  // the built-in tool service; 0: any free port
  std::string tool_url;    // where the application calls tools; "": the built-in tool service
  SimProfile profile = SimProfile::Default();
  std::string model = "sim-assistant";
  const manifest::Corpus* corpus = nullptr;  // must outlive the server; null: no documents
};

class Application;
class HttpServer;
class ToolService;

/// The reference application, running on its own thread: the assistant's HTTP API and the tool
/// service it calls, both on loopback. Start() returns once both ports are listening. Stop() (also
/// run by the destructor) closes every connection and joins the thread.
class SimServer {
 public:
  static Result<std::unique_ptr<SimServer>> Start(SimOptions options);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  uint16_t port() const { return port_; }
  uint16_t tool_port() const { return tool_port_; }
  std::string base_url() const;
  std::string tool_service_url() const;
  /// Points the application's tool calls at `url` (a fault proxy, say). Safe from any thread.
  void SetToolUrl(std::string url);
  void Stop();

 private:
  explicit SimServer(SimOptions options);

  SimOptions options_;
  asio::io_context io_;
  std::unique_ptr<tokenize::Tokenizer> tokenizer_;  // the profile's; outlives the application
  std::unique_ptr<Application> application_;
  std::unique_ptr<ToolService> tools_;
  std::unique_ptr<HttpServer> api_server_;
  std::unique_ptr<HttpServer> tool_server_;
  uint16_t port_ = 0;
  uint16_t tool_port_ = 0;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace stagegate::sim

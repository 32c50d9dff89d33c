#pragma once

#include <asio.hpp>

#include <map>
#include <memory>
#include <string>

#include "manifest/corpus.h"
#include "sim/engine.h"
#include "sim/ground_truth.h"
#include "sim/http_server.h"
#include "sim/metrics.h"
#include "sim/prefix_cache.h"
#include "sim/profile.h"
#include "sim/retrieval.h"
#include "tokenize/tokenizer.h"

namespace stagegate::sim {

/// The assistant around the model: OpenAI-compatible endpoints, and per request (headers, see
/// docs/sim.md) retrieval over the corpus documents, identity from persona bearer tokens, and tool
/// calls executed against the tool service at `tool_url`. Runs on one io_context thread.
class Application {
 public:
  /// `corpus` may be null (no documents, personas or tools); when set it must outlive this.
  Application(asio::io_context& io, const SimProfile& profile, const manifest::Corpus* corpus,
              std::string model_name);

  void Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder);
  void set_tool_url(std::string url) { tool_url_ = std::move(url); }
  /// Counts prompt tokens with the model's tokenizer (which must outlive this) instead of as 4
  /// bytes a token.
  void set_tokenizer(const tokenize::Tokenizer* tokenizer) { tokenizer_ = tokenizer; }
  const std::string& tool_url() const { return tool_url_; }
  Metrics& metrics() { return metrics_; }

 private:
  struct Exchange;
  void Completions(HttpRequest request, std::shared_ptr<HttpResponder> responder, bool chat);
  /// Identity: the persona of the request's bearer token, after the identity service's delay;
  /// a 401 for a request without a persona's token.
  void Identify(std::shared_ptr<Exchange> exchange);
  void AfterIdentity(std::shared_ptr<Exchange> exchange);
  void AfterRetrieval(std::shared_ptr<Exchange> exchange);
  void Answer(std::shared_ptr<Exchange> exchange);
  /// The restricted document `question` asks for that `persona` may not read, or null.
  const manifest::Document* AskedForbidden(const std::string& question,
                                           const manifest::Persona* persona) const;
  void SendError(HttpResponder& responder, const std::string& path, int status,
                 const std::string& message);

  asio::io_context& io_;
  const SimProfile& profile_;
  const manifest::Corpus* corpus_;
  std::string model_name_;
  std::string tool_url_;
  Metrics metrics_;
  GroundTruthLog ground_truth_;
  BatchEngine engine_;
  PrefixCache prefix_cache_;
  const tokenize::Tokenizer* tokenizer_ = nullptr;
  std::unique_ptr<RetrievalIndex> index_;
  std::map<std::string, const manifest::Persona*> personas_by_token_;
  std::map<std::string, size_t> document_frequency_;  // search term -> documents holding it
  uint64_t next_id_ = 1;
};

/// The bearer token of a persona: the value of its token_env variable, or "sim-token-<name>" when
/// that variable is unset (the reference application only; documented in docs/sim.md).
std::string PersonaToken(const manifest::Persona& persona);

}  // namespace stagegate::sim

// `stagegate sim`: runs the reference application in the foreground until SIGINT or SIGTERM.

#include <pthread.h>
#include <csignal>

#include "cli/command.h"
#include "manifest/corpus.h"
#include "sim/default_corpus.h"
#include "sim/profile.h"
#include "sim/sim_server.h"

namespace stagegate::cli {

namespace {

class SimCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("--host", host_, "Address to listen on (loopback)")->capture_default_str();
    app.add_option("--port", port_, "Port of the OpenAI-compatible API (0: any free port)")
        ->capture_default_str()
        ->check(Between(0, 65535));
    app.add_option("--tool-port", tool_port_, "Port of the tool service (0: any free port)")
        ->capture_default_str()
        ->check(Between(0, 65535));
    app.add_option("--tool-url", tool_url_,
                   "Where the application calls tools (a fault proxy); default: its own tool "
                   "service")
        ->check(HttpUrl());
    app.add_option("--config,--profile", profile_,
                   "Latency profile: default, fast, or a YAML file (docs/sim.md)")
        ->capture_default_str();
    app.add_option("--corpus", corpus_dir_,
                   "Corpus folder (with corpus.yaml) whose documents, personas and tools it "
                   "serves; default: corpus/service-desk in the current directory, else in the "
                   "checkout the executable was built in")
        ->type_name("DIR");
    app.add_option("--model", model_, "Model name it reports")->capture_default_str();
    app.add_option("--fault", fault_, "A misbehaviour for every request (docs/sim.md)");
    app.add_option("--tokenizer", tokenizer_,
                   "The model's tokenizer.json or SentencePiece .model: prompt tokens counted "
                   "with it, not as 4 bytes a token");
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    manifest::Diagnostics diagnostics;
    std::optional<sim::SimProfile> profile = sim::LoadSimProfile(profile_, diagnostics);
    std::string corpus_dir = corpus_dir_;
    if (corpus_dir.empty()) {
      Result<std::string> found = sim::FindDefaultCorpus();
      if (!found.ok()) {
        console.Error("stagegate sim: " + found.status().message());
        return ExitCode::kInvalidInput;
      }
      corpus_dir = *found;
    }
    std::optional<manifest::Corpus> corpus = manifest::LoadCorpus(corpus_dir, diagnostics);
    if (!diagnostics.empty()) {
      for (const manifest::Diagnostic& d : diagnostics.Sorted())
        console.Error(d.ToString());
      return ExitCode::kInvalidInput;
    }
    if (!fault_.empty()) profile->fault = fault_;
    if (!tokenizer_.empty()) profile->tokenizer = tokenizer_;

    // Block the stop signals before the server thread starts, so that it inherits the mask and
    // this thread alone receives them, in sigwait below.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    sim::SimOptions options{.host = host_,
                            .port = port_,
                            .tool_port = tool_port_,
                            .tool_url = tool_url_,
                            .profile = *profile,
                            .model = model_,
                            .corpus = corpus ? &*corpus : nullptr};
    Result<std::unique_ptr<sim::SimServer>> server = sim::SimServer::Start(options);
    if (!server.ok()) {
      console.Error("stagegate sim: " + server.status().message());
      // A tokenizer file that cannot be used is the user's input; a port in use is not.
      const Status::Code code = server.status().code();
      return code == Status::Code::kInvalidInput || code == Status::Code::kNotFound
                 ? ExitCode::kInvalidInput
                 : ExitCode::kRuntimeFailure;
    }
    console.Line("sim listening on " + (*server)->base_url() + " (profile " + profile->name +
                 ", corpus " + corpus_dir + ", tools at " + (*server)->tool_service_url() +
                 (profile->tokenizer.empty() ? "" : ", prompt tokens by " + profile->tokenizer) +
                 ")");
    int signal = 0;
    sigwait(&stop_signals, &signal);
    (*server)->Stop();
    console.Line(std::string("sim stopped (") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + ")");
    return ExitCode::kOk;
  }

 private:
  std::string host_ = "127.0.0.1";
  uint16_t port_ = 8000;
  uint16_t tool_port_ = 0;
  std::string tool_url_;
  std::string profile_ = "default";
  std::string tokenizer_;
  std::string corpus_dir_;  // "": the default corpus, found by sim::FindDefaultCorpus
  std::string model_ = "sim-assistant";
  std::string fault_;
};

}  // namespace

std::unique_ptr<Command> MakeSimCommand() {
  return std::make_unique<SimCommand>();
}

}  // namespace stagegate::cli

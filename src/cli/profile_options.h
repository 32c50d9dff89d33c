#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "http/transport.h"
#include "load/engine.h"
#include "load/response_budget.h"
#include "load/schedule.h"
#include "load/synthetic.h"

namespace stagegate::cli {

/// Every option of `stagegate profile`, as given (ProfileCommand checks and prepares them).
struct ProfileFlags {
  /// Declares the options, their defaults, checks and help, on `app`.
  void AddOptions(CLI::App& app);

  std::string url_, model_, endpoint_ = "chat";
  bool no_stream_ = false;
  std::vector<int64_t> concurrency_;
  std::vector<double> rates_;
  std::string arrival_ = "poisson";
  double burstiness_ = 1;
  std::optional<double> ramp_to_;
  std::vector<std::string> spikes_;
  std::optional<int64_t> max_concurrency_;
  std::string when_full_ = "queue";
  std::string trace_;
  double speedup_ = 1;
  int64_t block_tokens_ = 512;
  std::string shared_prefix_;
  std::string session_turns_, think_time_ = "0", follow_up_tokens_;
  std::optional<int64_t> requests_;
  std::optional<double> duration_s_;
  int64_t warmup_ = 0;
  double grace_s_ = 5;
  std::string input_tokens_ = "550", output_tokens_ = "128";
  std::string corpus_dir_;
  std::string dataset_path_, dataset_format_;
  std::optional<int64_t> dataset_min_tokens_, dataset_max_tokens_, dataset_max_output_tokens_;
  std::string extra_inputs_;
  std::vector<std::string> headers_;
  std::string api_key_env_;
  std::string slo_;
  double slo_percentile_ = 95;
  bool search_ = false;
  double search_from_ = 1;
  std::optional<double> search_up_to_;
  double search_resolution_ = 0.1;
  std::optional<double> max_duration_s_;
  int64_t min_completed_ = 30;
  double keep_pace_ = 0.95;
  uint64_t seed_ = 1;
  int workers_ = 0;
  bool busy_poll_ = false;
  std::string receive_times_ = "kernel";
  double response_memory_mib_ = load::ResponseBudget::kDefaultLimitBytes >> 20;
  std::string shard_text_;
  std::string start_at_text_;
  std::optional<int64_t> start_at_unix_ms_;
  load::Timeouts timeouts_;
  std::string out_dir_;
  std::string tokenizer_path_;
  std::string metrics_url_;
  std::vector<std::string> gpu_ = {"off"};
  int64_t scrape_interval_ms_ = 1000;
  std::optional<double> slice_s_;
};

/// `--metrics-url`, `--gpu` and `--scrape-interval-ms`, as given.
struct ProfileTelemetryOptions {
  std::string metrics_url;       // "": the target's metrics are not scraped
  std::vector<std::string> gpu;  // {"auto"}, {"off"} or {"dcgm", URL}
  int64_t interval_ms = 1000;
};

/// The options' problems ("--gpu: ..."), each a line; none when they are good.
std::vector<std::string> CheckTelemetryOptions(const ProfileTelemetryOptions& options);

/// Parsers of `profile`'s option values that take more than a range check. Each fails with
/// InvalidInput naming the option and what it expects.

/// --spike "AT_S:DURATION_S:RATE": seconds, seconds and requests/s.
Result<load::RateSpike> ParseSpike(const std::string& text);

/// Each --header must be "Name: value" with a token for a name and no control character in the
/// value (a CR or LF would inject a header), every name once, and Authorization not beside
/// --api-key-env (`api_key_env`): a request carries one. Messages name headers, never their
/// values; one problem a line.
Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env);

}  // namespace stagegate::cli

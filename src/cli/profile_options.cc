#include "cli/profile_options.h"

#include "cli/command.h"

#include <cstdlib>
#include <vector>

#include "base/http_header.h"
#include "base/strings.h"
#include "http/url_check.h"
#include "stats/summary.h"

namespace stagegate::cli {

Result<load::RateSpike> ParseSpike(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  double values[3] = {};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    char* end = nullptr;
    values[i] = std::strtod(parts[i].c_str(), &end);
    ok = !parts[i].empty() && *end == '\0' && values[i] >= 0 && values[i] <= 604'800;
  }
  ok = ok && values[1] > 0 && values[2] > 0 && values[2] <= 1e5;
  if (!ok)
    return Status::InvalidInput("--spike '" + text +
                                "': expected AT_S:DURATION_S:RATE, each within a week and the "
                                "rate at most 100,000 requests/s");
  return load::RateSpike{.at_s = values[0], .duration_s = values[1], .rate = values[2]};
}

Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env) {
  std::vector<std::string> errors;
  std::vector<std::string> names;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    if (colon == std::string::npos) {
      errors.push_back("--header '" + header + "': expected 'Name: value'");
      continue;
    }
    const std::string name = header.substr(0, colon);
    std::string_view value = std::string_view(header).substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    if (std::optional<std::string> problem = HeaderProblem(name, value)) {
      errors.push_back("--header: " + *problem);
      continue;
    }
    for (const std::string& earlier : names)
      if (SameHeaderName(earlier, name))
        errors.push_back("--header '" + name + "' is given twice (also as '" + earlier +
                         "'; names are case-insensitive)");
    names.push_back(name);
    if (api_key_env && SameHeaderName(name, "Authorization"))
      errors.push_back("--header '" + name +
                       "' and --api-key-env both send an Authorization "
                       "header; give one of them");
  }
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

void ProfileFlags::AddOptions(CLI::App& app) {
  app.add_option("--url", url_,
                 "Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
      ->required()
      ->check(HttpUrl());
  app.add_option("--model", model_, "Model name sent in every request")->required();
  app.add_option("--endpoint", endpoint_, "chat or completions")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  app.add_flag("--no-stream", no_stream_,
               "Ask for whole answers (then TTFT, TTST, ITL and TPOT are not measured)");
  app.add_option("--concurrency", concurrency_,
                 "Closed loop: levels of requests in flight, e.g. 1,2,4,8")
      ->delimiter(',')
      ->check(Between(1, 100000));
  app.add_option("--request-rate", rates_, "Open loop: levels of requests/s, e.g. 2,4,8")
      ->delimiter(',')
      ->check(Between(0.001, 1e6));
  app.add_option("--arrival", arrival_, "Open-loop arrivals: constant, poisson or gamma")
      ->check(CLI::IsMember({"constant", "poisson", "gamma"}))
      ->capture_default_str();
  app.add_option("--burstiness", burstiness_, "Gamma shape k (inter-arrival CV 1/sqrt(k))")
      ->capture_default_str()
      ->check(Between(0.01, 1000));
  app.add_option("--ramp-to", ramp_to_, "Open loop: ramp linearly to this rate over --duration")
      ->check(Between(0.001, 1e6));
  app.add_option("--spike", spikes_,
                 "Open loop: AT_S:DURATION_S:RATE replaces the rate (repeatable)");
  app.add_option("--max-concurrency", max_concurrency_, "Open loop: cap on requests in flight")
      ->check(Between(1, 100000));
  app.add_option("--when-full", when_full_, "Under the cap: queue (and record the wait) or drop")
      ->check(CLI::IsMember({"queue", "drop"}))
      ->capture_default_str();
  CLI::Option* trace = app.add_option(
      "--trace", trace_, "Replay a JSONL trace (timestamp ms, input_length, output_length)");
  app.add_option("--trace-block-tokens", block_tokens_,
                 "Tokens of the prompt each of a trace entry's hash_ids stands for (Mooncake's)")
      ->capture_default_str()
      ->check(Between(1, 1e6));
  app.add_option("--shared-prefix", shared_prefix_,
                 "COUNT:TOKENS[:SHARE]: synthetic prompts start with one of COUNT prefixes")
      ->excludes(trace);
  app.add_option("--session-turns", session_turns_,
                 "Multi-turn sessions of MEAN[:STD] turns (each user of --concurrency runs them "
                 "one after another; each arrival of --rate starts one)");
  app.add_option("--think-time", think_time_, "Milliseconds MS[:STD] a user thinks between turns")
      ->capture_default_str();
  app.add_option("--follow-up-tokens", follow_up_tokens_,
                 "Tokens MEAN[:STD] of each user turn after a session's first");
  app.add_option("--speedup", speedup_, "Trace replay speed factor")
      ->capture_default_str()
      ->check(Between(0.001, 1e6));
  app.add_option("--requests", requests_, "Requests per level (default 100 unless --duration)")
      ->check(Between(1, 1e7));
  app.add_option("--duration", duration_s_, "Seconds per level")->check(Between(0.001, 86400));
  app.add_option("--warmup", warmup_, "Requests per level sent first and left out of statistics")
      ->capture_default_str()
      ->check(Between(0, 1e6));
  app.add_option("--grace", grace_s_, "Seconds requests in flight at the end may finish")
      ->capture_default_str()
      ->check(Between(0, 3600));
  app.add_option("--tokenizer", tokenizer_path_,
                 "The model's tokenizer (tokenizer.json or a SentencePiece .model): exact prompt "
                 "lengths and token counts, instead of 4 bytes a token")
      ->check(CLI::ExistingFile);
  CLI::Option* input_tokens = app.add_option("--input-tokens", input_tokens_,
                                             "Synthetic prompt length MEAN[:STD] in tokens")
                                  ->capture_default_str();
  app.add_option("--output-tokens", output_tokens_,
                 "Requested output length MEAN[:STD] (max_tokens); with --dataset, its mean for "
                 "entries that give none")
      ->capture_default_str();
  CLI::Option* corpus = app.add_option(
      "--corpus", corpus_dir_, "Send the prompts of this corpus's tasks instead of synthetic ones");
  CLI::Option* dataset =
      app.add_option("--dataset", dataset_path_,
                     "Send the prompts of this dataset file instead of synthetic ones: JSONL "
                     "of {\"prompt\"} or {\"messages\"} objects, or ShareGPT conversations; "
                     "--seed picks the order")
          ->excludes(corpus)
          ->excludes(trace)
          ->excludes(input_tokens);
  app.add_option("--dataset-format", dataset_format_,
                 "jsonl or sharegpt (default: sharegpt when the file starts with '[', else "
                 "jsonl)")
      ->check(CLI::IsMember({"jsonl", "sharegpt"}))
      ->needs(dataset);
  app.add_option("--dataset-min-tokens", dataset_min_tokens_,
                 "Leave out dataset prompts of fewer tokens (estimated as bytes / 4)")
      ->check(Between(1, 1e6))
      ->needs(dataset);
  app.add_option("--dataset-max-tokens", dataset_max_tokens_,
                 "Leave out dataset prompts of more tokens (estimated as bytes / 4)")
      ->check(Between(1, 1e7))
      ->needs(dataset);
  app.add_option("--dataset-max-output-tokens", dataset_max_output_tokens_,
                 "Leave out dataset entries that ask for more output tokens")
      ->check(Between(1, 1e6))
      ->needs(dataset);
  app.add_option("--extra-inputs", extra_inputs_,
                 "JSON fields merged into every body, e.g. ignore_eos:true,min_tokens:128");
  app.add_option("--header", headers_, "Extra request header 'Name: value' (repeatable)");
  app.add_option("--api-key-env", api_key_env_,
                 "Environment variable holding the API key (sent as a Bearer token, never stored)");
  app.add_option("--slo", slo_,
                 "SLOs, e.g. ttft_ms:500,e2e_ms:4000: goodput counts the requests meeting "
                 "every one, and a level holds them when each metric's --slo-percentile does; "
                 "with --slo the exit code is a gate (1 when a level misses)");
  app.add_option("--slo-percentile", slo_percentile_,
                 std::string("The percentile of each --slo metric a level must keep under its "
                             "limit: ") +
                     stats::kCarriedPercentilesText)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double p = 0;
            if (CLI::detail::lexical_cast(text, p) && stats::IsCarriedPercentile(p)) return "";
            return "must be a percentile the statistics carry (" +
                   std::string(stats::kCarriedPercentilesText) + "), got '" + text + "'";
          },
          "PERCENTILE"))
      ->capture_default_str();
  app.add_flag("--search", search_,
               "Find the sustained request rate: from --search-from, doubling until a level is "
               "not sustained or misses an SLO, then bisecting to --search-resolution");
  app.add_option("--search-from", search_from_, "Request rate the search starts at")
      ->capture_default_str();
  app.add_option("--search-up-to", search_up_to_, "Highest request rate the search tries");
  app.add_option("--search-resolution", search_resolution_,
                 "Bisect until the first miss is within this share above the last pass")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--max-duration", max_duration_s_,
                 "Seconds a level may run on past --duration while too short to tell whether it "
                 "was sustained");
  app.add_option("--min-completed", min_completed_,
                 "Completed requests a level needs before it can pass")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--keep-pace", keep_pace_,
                 "Share of arrivals a level must complete over its arrival window to be "
                 "sustained")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--seed", seed_, "Seed of schedules and synthetic prompts")
      ->capture_default_str()
      ->check(Between(0, kMaxSeed));
  app.add_option("--workers", workers_, "Worker threads (0: one per hardware thread)")
      ->capture_default_str()
      ->check(Between(0, 1024));
  app.add_flag("--busy-poll", busy_poll_,
               "Workers poll without sleeping (a core each), so they read what arrived without a "
               "wake-up's delay");
  app.add_option("--max-response-memory", response_memory_mib_,
                 "MiB the responses in flight may keep between them; a response past it is cut "
                 "(outcome memory_limit). 0: no limit")
      ->capture_default_str();
  app.add_option("--receive-times", receive_times_,
                 "Stamp token arrivals with the kernel's receive time (kernel) or when the "
                 "client read them (read)")
      ->check(CLI::IsMember({"kernel", "read"}))
      ->capture_default_str();
  app.add_option("--shard", shard_text_,
                 "Take slice I of N of each level's schedule, each level at its planned offset "
                 "(I/N, or job/N for JOB_COMPLETION_INDEX + 1); `merge` joins the shards")
      ->type_name("I/N");
  app.add_option("--start-at", start_at_text_,
                 "Begin the first level at this instant, the same in every shard (RFC 3339 or "
                 "Unix ms)")
      ->type_name("TIME");
  app.add_option("--connect-timeout-ms", timeouts_.connect_ms, "Give up connecting after this long")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--first-token-timeout-ms", timeouts_.first_token_ms,
                 "Give up when no token came this long after the send")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--total-timeout-ms", timeouts_.total_ms, "Give up on a request after this long")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--out", out_dir_, "Output folder (default reports/<run id>)");
  app.add_option("--metrics-url", metrics_url_,
                 "Scrape the target's Prometheus metrics through every level (server_metrics.csv)")
      ->type_name("URL");
  app.add_option("--gpu", gpu_, "GPU telemetry: auto (NVML when present), off, or dcgm URL")
      ->expected(1, 2)
      ->type_name("MODE [URL]")
      ->capture_default_str();
  app.add_option("--slice-s", slice_s_,
                 "Every metric of each level also per time slice of this many seconds "
                 "(profile.json)")
      ->check(Between(0.01, 3600));
  app.add_option("--scrape-interval-ms", scrape_interval_ms_,
                 "Milliseconds between scrapes of --metrics-url and --gpu")
      ->capture_default_str()
      ->check(Between(1, 3'600'000));
}

std::vector<std::string> CheckTelemetryOptions(const ProfileTelemetryOptions& options) {
  std::vector<std::string> problems;
  if (!options.metrics_url.empty())
    if (Status url = http::CheckHttpUrl(options.metrics_url); !url.ok())
      problems.push_back("--metrics-url: " + url.message());
  const std::vector<std::string>& gpu = options.gpu;
  if (gpu.empty() || (gpu[0] != "auto" && gpu[0] != "off" && gpu[0] != "dcgm"))
    problems.push_back("--gpu: give auto, off, or dcgm URL");
  else if (gpu[0] == "dcgm" && gpu.size() != 2)
    problems.push_back("--gpu dcgm: give the DCGM exporter's metrics URL after it");
  else if (gpu[0] != "dcgm" && gpu.size() != 1)
    problems.push_back("--gpu " + gpu[0] + ": takes no URL");
  else if (gpu[0] == "dcgm")
    if (Status url = http::CheckHttpUrl(gpu[1]); !url.ok())
      problems.push_back("--gpu dcgm: " + url.message());
  if (options.interval_ms < 1) problems.push_back("--scrape-interval-ms: must be at least 1");
  return problems;
}

}  // namespace stagegate::cli

#include "cli/profile_options.h"

#include "cli/command.h"
#include "stats/summary.h"

namespace stagegate::cli {

namespace {

// The load's shape: closed or open loop, its levels, arrivals, sessions, trace and lengths.
// Returns --trace, which the input's options exclude.
CLI::Option* AddLoadOptions(CLI::App& app, scenario::ProfileRequest& r) {
  app.add_option("--concurrency", r.concurrency,
                 "Closed loop: levels of requests in flight, e.g. 1,2,4,8")
      ->delimiter(',')
      ->check(Between(1, 100000));
  app.add_option("--request-rate", r.rates, "Open loop: levels of requests/s, e.g. 2,4,8")
      ->delimiter(',')
      ->check(Between(0.001, 1e6));
  app.add_option("--arrival", r.arrival, "Open-loop arrivals: constant, poisson or gamma")
      ->check(CLI::IsMember({"constant", "poisson", "gamma"}))
      ->capture_default_str();
  app.add_option("--burstiness", r.burstiness, "Gamma shape k (inter-arrival CV 1/sqrt(k))")
      ->capture_default_str()
      ->check(Between(0.01, 1000));
  app.add_option("--ramp-to", r.ramp_to, "Open loop: ramp linearly to this rate over --duration")
      ->check(Between(0.001, 1e6));
  app.add_option("--spike", r.spikes,
                 "Open loop: AT_S:DURATION_S:RATE replaces the rate (repeatable)");
  app.add_option("--max-concurrency", r.max_concurrency, "Open loop: cap on requests in flight")
      ->check(Between(1, 100000));
  app.add_option("--when-full", r.when_full, "Under the cap: queue (and record the wait) or drop")
      ->check(CLI::IsMember({"queue", "drop"}))
      ->capture_default_str();
  CLI::Option* trace = app.add_option(
      "--trace", r.trace, "Replay a JSONL trace (timestamp ms, input_length, output_length)");
  app.add_option("--trace-block-tokens", r.block_tokens,
                 "Tokens of the prompt each of a trace entry's hash_ids stands for (Mooncake's)")
      ->capture_default_str()
      ->check(Between(1, 1e6));
  app.add_option("--shared-prefix", r.shared_prefix,
                 "COUNT:TOKENS[:SHARE]: synthetic prompts start with one of COUNT prefixes")
      ->excludes(trace);
  app.add_option("--session-turns", r.session_turns,
                 "Multi-turn sessions of MEAN[:STD] turns (each user of --concurrency runs them "
                 "one after another; each arrival of --rate starts one)");
  app.add_option("--think-time", r.think_time, "Milliseconds MS[:STD] a user thinks between turns")
      ->capture_default_str();
  app.add_option("--follow-up-tokens", r.follow_up_tokens,
                 "Tokens MEAN[:STD] of each user turn after a session's first");
  app.add_option("--speedup", r.speedup, "Trace replay speed factor")
      ->capture_default_str()
      ->check(Between(0.001, 1e6));
  app.add_option("--requests", r.requests, "Requests per level (default 100 unless --duration)")
      ->check(Between(1, 1e7));
  app.add_option("--duration", r.duration_s, "Seconds per level")->check(Between(0.001, 86400));
  app.add_option("--warmup", r.warmup, "Requests per level sent first and left out of statistics")
      ->capture_default_str()
      ->check(Between(0, 1e6));
  app.add_option("--grace", r.grace_s, "Seconds requests in flight at the end may finish")
      ->capture_default_str()
      ->check(Between(0, 3600));
  return trace;
}

// What the requests carry: prompts (synthetic, a corpus's, a dataset's), bodies and headers.
void AddInputOptions(CLI::App& app, scenario::ProfileRequest& r, CLI::Option* trace) {
  app.add_option("--tokenizer", r.tokenizer_path,
                 "The model's tokenizer (tokenizer.json or a SentencePiece .model): exact prompt "
                 "lengths and token counts, instead of 4 bytes a token")
      ->check(CLI::ExistingFile);
  CLI::Option* input_tokens = app.add_option("--input-tokens", r.input_tokens,
                                             "Synthetic prompt length MEAN[:STD] in tokens")
                                  ->capture_default_str();
  app.add_option("--output-tokens", r.output_tokens,
                 "Requested output length MEAN[:STD] (max_tokens); with --dataset, its mean for "
                 "entries that give none")
      ->capture_default_str();
  CLI::Option* corpus =
      app.add_option("--corpus", r.corpus_dir,
                     "Send the prompts of this corpus's tasks instead of synthetic ones");
  CLI::Option* dataset =
      app.add_option("--dataset", r.dataset_path,
                     "Send the prompts of this dataset file instead of synthetic ones: JSONL "
                     "of {\"prompt\"} or {\"messages\"} objects, or ShareGPT conversations; "
                     "--seed picks the order")
          ->excludes(corpus)
          ->excludes(trace)
          ->excludes(input_tokens);
  app.add_option("--dataset-format", r.dataset_format,
                 "jsonl or sharegpt (default: sharegpt when the file starts with '[', else "
                 "jsonl)")
      ->check(CLI::IsMember({"jsonl", "sharegpt"}))
      ->needs(dataset);
  app.add_option("--dataset-min-tokens", r.dataset_min_tokens,
                 "Leave out dataset prompts of fewer tokens (estimated as bytes / 4)")
      ->check(Between(1, 1e6))
      ->needs(dataset);
  app.add_option("--dataset-max-tokens", r.dataset_max_tokens,
                 "Leave out dataset prompts of more tokens (estimated as bytes / 4)")
      ->check(Between(1, 1e7))
      ->needs(dataset);
  app.add_option("--dataset-max-output-tokens", r.dataset_max_output_tokens,
                 "Leave out dataset entries that ask for more output tokens")
      ->check(Between(1, 1e6))
      ->needs(dataset);
  app.add_option("--extra-inputs", r.extra_inputs,
                 "JSON fields merged into every body, e.g. ignore_eos:true,min_tokens:128");
  app.add_option("--header", r.headers, "Extra request header 'Name: value' (repeatable)");
  app.add_option("--api-key-env", r.api_key_env,
                 "Environment variable holding the API key (sent as a Bearer token, never stored)");
}

// The gate: SLOs, the search, and what makes a level sustained.
void AddGateOptions(CLI::App& app, scenario::ProfileRequest& r) {
  app.add_option("--slo", r.slo,
                 "SLOs, e.g. ttft_ms:500,e2e_ms:4000: goodput counts the requests meeting "
                 "every one, and a level holds them when each metric's --slo-percentile does; "
                 "with --slo the exit code is a gate (1 when a level misses)");
  app.add_option("--slo-percentile", r.slo_percentile,
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
  app.add_flag("--search", r.search,
               "Find the sustained request rate: from --search-from, doubling until a level is "
               "not sustained or misses an SLO, then bisecting to --search-resolution");
  app.add_option("--search-from", r.search_from, "Request rate the search starts at")
      ->capture_default_str();
  app.add_option("--search-up-to", r.search_up_to, "Highest request rate the search tries");
  app.add_option("--search-resolution", r.search_resolution,
                 "Bisect until the first miss is within this share above the last pass")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--max-duration", r.max_duration_s,
                 "Seconds a level may run on past --duration while too short to tell whether it "
                 "was sustained");
  app.add_option("--min-completed", r.min_completed,
                 "Completed requests a level needs before it can pass")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--keep-pace", r.keep_pace,
                 "Share of arrivals a level must complete over its arrival window to be "
                 "sustained")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
}

// The client's own settings, shards, timeouts, outputs and telemetry.
void AddClientOptions(CLI::App& app, scenario::ProfileRequest& r) {
  app.add_option("--seed", r.seed, "Seed of schedules and synthetic prompts")
      ->capture_default_str()
      ->check(Between(0, kMaxSeed));
  app.add_option("--workers", r.workers, "Worker threads (0: one per hardware thread)")
      ->capture_default_str()
      ->check(Between(0, 1024));
  app.add_flag("--busy-poll", r.busy_poll,
               "Workers poll without sleeping (a core each), so they read what arrived without a "
               "wake-up's delay");
  app.add_option("--max-response-memory", r.response_memory_mib,
                 "MiB the responses in flight may keep between them; a response past it is cut "
                 "(outcome memory_limit). 0: no limit")
      ->capture_default_str();
  app.add_option("--receive-times", r.receive_times,
                 "Stamp token arrivals with the kernel's receive time (kernel) or when the "
                 "client read them (read)")
      ->check(CLI::IsMember({"kernel", "read"}))
      ->capture_default_str();
  app.add_option("--shard", r.shard,
                 "Take slice I of N of each level's schedule, each level at its planned offset "
                 "(I/N, or job/N for JOB_COMPLETION_INDEX + 1); `merge` joins the shards")
      ->type_name("I/N");
  app.add_option("--start-at", r.start_at,
                 "Begin the first level at this instant, the same in every shard (RFC 3339 or "
                 "Unix ms)")
      ->type_name("TIME");
  app.add_option("--connect-timeout-ms", r.timeouts.connect_ms,
                 "Give up connecting after this long")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--first-token-timeout-ms", r.timeouts.first_token_ms,
                 "Give up when no token came this long after the send")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--total-timeout-ms", r.timeouts.total_ms, "Give up on a request after this long")
      ->capture_default_str()
      ->check(Between(1, kMaxTimeoutMs));
  app.add_option("--out", r.out_dir, "Output folder (default reports/<run id>)");
  app.add_option("--metrics-url", r.metrics_url,
                 "Scrape the target's Prometheus metrics through every level (server_metrics.csv)")
      ->type_name("URL");
  app.add_option("--gpu", r.gpu, "GPU telemetry: auto (NVML when present), off, or dcgm URL")
      ->expected(1, 2)
      ->type_name("MODE [URL]")
      ->capture_default_str();
  app.add_option("--slice-s", r.slice_s,
                 "Every metric of each level also per time slice of this many seconds "
                 "(profile.json)")
      ->check(Between(0.01, 3600));
  app.add_option("--scrape-interval-ms", r.scrape_interval_ms,
                 "Milliseconds between scrapes of --metrics-url and --gpu")
      ->capture_default_str()
      ->check(Between(1, 3'600'000));
}

}  // namespace

void AddProfileOptions(CLI::App& app, scenario::ProfileRequest& r) {
  app.add_option("--url", r.url,
                 "Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
      ->required()
      ->check(HttpUrl());
  app.add_option("--model", r.model, "Model name sent in every request")->required();
  app.add_option("--endpoint", r.endpoint, "chat or completions")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  app.add_flag("--no-stream", r.no_stream,
               "Ask for whole answers (then TTFT, TTST, ITL and TPOT are not measured)");
  CLI::Option* trace = AddLoadOptions(app, r);
  AddInputOptions(app, r, trace);
  AddGateOptions(app, r);
  AddClientOptions(app, r);
}

}  // namespace stagegate::cli

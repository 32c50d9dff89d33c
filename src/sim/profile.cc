#include "sim/profile.h"

#include "base/files.h"
#include "manifest/yaml_reader.h"

namespace stagegate::sim {

namespace {

using manifest::kNonNegative;
using manifest::kPositive;
using manifest::MapReader;
using manifest::Need;

constexpr manifest::EnumName<DenialMode> kDenialNames[] = {{DenialMode::kStatus403, "status"},
                                                           {DenialMode::kRefusal, "refusal"}};

}  // namespace

SimProfile SimProfile::Default() {
  return SimProfile{};
}

SimProfile SimProfile::Fast() {
  SimProfile profile;
  profile.name = "fast";
  profile.prefill_tokens_per_s = 0;
  profile.decode_step_ms = 0;
  profile.decode_step_per_seq_ms = 0;
  profile.max_running = 1 << 30;
  profile.kv_budget_tokens = int64_t{1} << 50;
  profile.queue_limit = 1 << 30;
  profile.retrieval_ms = 0;
  profile.identity_ms = 0;
  profile.tool_latency_ms = 0;
  return profile;
}

std::optional<SimProfile> LoadSimProfile(const std::string& name_or_path,
                                         manifest::Diagnostics& diagnostics) {
  if (name_or_path == "default") return SimProfile::Default();
  if (name_or_path == "fast") return SimProfile::Fast();
  Result<std::string> text = ReadFile(name_or_path, manifest::kMaxManifestBytes);
  if (!text.ok()) {
    diagnostics.Error({name_or_path, 0, 0}, text.status().code() == Status::Code::kNotFound
                                                ? "sim profile not found"
                                                : ReadFailure(text.status(), name_or_path));
    return std::nullopt;
  }
  const size_t errors_before = diagnostics.size();
  manifest::YamlFile file(name_or_path, diagnostics);
  std::optional<YAML::Node> root = file.Parse(*text);
  if (!root) return std::nullopt;
  SimProfile p;
  p.name = name_or_path;
  MapReader map(file, *root, "sim profile");
  p.prefill_tokens_per_s = map.Number("prefill_tokens_per_s", Need::kOptional, kNonNegative)
                               .value_or(p.prefill_tokens_per_s);
  p.decode_step_ms =
      map.Number("decode_step_ms", Need::kOptional, kNonNegative).value_or(p.decode_step_ms);
  p.decode_step_per_seq_ms = map.Number("decode_step_per_seq_ms", Need::kOptional, kNonNegative)
                                 .value_or(p.decode_step_per_seq_ms);
  p.max_running = map.Integer("max_running", Need::kOptional, {.min = 1}).value_or(p.max_running);
  p.kv_budget_tokens =
      map.Integer("kv_budget_tokens", Need::kOptional, {.min = 1}).value_or(p.kv_budget_tokens);
  p.prefix_cache_tokens =
      map.Integer("prefix_cache_tokens", Need::kOptional, {.min = 0, .max = int64_t{1} << 40})
          .value_or(p.prefix_cache_tokens);
  p.queue_limit = map.Integer("queue_limit", Need::kOptional, kNonNegative).value_or(p.queue_limit);
  p.queue_timeout_ms =
      map.Number("queue_timeout_ms", Need::kOptional, kPositive).value_or(p.queue_timeout_ms);
  p.shed_status =
      map.Integer("shed_status", Need::kOptional, {.min = 429, .max = 503}).value_or(p.shed_status);
  if (p.shed_status != 429 && p.shed_status != 503)
    file.Error(map.Get("shed_status"),
               "'shed_status' must be 429 or 503, got " + std::to_string(p.shed_status));
  p.retry_after_s =
      map.Number("retry_after_s", Need::kOptional, kNonNegative).value_or(p.retry_after_s);
  p.retrieval_ms =
      map.Number("retrieval_ms", Need::kOptional, kNonNegative).value_or(p.retrieval_ms);
  p.identity_ms = map.Number("identity_ms", Need::kOptional, kNonNegative).value_or(p.identity_ms);
  p.tool_latency_ms =
      map.Number("tool_latency_ms", Need::kOptional, kNonNegative).value_or(p.tool_latency_ms);
  p.tool_timeout_ms =
      map.Number("tool_timeout_ms", Need::kOptional, kPositive).value_or(p.tool_timeout_ms);
  p.denial = map.Enum("denial", kDenialNames).value_or(p.denial);
  p.fault = map.String("fault").value_or("");
  if (std::optional<std::string> tokenizer = map.String("tokenizer")) {
    p.tokenizer = ResolveRelativeTo(name_or_path, *tokenizer);
    if (!IsRegularFile(p.tokenizer))
      file.Error(map.Get("tokenizer"), "tokenizer file not found: " + p.tokenizer);
  }
  map.Finish();
  if (diagnostics.size() != errors_before) return std::nullopt;
  return p;
}

}  // namespace stagegate::sim

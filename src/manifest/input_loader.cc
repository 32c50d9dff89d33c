// Reads a scenario's `input` section (what a run sends: the corpus, synthetic prompts, a dataset
// or a trace) into InputSpec, and the file paths a scenario names.

#include "manifest/input_loader.h"

#include "base/files.h"
#include "base/strings.h"

namespace stagegate::manifest {

namespace {

// A prompt or answer length: a larger one is a prompt no memory holds.
constexpr Range kTokensRange{.min = 0, .max = 1e6, .min_exclusive = true};

// {mean, std}, the mean within `range`.
std::optional<TokenDistribution> ReadDistribution(MapReader& parent, const std::string& key,
                                                  Range range) {
  YAML::Node node = parent.Get(key);
  if (!node.IsDefined()) return std::nullopt;
  MapReader map(parent.file(), node, "'" + key + "'");
  TokenDistribution tokens;
  tokens.mean = map.Number("mean", Need::kRequired, range).value_or(1);
  tokens.std = map.Number("std", Need::kOptional, {.min = 0, .max = 1e6}).value_or(0);
  map.Finish();
  return tokens;
}

std::optional<TokenDistribution> ReadTokens(MapReader& parent, const std::string& key) {
  return ReadDistribution(parent, key, kTokensRange);
}

// `input.sessions`. Turn counts and follow-up lengths are drawn for synthetic sessions only: a
// corpus task's turns are its own prompt and follow-ups.
SessionSpec ReadSessions(const YamlFile& file, const YAML::Node& node, InputSource source) {
  MapReader map(file, node, "'sessions'");
  SessionSpec sessions{.pos = map.pos()};
  sessions.turns = ReadDistribution(map, "turns", {.min = 1, .max = 1000});
  sessions.think_ms = ReadDistribution(map, "think_time_ms", {.min = 0, .max = 3'600'000})
                          .value_or(TokenDistribution{0, 0});
  sessions.follow_up_tokens = ReadTokens(map, "follow_up_tokens");
  if (source == InputSource::kSynthetic && !sessions.turns)
    file.Error(map.pos(), "'sessions' of a synthetic source needs 'turns'");
  if (source == InputSource::kCorpus)
    for (const char* key : {"turns", "follow_up_tokens"})
      if (map.Get(key).IsDefined())
        file.Error(map.Get(key), std::string("'") + key +
                                     "' applies only to source synthetic: a corpus task's turns "
                                     "are its prompt and its 'follow_ups'");
  if (source == InputSource::kDataset || source == InputSource::kTrace)
    file.Error(map.pos(), "'sessions' applies to a synthetic or corpus source, not a " +
                              std::string(NameOf(source, kInputSourceNames)));
  map.Finish();
  return sessions;
}

// The dataset keys of `input`, which only a dataset source takes. The file itself is read by the
// runner (load/dataset.h), which reports its lines.
void ReadDatasetInput(MapReader& map, InputSpec& input) {
  const YamlFile& file = map.file();
  if (input.source == InputSource::kTrace) {
    input.trace = ReadPath(map, "path");
    if (input.trace.empty()) file.Error(map.pos(), "input: a trace source needs 'path'");
    input.block_tokens =
        map.Integer("block_tokens", Need::kOptional, {.min = 1, .max = 1e6}).value_or(512);
  } else {
    input.dataset = ReadPath(map, "path");
    if (map.Get("block_tokens").IsDefined())
      file.Error(map.Get("block_tokens"), "'block_tokens' applies only to source trace");
  }
  YAML::Node format = map.Get("format");
  input.dataset_format = map.String("format").value_or("");
  if (format.IsDefined() && input.dataset_format != "jsonl" && input.dataset_format != "sharegpt" &&
      !input.dataset_format.empty())
    file.Error(format, "'format' must be jsonl or sharegpt, got '" + input.dataset_format + "'" +
                           DidYouMean(input.dataset_format, {"jsonl", "sharegpt"}));
  constexpr Range kTokens{.min = 1, .max = 1e7};
  input.min_tokens = map.Integer("min_tokens", Need::kOptional, kTokens);
  input.max_tokens = map.Integer("max_tokens", Need::kOptional, kTokens);
  if (input.min_tokens && input.max_tokens && *input.min_tokens > *input.max_tokens)
    file.Error(map.Get("min_tokens"), "'min_tokens' is above 'max_tokens'");
  if (input.source == InputSource::kDataset) {
    if (input.dataset.empty()) file.Error(map.pos(), "input: a dataset source needs 'path'");
    return;
  }
  for (const char* key : {"path", "format", "min_tokens", "max_tokens"})
    if (map.Get(key).IsDefined() &&
        (input.source != InputSource::kTrace || key != std::string("path")))
      file.Error(map.Get(key), std::string("'") + key + "' applies only to source dataset" +
                                   (key == std::string("path") ? " or trace" : ""));
}

// input.shared_prefix: {count, tokens, share}, of a synthetic source.
std::optional<SharedPrefixSpec> ReadSharedPrefix(const YamlFile& file, const YAML::Node& node,
                                                 InputSource source) {
  MapReader map(file, node, "shared_prefix");
  if (!map.valid()) return std::nullopt;
  if (source != InputSource::kSynthetic)
    file.Error(node, "'shared_prefix' applies only to source synthetic");
  SharedPrefixSpec spec;
  spec.count = map.Integer("count", Need::kRequired, {.min = 1, .max = 1e6}).value_or(1);
  spec.tokens = map.Integer("tokens", Need::kRequired, {.min = 1, .max = 1e6}).value_or(1);
  spec.share = map.Number("share", Need::kOptional, {.min = 0, .max = 1}).value_or(1);
  map.Finish();
  return spec;
}

}  // namespace

PathRef ReadPath(MapReader& map, const std::string& key) {
  PathRef ref;
  YAML::Node node = map.Get(key);
  if (!node.IsDefined()) return ref;
  ref.pos = map.file().Pos(node);
  std::optional<std::string> path = ReadString(map.file(), node, "'" + key + "'");
  if (!path) return ref;
  ref.written = *path;
  ref.resolved = ResolveRelativeTo(map.file().path(), *path);
  return ref;
}

InputSpec ReadInput(const YamlFile& file, const YAML::Node& node) {
  InputSpec input;
  MapReader map(file, node, "input");
  input.source = map.Enum("source", kInputSourceNames).value_or(InputSource::kCorpus);
  input.input_tokens = ReadTokens(map, "input_tokens");
  input.output_tokens = ReadTokens(map, "output_tokens");
  if (input.source == InputSource::kSynthetic) {
    if (!input.input_tokens)
      file.Error(map.pos(), "input: a synthetic source needs 'input_tokens'");
    if (!input.output_tokens)
      file.Error(map.pos(), "input: a synthetic source needs 'output_tokens'");
  } else if (input.input_tokens) {
    file.Error(map.Get("input_tokens"), "'input_tokens' applies only to source synthetic");
  }
  if (input.source == InputSource::kTrace && input.output_tokens)
    file.Error(map.Get("output_tokens"),
               "'output_tokens' does not apply to source trace: each entry gives its own");
  ReadDatasetInput(map, input);
  input.tokenizer = ReadPath(map, "tokenizer");
  YAML::Node sessions = map.Get("sessions");
  if (sessions.IsDefined()) input.sessions = ReadSessions(file, sessions, input.source);
  YAML::Node prefix = map.Get("shared_prefix");
  if (prefix.IsDefined()) input.shared_prefix = ReadSharedPrefix(file, prefix, input.source);
  YAML::Node extra = map.Get("extra_body");
  if (extra.IsDefined()) {
    if (!extra.IsMap())
      file.Error(extra, "'extra_body' must be a mapping of JSON fields, got " + Describe(extra));
    else
      input.extra_body = ReadJson(file, extra);
  }
  map.Finish();
  return input;
}

}  // namespace stagegate::manifest

#include "deploy/k8s_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"

namespace stagegate::deploy {

namespace {

namespace fs = std::filesystem;
using namespace manifest;  // NOLINT: the plan reads the manifest model throughout

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// Every URL of the scenario that its files hold.
std::vector<std::string> ScenarioUrls(const Scenario& s) {
  std::vector<std::string> urls = {s.target.base_url, s.target.metrics_url, s.telemetry.dcgm_url};
  for (const Stage& stage : s.stages)
    if (stage.base_url) urls.push_back(*stage.base_url);
  return urls;
}

// A DNS-1123 label made from a scenario's name: "Service Desk (EU)" -> "service-desk-eu".
std::string DnsLabelFrom(const std::string& text, size_t max_length) {
  std::string label;
  for (char c : text) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (IsLowerAlnum(lower))
      label += lower;
    else if (!label.empty() && label.back() != '-')
      label += '-';
  }
  if (label.size() > max_length) label.resize(max_length);
  while (!label.empty() && label.back() == '-')
    label.pop_back();
  return label.empty() ? "stagegate" : label;
}

// "1202-100000": the start's month, day and time in UTC, to tell one run's objects from another's.
std::string StartSuffix(int64_t unix_s) {
  return FormatUtc(unix_s, "%m%d-%H%M%S");
}

fs::path Absolute(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  return (error ? path : absolute).lexically_normal();
}

// The files a run reads: the scenario, every file of its corpus folder (names starting with '.'
// left out), its rubric, and the files its input and sim profile name. The scenario first.
Result<std::vector<fs::path>> BundlePaths(const Scenario& s) {
  std::vector<fs::path> paths = {Absolute(s.file)};
  if (!s.corpus.empty()) {
    std::vector<fs::path> corpus;
    std::error_code error;
    for (fs::recursive_directory_iterator it(s.corpus.resolved, error), end; !error && it != end;
         it.increment(error)) {
      if (it->path().filename().string().starts_with(".")) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) corpus.push_back(Absolute(it->path()));
    }
    if (error) return Status::IoError(s.corpus.resolved + ": " + error.message());
    std::sort(corpus.begin(), corpus.end());
    paths.insert(paths.end(), corpus.begin(), corpus.end());
  }
  for (const PathRef* ref : {&s.rubric, &s.input.dataset, &s.input.trace, &s.input.tokenizer})
    if (!ref->empty()) paths.push_back(Absolute(ref->resolved));
  if (s.target.kind == TargetKind::kSim && s.target.sim_profile != "default" &&
      s.target.sim_profile != "fast")
    paths.push_back(Absolute(s.target.sim_profile));
  std::vector<fs::path> unique;
  for (const fs::path& path : paths)
    if (std::find(unique.begin(), unique.end(), path) == unique.end()) unique.push_back(path);
  return unique;
}

// The deepest folder that holds every path: the bundle is laid out relative to it, so that the
// scenario's relative paths ("../corpus/service-desk") resolve the same way in the pod.
fs::path CommonFolder(const std::vector<fs::path>& paths) {
  fs::path common = paths.front().parent_path();
  for (const fs::path& path : paths) {
    const fs::path folder = path.parent_path();
    fs::path shared;
    for (auto a = common.begin(), b = folder.begin();
         a != common.end() && b != folder.end() && *a == *b; ++a, ++b)
      shared /= *a;
    common = shared;
  }
  return common;
}

// "corpus/service-desk/tasks/hr.yaml" -> "corpus.service-desk.tasks.hr.yaml"; a ConfigMap key
// holds only [-._a-zA-Z0-9], at most 253 of them. A clash gets a number.
std::string ConfigMapKey(const std::string& relative, const std::set<std::string>& taken) {
  std::string key;
  for (char c : relative) {
    const bool allowed =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    key += c == '/' ? '.' : allowed && static_cast<unsigned char>(c) < 0x80 ? c : '_';
  }
  if (key.size() > 240) key.resize(240);
  std::string unique = key;
  for (int n = 2; taken.count(unique) || unique == "." || unique == ".."; ++n)
    unique = key + "-" + std::to_string(n);
  return unique;
}

// Every file of `paths`, relative to `common`, as the ConfigMap holds it.
Result<std::vector<BundleFile>> ReadBundleFiles(const std::vector<fs::path>& paths,
                                                const fs::path& common) {
  std::vector<BundleFile> files;
  std::set<std::string> keys;
  size_t total = 0;
  for (const fs::path& path : paths) {
    Result<std::string> contents = ReadFile(path.string(), kConfigMapBytes);
    if (!contents.ok() && contents.status().code() == Status::Code::kInvalidInput)
      return Status::InvalidInput(path.string() +
                                  ": larger than the 1 MiB a ConfigMap holds: build the files into "
                                  "the image and use --in-image");
    if (!contents.ok()) return contents.status();
    if (std::optional<size_t> bad = FirstInvalidUtf8(*contents))
      return Status::InvalidInput(path.string() + ": not UTF-8 text (byte " + std::to_string(*bad) +
                                  "); the bundle ConfigMap holds text only: build the files into "
                                  "the image and use --in-image");
    BundleFile file;
    file.path = path.lexically_relative(common).generic_string();
    file.key = ConfigMapKey(file.path, keys);
    file.contents = std::move(*contents);
    keys.insert(file.key);
    total += file.key.size() + file.contents.size();
    files.push_back(std::move(file));
  }
  if (total > kConfigMapBytes)
    return Status::InvalidInput(
        "the scenario's " + std::to_string(files.size()) + " files come to " +
        std::to_string(total) + " bytes, over the 1 MiB (" + std::to_string(kConfigMapBytes) +
        " bytes) a ConfigMap holds: build them into the image and use --in-image");
  return files;
}

// The variables a run reads secrets from: the target's API key, and the personas' tokens when a
// stage or probe sends them. Against the sim each persona has a token of its own to fall back on.
std::vector<SecretEnv> Secrets(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  std::vector<SecretEnv> secrets;
  if (!s.target.api_key_env.empty()) secrets.push_back({.name = s.target.api_key_env});
  bool persona_tokens = false;
  for (const EffectiveStage& stage : EffectiveStages(s))
    persona_tokens = persona_tokens || stage.persona_credentials;
  for (const AccessDenialProbe& probe : s.faults.access_denial)
    persona_tokens = persona_tokens || probe.credentials == Credentials::kPersona;
  if (persona_tokens && bundle.corpus)
    for (const Persona& persona : bundle.corpus->personas) {
      const bool listed = std::any_of(secrets.begin(), secrets.end(), [&](const SecretEnv& e) {
        return e.name == persona.token_env;
      });
      if (!persona.token_env.empty() && !listed)
        secrets.push_back(
            {.name = persona.token_env, .optional = s.target.kind == TargetKind::kSim});
    }
  return secrets;
}

}  // namespace

bool IsDnsLabel(const std::string& text, size_t max_length) {
  if (text.empty() || text.size() > max_length) return false;
  if (!IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

std::vector<std::string> PlanProblems(const manifest::Bundle& bundle, const K8sPlan& plan,
                                      bool in_image, const std::string& file) {
  std::vector<std::string> problems;
  if (plan.shards > 1 && bundle.scenario.target.kind == TargetKind::kSim && plan.target_url.empty())
    problems.push_back(file +
                       " targets the built-in sim: give --target-url, the one application "
                       "every shard sends to (e.g. a Service running `stagegate sim`)");
  // The ConfigMap carries the scenario's files as they are: a URL's password there would sit
  // in the cluster's store as it does in the Job's command.
  if (!in_image)
    for (const std::string& url : ScenarioUrls(bundle.scenario))
      if (UrlWithoutUserinfo(url) != url)
        problems.push_back(file + " has a URL with a user or password (" + UrlWithoutUserinfo(url) +
                           "), which the ConfigMap would hold: give the key through the "
                           "target's api_key_env, which the Jobs take from a Secret");
  return problems;
}

Result<BundleLayout> LayOutBundle(const manifest::Scenario& scenario, bool in_image) {
  Result<std::vector<fs::path>> paths = BundlePaths(scenario);
  if (!paths.ok()) return paths.status();
  const fs::path common = CommonFolder(*paths);
  const std::string relative = paths->front().lexically_relative(common).generic_string();
  BundleLayout layout;
  if (in_image) {
    layout.scenario = "/work/" + relative;
    return layout;
  }
  Result<std::vector<BundleFile>> files = ReadBundleFiles(*paths, common);
  if (!files.ok()) return files.status();
  layout.files = std::move(*files);
  layout.scenario = std::string(kBundleMount) + "/" + relative;
  return layout;
}

void CompletePlan(const manifest::Bundle& bundle, BundleLayout layout, int64_t now_unix_ms,
                  K8sPlan& plan) {
  plan.start_unix_s = (now_unix_ms + plan.start_in_s * 1000 + 999) / 1000;
  if (plan.name.empty())
    plan.name = DnsLabelFrom(bundle.scenario.name, kMaxNameLength - 12) + "-" +
                StartSuffix(plan.start_unix_s);
  plan.scenario = std::move(layout.scenario);
  plan.files = std::move(layout.files);
  plan.secrets = Secrets(bundle);
  plan.workers = std::max<int64_t>(1, static_cast<int64_t>(std::floor(plan.cpu)));
}

}  // namespace stagegate::deploy

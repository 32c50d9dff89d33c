// `stagegate k8s SCENARIO --shards N --image IMAGE`: prints the Kubernetes objects that run the
// scenario as N shards starting at the same instant, one pod each, and merge their results.

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <set>

#include <re2/re2.h>

#include "base/clock.h"
#include "base/files.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "deploy/k8s_manifests.h"
#include "manifest/bundle.h"
#include "scenario/shard_plan.h"
#include "scenario/stage_requests.h"
#include "sim/profile.h"

namespace stagegate::cli {
using deploy::BundleFile;
using deploy::K8sManifests;
using deploy::K8sPlan;
using deploy::kBundleMount;
using deploy::MergedDir;
using deploy::Rfc3339Utc;
using deploy::SecretEnv;

namespace {

namespace fs = std::filesystem;
using namespace manifest;  // NOLINT: a command file reads the manifest model throughout

// What etcd stores of one object; a ConfigMap's keys and values must fit in it.
constexpr size_t kConfigMapBytes = size_t{1} << 20;
// "<name>-results", the longest object name, and the pods' host names stay within 63.
constexpr size_t kMaxNameLength = 50;

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool IsDnsLabel(const std::string& text, size_t max_length) {
  if (text.empty() || text.size() > max_length) return false;
  if (!IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

CLI::Validator DnsLabel(size_t max_length) {
  return CLI::Validator(
      [max_length](std::string& text) -> std::string {
        if (IsDnsLabel(text, max_length)) return "";
        return "must be a DNS-1123 label: at most " + std::to_string(max_length) +
               " of a-z, 0-9 and '-', starting and ending with a letter or digit; got '" + text +
               "'";
      },
      "NAME");
}

// An image reference as Kubernetes and the registries read it (the grammar of
// distribution/reference): [host[:port]/]path[:tag][@digest], the path in lower case, the name at
// most 255 characters. Anything else is refused here rather than by the cluster, after the Jobs
// were created.
CLI::Validator ImageReference() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const RE2 grammar(
            R"((?:((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|)"
            R"([a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?)/)?)"
            R"(([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*))"
            R"((?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?)"
            R"((?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?)");
        std::string domain, path;
        if (text.size() <= 4096 && RE2::FullMatch(text, grammar, &domain, &path)) {
          const size_t name = domain.size() + (domain.empty() ? 0 : 1) + path.size();
          if (name <= 255) return "";
          return "must be an image reference whose name is at most 255 characters, got " +
                 std::to_string(name);
        }
        return "must be an image reference such as registry.example/stagegate:0.1 (a path in "
               "lower case, then :tag or @sha256:digest); got '" +
               ShownText(text, 80) + "'";
      },
      "IMAGE");
}

// Every URL of the scenario that its files hold.
std::vector<std::string> ScenarioUrls(const Scenario& s) {
  std::vector<std::string> urls = {s.target.base_url, s.target.metrics_url, s.telemetry.dcgm_url};
  for (const Stage& stage : s.stages)
    if (stage.base_url) urls.push_back(*stage.base_url);
  return urls;
}

CLI::Validator Quantity() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        size_t digits = 0;
        while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
          ++digits;
        static const std::set<std::string> kSuffixes = {"",  "Ki", "Mi", "Gi", "Ti", "Pi",
                                                        "k", "M",  "G",  "T",  "P"};
        if (digits > 0 && text[0] != '0' && kSuffixes.count(text.substr(digits))) return "";
        return "must be a whole number of bytes with an optional suffix (Ki, Mi, Gi, Ti, k, M, "
               "G, T...), e.g. 1Gi; got '" +
               text + "'";
      },
      "SIZE");
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

struct Layout {
  std::vector<BundleFile> files;  // empty when the image carries the bundle
  std::string scenario;           // the scenario's path relative to the common folder
};

Result<Layout> LayOut(const Scenario& scenario, bool read_files) {
  Result<std::vector<fs::path>> paths = BundlePaths(scenario);
  if (!paths.ok()) return paths.status();
  const fs::path common = CommonFolder(*paths);
  Layout layout;
  layout.scenario = paths->front().lexically_relative(common).generic_string();
  if (!read_files) return layout;
  std::set<std::string> keys;
  size_t total = 0;
  for (const fs::path& path : *paths) {
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
    layout.files.push_back(std::move(file));
  }
  if (total > kConfigMapBytes)
    return Status::InvalidInput(
        "the scenario's " + std::to_string(layout.files.size()) + " files come to " +
        std::to_string(total) + " bytes, over the 1 MiB (" + std::to_string(kConfigMapBytes) +
        " bytes) a ConfigMap holds: build them into the image and use --in-image");
  return layout;
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

// On stderr, so that stdout pipes into kubectl: when the shards start, the Secret they read,
// and how to wait for the merge.
void PrintNextSteps(console::Console& console, const K8sPlan& plan, const std::string& scenario) {
  const std::string in_namespace = plan.ns.empty() ? "" : " -n " + plan.ns;
  console.Error("stagegate k8s: " + std::to_string(plan.shards) + " shards of " + scenario +
                " start at " + Rfc3339Utc(plan.start_unix_s) + " (in " +
                std::to_string(plan.start_in_s) + " s): apply before then");
  if (!plan.secrets.empty()) {
    std::vector<std::string> names, literals;
    bool required = false;
    for (const SecretEnv& secret : plan.secrets) {
      names.push_back(secret.name);
      literals.push_back("--from-literal=" + secret.name + "=...");
      required = required || !secret.optional;
    }
    console.Error("stagegate k8s: the shards read " + Join(names, ", ") + " from the Secret " +
                  plan.name + "-secrets; no value is in these manifests. " +
                  (required ? "Create it first:"
                            : "Against the sim each persona has a token of its own; to send "
                              "others, create it first:"));
    console.Error("  kubectl create secret generic" + in_namespace + " " + plan.name + "-secrets " +
                  Join(literals, " "));
  }
  console.Error("stagegate k8s: then kubectl wait" + in_namespace +
                " --for=condition=complete job/" + plan.name +
                "-merge --timeout=" + std::to_string(plan.start_in_s + plan.merge_timeout_s + 600) +
                "s; the merged run is in " + MergedDir() + " on the claim " + plan.name +
                "-results (docs/kubernetes.md)");
}

class K8sCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("scenario", scenario_, "The scenario file")->required();
    app.add_option("--shards", plan_.shards, "Pods of the Indexed Job; each sends 1/N of the load")
        ->required()
        ->check(Between(1, 1000));
    app.add_option("--image", plan_.image,
                   "Container image with /usr/local/bin/stagegate (see the Dockerfile)")
        ->required()
        ->check(ImageReference());
    app.add_option("--namespace", plan_.ns, "Namespace of every object (default: kubectl's)")
        ->check(DnsLabel(63));
    app.add_option("--name", plan_.name,
                   "Name of the shards' Job, and prefix of the other objects' names (default: "
                   "the scenario's name and the start time, e.g. demo-1202-100000)")
        ->check(DnsLabel(kMaxNameLength));
    app.add_option("--start-in", plan_.start_in_s,
                   "Seconds from now to the start every shard waits for; long enough to pull the "
                   "image and schedule the pods")
        ->capture_default_str()
        ->check(Between(0, 7 * 86400));
    app.add_option("--cpu", plan_.cpu, "Cores each shard pod requests (and is limited to)")
        ->capture_default_str()
        ->check(Between(0.1, 1024));
    app.add_option("--memory", plan_.memory_mib, "MiB each pod requests (and is limited to)")
        ->capture_default_str()
        ->check(Between(64, 1 << 22));
    app.add_option("--volume-size", plan_.volume_size, "Size of the results volume claim")
        ->capture_default_str()
        ->check(Quantity());
    app.add_option("--storage-class", plan_.storage_class,
                   "Storage class of the results volume, one that offers ReadWriteMany (default: "
                   "the cluster's)");
    app.add_option("--merge-timeout", plan_.merge_timeout_s,
                   "Seconds after the start that the merge waits for every shard's run.json")
        ->capture_default_str()
        ->check(Between(60, 7 * 86400));
    app.add_option("--target-url", plan_.target_url,
                   "The application every shard sends to (http://host:port), instead of the "
                   "scenario's target; needed when that is the built-in sim. It is written "
                   "into every Job: a key goes in the scenario's api_key_env (a Secret), never "
                   "in the URL")
        ->check(BaseUrlToKeep());
    app.add_flag("--in-image", in_image_,
                 "The image carries the scenario and its files under /work, laid out as on disk "
                 "(as the Dockerfile copies scenarios/, corpus/ and rubrics/): no ConfigMap");
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    scenario::InputFiles input;
    std::optional<Bundle> bundle = LoadBundleAsRunWill(scenario_, console, input);
    if (!bundle) return ExitCode::kInvalidInput;
    // What every shard would refuse before sending anything, refused now.
    std::vector<std::string> problems;
    if (plan_.shards > 1) problems = scenario::ShardProblems(*bundle, plan_.shards);
    if (plan_.shards > 1 && bundle->scenario.target.kind == TargetKind::kSim &&
        plan_.target_url.empty())
      problems.push_back("stagegate k8s: " + scenario_ +
                         " targets the built-in sim: give --target-url, the one application "
                         "every shard sends to (e.g. a Service running `stagegate sim`)");
    // The ConfigMap carries the scenario's files as they are: a URL's password there would sit
    // in the cluster's store as it does in the Job's command.
    if (!in_image_)
      for (const std::string& url : ScenarioUrls(bundle->scenario))
        if (UrlWithoutUserinfo(url) != url)
          problems.push_back("stagegate k8s: " + scenario_ +
                             " has a URL with a user or password (" + UrlWithoutUserinfo(url) +
                             "), which the ConfigMap would hold: give the key through the "
                             "target's api_key_env, which the Jobs take from a Secret");
    for (const std::string& problem : problems)
      console.Error(problem);
    if (!problems.empty()) return ExitCode::kInvalidInput;
    Result<Layout> layout = LayOut(bundle->scenario, !in_image_);
    if (!layout.ok()) {
      for (const std::string& line : Split(layout.status().message(), '\n'))
        console.Error("stagegate k8s: " + line);
      return layout.status().code() == Status::Code::kInvalidInput ? ExitCode::kInvalidInput
                                                                   : ExitCode::kRuntimeFailure;
    }

    // A whole second, so that every shard's --start-at reads the same in both forms.
    plan_.start_unix_s = (WallUnixMs() + plan_.start_in_s * 1000 + 999) / 1000;
    if (plan_.name.empty())
      plan_.name = DnsLabelFrom(bundle->scenario.name, kMaxNameLength - 12) + "-" +
                   StartSuffix(plan_.start_unix_s);
    plan_.scenario = std::string(in_image_ ? "/work" : kBundleMount) + "/" + layout->scenario;
    plan_.files = std::move(layout->files);
    plan_.secrets = Secrets(*bundle);
    plan_.workers = std::max<int64_t>(1, static_cast<int64_t>(std::floor(plan_.cpu)));
    std::string manifests = K8sManifests(plan_);
    manifests.pop_back();  // Line() ends the last line
    console.Line(manifests);

    PrintNextSteps(console, plan_, bundle->scenario.name);
    return ExitCode::kOk;
  }

 private:
  std::string scenario_;
  bool in_image_ = false;
  K8sPlan plan_;
};

}  // namespace

std::unique_ptr<Command> MakeK8sCommand() {
  return std::make_unique<K8sCommand>();
}

}  // namespace stagegate::cli

#include "deploy/k8s_manifests.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cctype>
#include <cmath>
#include <ctime>
#include <string_view>

#include "base/clock.h"
#include "base/strings.h"

namespace stagegate::deploy {

namespace {

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A string both YAML 1.1 (which kubectl reads) and YAML 1.2 take for a string when it is written
// bare: it starts with a letter or '/', so it is no number, and it is none of the words either
// version reads as a boolean or null. yaml-cpp would write "123" or "true" bare.
bool IsPlainSafe(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '/'))
    return false;
  if (text.back() == ':') return false;  // a trailing ':' would start a mapping
  for (char c : text)
    if (!IsAsciiAlnum(c) && c != '-' && c != '.' && c != '_' && c != '/' && c != ':' && c != '@')
      return false;
  std::string lower;
  for (char c : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::array<std::string_view, 9> kWords = {"y",   "n",    "yes",   "no",  "on",
                                                             "off", "true", "false", "null"};
  for (std::string_view word : kWords)
    if (lower == word) return false;
  return true;
}

// Whether a literal block (|) gives `text` back byte for byte. yaml-cpp writes no chomping or
// indentation indicator, so the text must end in exactly one line break and must not start with
// a blank; YAML 1.1 also breaks lines at NEL, LS and PS, and drops a byte-order mark.
bool IsLiteralSafe(std::string_view text) {
  if (text.size() < 2 || text.back() != '\n' || text[text.size() - 2] == '\n') return false;
  if (text[0] == ' ' || text[0] == '\t' || text[0] == '\n') return false;
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') return false;
  for (std::string_view special :
       {"\x7f", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xef\xbb\xbf"})
    if (text.find(special) != std::string_view::npos) return false;
  return true;
}

void Str(YAML::Emitter& e, const std::string& text) {
  if (IsPlainSafe(text))
    e << text;
  else
    e << YAML::DoubleQuoted << text;
}

// A file's contents or a script: a literal block when that is exact, else a quoted string.
void Text(YAML::Emitter& e, const std::string& text) {
  if (IsLiteralSafe(text))
    e << YAML::Literal << text;
  else
    e << YAML::DoubleQuoted << text;
}

void Entry(YAML::Emitter& e, const char* key, const std::string& value) {
  e << YAML::Key << key << YAML::Value;
  Str(e, value);
}

void Entry(YAML::Emitter& e, const char* key, int64_t value) {
  e << YAML::Key << key << YAML::Value << value;
}

// Every object and pod carries these; the pods' anti-affinity and `kubectl -l` select on them.
void Labels(YAML::Emitter& e, const K8sPlan& plan, const std::string& component) {
  e << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  Entry(e, "app.kubernetes.io/name", "stagegate");
  Entry(e, "app.kubernetes.io/instance", plan.name);
  Entry(e, "app.kubernetes.io/component", component);
  e << YAML::EndMap;
}

void Head(YAML::Emitter& e, const K8sPlan& plan, const char* api_version, const char* kind,
          const std::string& name, const std::string& component) {
  e << YAML::BeginMap;
  Entry(e, "apiVersion", api_version);
  Entry(e, "kind", kind);
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  Entry(e, "name", name);
  if (!plan.ns.empty()) Entry(e, "namespace", plan.ns);
  Labels(e, plan, component);
  e << YAML::EndMap;
}

std::string Cpu(double cores) {
  const double millicores = std::round(cores * 1000);
  if (std::fmod(millicores, 1000) == 0) return std::to_string(static_cast<int64_t>(cores));
  return std::to_string(static_cast<int64_t>(millicores)) + "m";
}

void Resources(YAML::Emitter& e, double cpu, int64_t memory_mib) {
  // Requests equal to limits: the pod's QoS class is Guaranteed, so with the kubelet's static
  // CPU manager policy a whole number of cores is the shard's alone.
  e << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  for (const char* bound : {"requests", "limits"}) {
    e << YAML::Key << bound << YAML::Value << YAML::BeginMap;
    Entry(e, "cpu", Cpu(cpu));
    Entry(e, "memory", std::to_string(memory_mib) + "Mi");
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void Mount(YAML::Emitter& e, const char* name, const char* path, bool read_only) {
  e << YAML::BeginMap;
  Entry(e, "name", name);
  Entry(e, "mountPath", path);
  if (read_only) e << YAML::Key << "readOnly" << YAML::Value << true;
  e << YAML::EndMap;
}

void ResultsVolume(YAML::Emitter& e, const K8sPlan& plan) {
  e << YAML::BeginMap;
  Entry(e, "name", "results");
  e << YAML::Key << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap;
  Entry(e, "claimName", plan.name + "-results");
  e << YAML::EndMap << YAML::EndMap;
}

void ShellCommand(YAML::Emitter& e, const std::string& script) {
  e << YAML::Key << "command" << YAML::Value << YAML::BeginSeq << "/bin/sh"
    << "-c";
  Text(e, script);
  e << YAML::EndSeq;
}

std::string ConfigMapDoc(const K8sPlan& plan) {
  YAML::Emitter e;
  Head(e, plan, "v1", "ConfigMap", plan.name + "-bundle", "bundle");
  e << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
  for (const BundleFile& file : plan.files) {
    e << YAML::Key;
    Str(e, file.key);
    e << YAML::Value;
    Text(e, file.contents);
  }
  e << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

std::string VolumeClaimDoc(const K8sPlan& plan) {
  YAML::Emitter e;
  Head(e, plan, "v1", "PersistentVolumeClaim", plan.name + "-results", "results");
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // The shards run on different nodes and all write to it.
  e << YAML::Key << "accessModes" << YAML::Value << YAML::Flow << YAML::BeginSeq << "ReadWriteMany"
    << YAML::EndSeq;
  if (!plan.storage_class.empty()) Entry(e, "storageClassName", plan.storage_class);
  e << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "requests"
    << YAML::Value << YAML::BeginMap;
  Entry(e, "storage", plan.volume_size);
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

std::string ShardScript(const K8sPlan& plan) {
  const std::string dir = std::string(kResultsMount) + "/shard-$((JOB_COMPLETION_INDEX + 1))";
  return "dir=" + dir +
         "\n"
         "if [ -e \"$dir/run.json\" ]; then\n"
         "  echo \"stagegate k8s: $dir already holds a run: delete the claim " +
         plan.name + "-results or choose another --name\" >&2\n" +
         "  exit 2\n"
         "fi\n"
         "exec stagegate --db \"$dir/stagegate.db\" run " +
         ShellWord(plan.scenario) + " --shard job/" + std::to_string(plan.shards) + " --start-at " +
         Rfc3339Utc(plan.start_unix_s) +
         (plan.target_url.empty() ? "" : " --target-url " + ShellWord(plan.target_url)) +
         " --workers " + std::to_string(plan.workers) + " --out \"$dir\"\n";
}

void ShardPodSpec(YAML::Emitter& e, const K8sPlan& plan) {
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // A retried pod would send its slice of the schedule late, after the others.
  Entry(e, "restartPolicy", "Never");
  e << YAML::Key << "affinity" << YAML::Value << YAML::BeginMap << YAML::Key << "podAntiAffinity"
    << YAML::Value << YAML::BeginMap;
  // Preferred, not required: a cluster with fewer nodes than shards still runs them all.
  e << YAML::Key << "preferredDuringSchedulingIgnoredDuringExecution" << YAML::Value
    << YAML::BeginSeq << YAML::BeginMap;
  Entry(e, "weight", 100);
  e << YAML::Key << "podAffinityTerm" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "labelSelector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels"
    << YAML::Value << YAML::BeginMap;
  Entry(e, "app.kubernetes.io/instance", plan.name);
  Entry(e, "app.kubernetes.io/component", "shard");
  e << YAML::EndMap << YAML::EndMap;
  Entry(e, "topologyKey", "kubernetes.io/hostname");
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;

  e << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  Entry(e, "name", "shard");
  Entry(e, "image", plan.image);
  ShellCommand(e, ShardScript(plan));
  if (!plan.secrets.empty()) {
    e << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
    for (const SecretEnv& secret : plan.secrets) {
      e << YAML::BeginMap;
      Entry(e, "name", secret.name);
      e << YAML::Key << "valueFrom" << YAML::Value << YAML::BeginMap << YAML::Key << "secretKeyRef"
        << YAML::Value << YAML::BeginMap;
      Entry(e, "name", plan.name + "-secrets");
      Entry(e, "key", secret.name);
      if (secret.optional) e << YAML::Key << "optional" << YAML::Value << true;
      e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  Resources(e, plan.cpu, plan.memory_mib);
  e << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  if (!plan.files.empty()) Mount(e, "bundle", kBundleMount, true);
  Mount(e, "results", kResultsMount, false);
  e << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;

  e << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  if (!plan.files.empty()) {
    e << YAML::BeginMap;
    Entry(e, "name", "bundle");
    e << YAML::Key << "configMap" << YAML::Value << YAML::BeginMap;
    Entry(e, "name", plan.name + "-bundle");
    e << YAML::Key << "items" << YAML::Value << YAML::BeginSeq;
    for (const BundleFile& file : plan.files) {
      e << YAML::BeginMap;
      Entry(e, "key", file.key);
      Entry(e, "path", file.path);
      e << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  }
  ResultsVolume(e, plan);
  e << YAML::EndSeq << YAML::EndMap;
}

void PodLabels(YAML::Emitter& e, const K8sPlan& plan, const std::string& component) {
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  Labels(e, plan, component);
  e << YAML::EndMap;
}

std::string ShardJobDoc(const K8sPlan& plan) {
  YAML::Emitter e;
  Head(e, plan, "batch/v1", "Job", plan.name, "shard");
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // Each pod gets JOB_COMPLETION_INDEX (0 to N-1); `--shard job/N` takes slice index + 1.
  Entry(e, "completionMode", "Indexed");
  Entry(e, "completions", plan.shards);
  Entry(e, "parallelism", plan.shards);
  Entry(e, "backoffLimit", 0);
  // A shard still running when the merge stops waiting is stopped too.
  Entry(e, "activeDeadlineSeconds", plan.start_in_s + plan.merge_timeout_s);
  e << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  PodLabels(e, plan, "shard");
  ShardPodSpec(e, plan);
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

std::string MergeScript(const K8sPlan& plan) {
  const std::string n = std::to_string(plan.shards);
  const std::string results = kResultsMount;
  std::string shards;
  for (int64_t k = 1; k <= plan.shards; ++k)
    shards += " " + ShardDir(k);
  return "if [ -e " + MergedDir() +
         "/run.json ]; then\n"
         "  echo \"stagegate k8s: " +
         MergedDir() + " already holds a merged run: delete the claim " + plan.name +
         "-results or choose another --name\" >&2\n"
         "  exit 2\n"
         "fi\n"
         "# Each shard writes run.json last. Wait until every shard has, or until the deadline.\n"
         "deadline=" +
         std::to_string(plan.start_unix_s + plan.merge_timeout_s) +
         "\n"
         "while :; do\n"
         "  missing=\"\"\n"
         "  k=1\n"
         "  while [ \"$k\" -le " +
         n +
         " ]; do\n"
         "    [ -f \"" +
         results +
         "/shard-$k/run.json\" ] || missing=\"$missing shard-$k\"\n"
         "    k=$((k + 1))\n"
         "  done\n"
         "  [ -z \"$missing\" ] && break\n"
         "  if [ \"$(date +%s)\" -ge \"$deadline\" ]; then\n"
         "    echo \"stagegate k8s: by " +
         Rfc3339Utc(plan.start_unix_s + plan.merge_timeout_s) +
         " these shards had written no run.json:$missing\" >&2\n"
         "    exit 1\n"
         "  fi\n"
         "  sleep 10\n"
         "done\n"
         "exec stagegate --db " +
         MergedDir() + "/stagegate.db merge " + MergedDir() + shards + "\n";
}

std::string MergeJobDoc(const K8sPlan& plan) {
  YAML::Emitter e;
  Head(e, plan, "batch/v1", "Job", plan.name + "-merge", "merge");
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  Entry(e, "backoffLimit", 0);
  e << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  PodLabels(e, plan, "merge");
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  Entry(e, "restartPolicy", "Never");
  e << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  Entry(e, "name", "merge");
  Entry(e, "image", plan.image);
  ShellCommand(e, MergeScript(plan));
  Resources(e, 1, plan.memory_mib);
  e << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  Mount(e, "results", kResultsMount, false);
  e << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  ResultsVolume(e, plan);
  e << YAML::EndSeq << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

}  // namespace

std::string Rfc3339Utc(int64_t unix_s) {
  return FormatUtc(unix_s, "%Y-%m-%dT%H:%M:%SZ");
}

std::string ShardDir(int64_t k) {
  return std::string(kResultsMount) + "/shard-" + std::to_string(k);
}

std::string MergedDir() {
  return std::string(kResultsMount) + "/merged";
}

std::string K8sManifests(const K8sPlan& plan) {
  std::vector<std::string> documents;
  if (!plan.files.empty()) documents.push_back(ConfigMapDoc(plan));
  documents.push_back(VolumeClaimDoc(plan));
  documents.push_back(ShardJobDoc(plan));
  documents.push_back(MergeJobDoc(plan));
  std::string stream;
  for (const std::string& document : documents)
    stream += (stream.empty() ? "" : "---\n") + document + "\n";
  return stream;
}

}  // namespace stagegate::deploy

#pragma once

// The Kubernetes objects of a sharded run (`stagegate k8s`): the bundle ConfigMap, the results
// volume claim, the Indexed Job of the shards and the Job that merges them.

#include <cstdint>
#include <string>
#include <vector>

namespace stagegate::deploy {

/// Where the pods find the bundle's files and write their results.
inline constexpr const char* kBundleMount = "/work/bundle";
inline constexpr const char* kResultsMount = "/results";

/// One file of the bundle ConfigMap.
struct BundleFile {
  std::string key;       // the ConfigMap key: [-._a-zA-Z0-9]+, unique in the bundle
  std::string path;      // where it appears under kBundleMount: relative, no ".." ("a/b.yaml")
  std::string contents;  // valid UTF-8
};

/// An environment variable of the shards taken from the Secret `<name>-secrets`, key `name`.
struct SecretEnv {
  std::string name;
  bool optional = false;  // a shard may run without it (the sim's own persona tokens)
};

/// Everything the manifests depend on; stagegate k8s checks each value before building them.
struct K8sPlan {
  std::string name;               // a DNS-1123 label; every object's name starts with it
  std::string ns;                 // the namespace; "": kubectl's current one
  std::string image;              // holds /usr/local/bin/stagegate (and, with no files, the bundle)
  int64_t shards = 1;             // pods of the Indexed Job
  std::string scenario;           // the scenario's path in the pod
  std::string target_url;         // every shard's --target-url; "": the scenario's target
  std::vector<BundleFile> files;  // empty: no ConfigMap; the image carries the bundle
  std::vector<SecretEnv> secrets;
  int64_t start_unix_s = 0;        // the instant every shard begins its plan
  int64_t start_in_s = 120;        // from now to then
  int64_t merge_timeout_s = 3600;  // from the start, how long the merge waits for the shards
  double cpu = 2;                  // cores a shard pod requests, and its limit
  int64_t memory_mib = 2048;       // memory a shard pod requests, and its limit
  int64_t workers = 2;             // load engine threads of each shard
  std::string volume_size = "1Gi";
  std::string storage_class;  // "": the cluster's default
};

/// The objects of `plan` as one YAML stream, documents separated by "---": the ConfigMap (unless
/// plan.files is empty), the PersistentVolumeClaim, the shards' Job, the merge Job. Built with
/// yaml-cpp's emitter: every string that YAML would read as another type is quoted.
std::string K8sManifests(const K8sPlan& plan);

/// "2026-12-02T10:00:00Z".
std::string Rfc3339Utc(int64_t unix_s);

/// The folder of shard `k` (1 to N) on the results volume, and of the merged run.
std::string ShardDir(int64_t k);
std::string MergedDir();

}  // namespace stagegate::deploy

#pragma once

// What `stagegate k8s` plans from a loaded scenario before the manifests are built: the files the
// pods read and where, the Secret's variables, the objects' name and the common start.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "deploy/k8s_manifests.h"
#include "manifest/bundle.h"

namespace stagegate::deploy {

/// What etcd stores of one object; a ConfigMap's keys and values must fit in it.
inline constexpr size_t kConfigMapBytes = size_t{1} << 20;
/// The longest name of a plan: "<name>-results", the longest object name, and the pods' host
/// names stay within 63 characters.
inline constexpr size_t kMaxNameLength = 50;

/// Whether `text` is a DNS-1123 label of at most `max_length` characters: a-z, 0-9 and '-',
/// starting and ending with a letter or digit.
bool IsDnsLabel(const std::string& text, size_t max_length);

/// Why `bundle` cannot run as the shards of `plan`, beyond what every shard would refuse itself
/// (scenario::ShardProblems): more than one shard of the built-in sim with no plan.target_url,
/// and, when the files go in the ConfigMap (not `in_image`), a URL of the scenario with a user
/// or password, which the cluster's store would hold. Each a sentence that starts with `file`,
/// the scenario as the user named it; empty when there is none.
std::vector<std::string> PlanProblems(const manifest::Bundle& bundle, const K8sPlan& plan,
                                      bool in_image, const std::string& file);

/// The scenario's files as the pods see them.
struct BundleLayout {
  std::vector<BundleFile> files;  // empty when the image carries the bundle
  std::string scenario;           // the scenario's path in the pod
};

/// Where the pods find `scenario` and the files it names. With `in_image`, the image carries them
/// under /work, laid out as on disk, and no file's contents are read. Otherwise every file a run
/// reads (the scenario first, every file of its corpus folder but names starting with '.', its
/// rubric, and the files its input and sim profile name) is read, to appear under kBundleMount
/// laid out relative to the deepest folder that holds them all, so that the scenario's relative
/// paths resolve in the pod as on disk. InvalidInput when a file is not UTF-8 text or the files
/// do not fit in a ConfigMap (kConfigMapBytes); IoError when the corpus folder cannot be listed;
/// otherwise the status of a file that cannot be read.
Result<BundleLayout> LayOutBundle(const manifest::Scenario& scenario, bool in_image);

/// Completes `plan`, its options set, for `bundle` laid out as `layout`: the start, start_in_s
/// after `now_unix_ms` rounded up to a whole second (so that every shard's --start-at reads the
/// same in both forms); when plan.name is empty, a name made of the scenario's name and the
/// start ("service-desk-1202-100000"); the scenario's path and files; the variables read from the
/// Secret (the target's API key, and the personas' tokens when a stage or probe sends them,
/// optional against the sim, where each persona has a token of its own); and a load engine
/// thread for each whole core of plan.cpu, at least one.
void CompletePlan(const manifest::Bundle& bundle, BundleLayout layout, int64_t now_unix_ms,
                  K8sPlan& plan);

}  // namespace stagegate::deploy

#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "manifest/bundle.h"

namespace stagegate::manifest {

/// The canonical forms: every field with its resolved value, no source positions, and paths
/// replaced by the content of what they name. nlohmann::json keeps object keys sorted, so dump()
/// of these is canonical.
nlohmann::json CanonicalCorpus(const Corpus& corpus);
nlohmann::json CanonicalRubric(const Rubric& rubric);
/// The scenario, with `corpus` and `rubric` entered as {name/id, version, sha256} of their
/// canonical forms. `description` (prose) and `baseline`
/// (what to compare with, not what is measured) are left out. The `cost` and `decisions`
/// sections, when the scenario has them, are under kCostKey and kDecisionsKey: stored with the
/// run but not fingerprinted.
nlohmann::json CanonicalScenario(const Bundle& bundle);

/// The key of the canonical scenario that holds its `cost` section.
inline constexpr const char* kCostKey = "cost";
/// The key of the canonical scenario that holds its `decisions` section.
inline constexpr const char* kDecisionsKey = "decisions";
/// The time slices' length, when given: how the figures are cut, not what was measured.
inline constexpr const char* kSliceKey = "slice_s";

/// The one rule of every run's fingerprint: the sha256 of `canonical`'s compact dump (text that is
/// not UTF-8 replaced), without the top-level keys `left_out` (what is kept with a run but is not
/// part of what it measured).
std::string FingerprintOf(nlohmann::json canonical, std::initializer_list<const char*> left_out);

struct Fingerprint {
  std::string value;  // FingerprintOf(CanonicalScenario(bundle)), without cost, decisions, slices
  std::string corpus_sha;  // "" without a corpus
  std::string rubric_sha;  // "" without a rubric
};

/// Identifies a configuration: two runs are comparable only when their fingerprints match.
Fingerprint ComputeFingerprint(const Bundle& bundle);

/// A profile's fingerprint: FingerprintOf its options (`config`, as profile.json's "config" holds
/// them) but for how the work was split among shards and when it started ("shard",
/// "start_at_unix_ms", "merged_shards"), which a scenario run keeps in its settings, outside its
/// fingerprint. A profile run whole, each of its shards and their merge have one fingerprint.
std::string ProfileFingerprint(const nlohmann::json& config);

}  // namespace stagegate::manifest

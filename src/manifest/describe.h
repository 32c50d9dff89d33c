#pragma once

// The scenario described in words, as `stagegate validate` shows it: what it sends, to what, in
// which stages and phases, and what each release condition asks.

#include <string>
#include <vector>

#include "manifest/bundle.h"
#include "manifest/fingerprint.h"

namespace stagegate::manifest {

/// The summary of a loaded bundle, one line an element, without line breaks of its own: the
/// scenario, its manifest and target, the corpus, input and rubric, the stages and phases, the
/// three conditions, the cost and decisions, and last the fingerprint. The target's URL is shown
/// without its user and password.
std::vector<std::string> DescribeScenario(const Bundle& bundle, const Fingerprint& fingerprint);

/// For each release condition the scenario as written can never decide (its checks would stay
/// pending however the run went), why, and the key to add; empty when it can decide all three.
/// Notes, not problems: a scenario may leave a condition to another (a load test alone, say).
std::vector<std::string> UndecidedConditions(const Bundle& bundle);

}  // namespace stagegate::manifest

#pragma once

// Where the reference application finds its built-in corpus when it is given none.

#include <string>
#include <vector>

#include "base/status.h"

namespace stagegate::sim {

/// The built-in corpus, relative to a checkout.
inline constexpr const char* kDefaultCorpus = "corpus/service-desk";

/// Where the default corpus may be, in order, as absolute paths: the current directory (a
/// checkout), then the checkout the executable was built in (build/stagegate sits in it). The
/// project has no install rules, so there is no shared-data folder to look in.
std::vector<std::string> DefaultCorpusCandidates();

/// The first candidate folder that holds corpus.yaml; NotFound naming every candidate otherwise.
Result<std::string> FindDefaultCorpus();

}  // namespace stagegate::sim

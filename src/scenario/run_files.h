#pragma once

// The files a run leaves, written by `run` and by `merge` alike: run.json, stages.csv,
// requests.jsonl and the AIPerf-compatible exports.

#include <string>

#include "base/status.h"
#include "manifest/bundle.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::scenario {

/// Writes run.json, stages.csv, requests.jsonl and the AIPerf-compatible exports into `out_dir`
/// and keeps run.json with the run in the store.
Status WriteRunFiles(const std::string& out_dir, const manifest::Bundle& bundle,
                     const std::string& fingerprint, const RunReport& report, const Runner& runner,
                     store::Store& store);

}  // namespace stagegate::scenario

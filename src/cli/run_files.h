#pragma once

// The files a run leaves, written by `run` and by `merge` alike.

#include <string>
#include <vector>

#include "base/status.h"
#include "console/console.h"
#include "manifest/bundle.h"
#include "scenario/runner.h"
#include "store/store.h"

namespace stagegate::cli {

/// Builds the release report of a stored run (with its triage counts) and writes it into `dir`
/// in each of `formats` (md, html, json, junit, csv; empty: all). The paths written go to
/// `written`; the verdict and its reasons to the console.
Status WriteReportFiles(store::Store& store, const store::RunInfo& run,
                        const manifest::Bundle* bundle, const std::string& dir,
                        std::vector<std::string> formats, std::vector<std::string>& written,
                        console::Console& console);

}  // namespace stagegate::cli

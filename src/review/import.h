#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/store.h"

namespace stagegate::review {

struct ImportOptions {
  bool replace = false;  // a changed score for an item and reviewer replaces the stored one
};

struct ImportResult {
  std::vector<std::string> errors;                 // "FILE:LINE: message", in the order found
  int64_t items = 0;                               // scored items read
  int64_t added = 0, unchanged = 0, replaced = 0;  // scores (one per item and criterion)
  /// Usability judgements (one per item and reviewer): added, unchanged, replaced.
  int64_t usability_added = 0, usability_unchanged = 0, usability_replaced = 0;
};

/// Imports reviewers' scores for `run_id`: the reviewer page's download or a filled-in JSON Lines
/// packet (.jsonl/.json: a header line {"format":"stagegate-scores","version":1,"export_id",
/// "reviewer"}, then {"item","scores":{criterion: level},"seconds"} a line, optionally with
/// "usability" (as_is, corrected, unusable), "corrected_text" and "correction_seconds"; an item
/// whose fields are all null is not scored yet and is skipped), or a filled-in CSV packet (.csv:
/// export_id, reviewer, item, ..., one column a criterion, seconds, and optionally usability,
/// corrected_text, correction_seconds). Files without the usability fields import as before.
/// Everything is checked before anything is written: unknown export, reviewer or item; an item
/// given to another reviewer; a level not on the criterion's scale; a missing or unknown criterion;
/// an item scored twice; a malformed file. Any error: nothing is written, and every error is in the
/// result. Scores already stored with the same values are left alone; a different value needs
/// `replace`. The same holds for a usability judgement (with its text and seconds); a file without
/// one leaves the stored one.
Result<ImportResult> ImportScores(store::Store& store, const std::string& run_id,
                                  const std::vector<std::string>& files,
                                  const ImportOptions& options);

}  // namespace stagegate::review

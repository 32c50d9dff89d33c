#pragma once

// A baseline's recorded answers: how today's workflow (a service desk, a search page, the
// previous model) answered the corpus's tasks, from a CSV or JSON Lines export.

#include <optional>
#include <string>
#include <vector>

#include "manifest/corpus.h"
#include "manifest/diagnostics.h"

namespace stagegate::manifest {

/// One recorded answer to one corpus task.
struct RecordedAnswer {
  int line = 0;  // where it is in its file
  std::string task_id;
  std::string answer;
  std::optional<double> resolution_s;  // the time to resolution, when the file has it
  std::string answered_by;             // who answered, when the file says; never shown to reviewers
};

/// The columns (CSV header) or keys (JSON Lines) a recorded-answers file may use.
const std::vector<std::string>& RecordedAnswerColumns();

/// The most answers one file may hold, and the longest answer.
inline constexpr size_t kMaxRecordedAnswers = 100'000;
inline constexpr size_t kMaxRecordedAnswerBytes = 64 * 1024;

/// Reads the answers in `text`, the contents of `path` (CSV with a header row when the name ends
/// in .csv, else JSON Lines): task_id and answer are required, resolution_s (seconds, 0 or more)
/// and answered_by optional. Checked against `corpus`: a task it does not have, a task answered
/// twice, an empty answer, control characters (line breaks and tabs are kept), a resolution time
/// that is not a number of seconds. Every problem goes to `diagnostics` with the file and line;
/// only the answers without a problem are returned.
std::vector<RecordedAnswer> ReadRecordedAnswers(const std::string& path, const std::string& text,
                                                const Corpus& corpus, Diagnostics& diagnostics);

}  // namespace stagegate::manifest

#pragma once

#include <string>
#include <string_view>

namespace stagegate::fuzz {

/// Imports `text` as the scores file `file_name` (its extension picks JSON Lines or CSV) into a
/// run of an in-memory store made once per process: run "run-f", reviewer export "x-1" (rubric:
/// correctness 1-5, safety 0-1) whose items a1, a2 are reviewer r1's and b1, b2 reviewer r2's,
/// and an LLM judge's export "judge-1" with item j1. Scores an import writes are deleted before
/// it returns, so every input meets the same store. Checks that a failed import wrote nothing.
void FuzzImport(std::string_view text, const std::string& file_name);

}  // namespace stagegate::fuzz

#pragma once

#include <string>
#include <vector>

#include "manifest/corpus.h"
#include "manifest/diagnostics.h"

namespace stagegate::manifest {

/// What applies to every imported question that does not say otherwise.
struct ImportDefaults {
  std::string persona;
  std::string category;
  std::string approved_by;
  std::string source;
};

/// One question of an import file, as it will be written.
struct ImportedTask {
  int line = 0;  // where it is in the import file
  std::string id;
  std::string prompt;
  std::string category;
  std::string persona;
  std::string reference;
  std::vector<std::string> facts;  // each becomes a `contains` check
  std::vector<std::string> needs;
  std::vector<std::string> tags;
  std::string approved_by;
  std::string source;
};

/// The columns (CSV header) or keys (JSON Lines) an import file may use.
const std::vector<std::string>& ImportColumns();

/// Reads questions from `text`, the contents of `path`: CSV with a header row (a file ending in
/// .csv) or JSON Lines, one object per line (.jsonl or .json). prompt is required; category,
/// persona, approved_by and source come from the row or else from `defaults`; facts, needs and
/// tags are lists (JSON arrays, or in CSV cells separated by ';'). A question without an id gets
/// "<category>-<n>". Checked against `corpus` (its personas; ids not already taken). Every problem
/// goes to `diagnostics` with the file and line of the question.
std::vector<ImportedTask> ReadImport(const std::string& path, const std::string& text,
                                     const ImportDefaults& defaults, const Corpus& corpus,
                                     Diagnostics& diagnostics);

/// The tasks as a task file (tasks/*.yaml), every text quoted as YAML needs.
std::string TasksYaml(const std::vector<ImportedTask>& tasks, const std::string& origin);

}  // namespace stagegate::manifest

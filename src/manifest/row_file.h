#pragma once

// Files of records a person fills in with a spreadsheet or a script: CSV with a header row, or
// JSON Lines of one object a record. Corpus import reads questions this way, and a baseline its
// recorded answers.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/diagnostics.h"

namespace stagegate::manifest {

/// What a kind of row file holds.
struct RowFileKind {
  std::string noun;                  // one record, in messages: "question", "answer"
  std::string example;               // a line of JSON Lines: {"prompt": "..."}
  std::vector<std::string> columns;  // the columns (CSV) or keys (JSON Lines) it may have
  std::string required_column;       // one the CSV header must have
  size_t max_bytes = 0;              // the largest file read
};

/// One record: where it is (its first line) and its fields by column, each a string from CSV
/// or any JSON value from JSON Lines.
struct Row {
  int line = 0;
  std::map<std::string, nlohmann::json> fields;
};

/// The records of `text`, the contents of `path`: CSV with a header row when the path ends in
/// .csv (any case), else JSON Lines. A spreadsheet's byte order mark is skipped. Every problem
/// goes to `diagnostics` with the file and line: a file too large or not UTF-8 (nothing is read);
/// an unclosed quote, an unknown or repeated column, a header without the required column (no
/// record is read); a row with another number of fields than the header; a line that is not a JSON
/// object, has an unknown key or a key twice (that line is skipped); a file with no record.
std::vector<Row> ReadRows(const std::string& path, std::string_view text, const RowFileKind& kind,
                          Diagnostics& diagnostics);

/// Whether ReadRows reads `path` as JSON Lines.
bool IsJsonLines(const std::string& path);

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix, and cut: what went
/// wrong and where.
std::string JsonProblem(std::string_view what);

}  // namespace stagegate::manifest

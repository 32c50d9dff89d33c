#include "manifest/row_file.h"

#include <algorithm>
#include <set>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {
namespace {

using json = nlohmann::json;

class RowReader {
 public:
  RowReader(const std::string& path, const RowFileKind& kind, Diagnostics& diagnostics)
      : path_(path), kind_(kind), diagnostics_(diagnostics) {}

  void Csv(std::string_view text) {
    int unclosed = 0;
    const std::vector<CsvRecord> records = ParseCsv(text, unclosed);
    if (unclosed) return Error(unclosed, "a quoted field is not closed");
    if (records.empty())
      return Error(1, "the file is empty: give a header row, then " + kind_.noun + "s");
    const int header_line = records.front().line;
    std::vector<std::string> head;
    for (const std::string& name : records.front().fields)
      head.push_back(AsciiLower(std::string(Trim(name))));
    bool known = true;
    for (const std::string& name : head)
      known = Known(header_line, name) && known;
    for (size_t c = 0; c < head.size(); ++c)
      if (std::find(head.begin(), head.begin() + c, head[c]) != head.begin() + c) {
        Error(header_line, "the column '" + head[c] + "' is given twice");
        known = false;
      }
    if (!known) return;
    if (std::find(head.begin(), head.end(), kind_.required_column) == head.end())
      return Error(header_line, "the header has no '" + kind_.required_column + "' column");
    for (size_t r = 1; r < records.size(); ++r) {
      const CsvRecord& record = records[r];
      if (record.fields.size() != head.size()) {
        Error(record.line, "has " + std::to_string(record.fields.size()) + " fields, the header " +
                               std::to_string(head.size()));
        continue;
      }
      Row row{.line = record.line};
      for (size_t c = 0; c < head.size(); ++c)
        row.fields[head[c]] = record.fields[c];
      rows_.push_back(std::move(row));
    }
  }

  void JsonLines(std::string_view text) {
    int line = 0;
    const size_t errors = diagnostics_.size();
    for (const std::string& raw : Split(text, '\n')) {
      ++line;
      if (Trim(raw).empty()) continue;
      std::optional<json> value = ParseObject(line, raw);
      if (!value) continue;
      Row row{.line = line};
      bool known = true;
      for (const auto& [key, v] : value->items()) {
        known = Known(line, key) && known;
        row.fields[key] = v;
      }
      if (known) rows_.push_back(std::move(row));
    }
    if (line == 0 || (rows_.empty() && diagnostics_.size() == errors))
      Error(1, "the file holds no " + kind_.noun);
  }

  std::vector<Row> Take() { return std::move(rows_); }

 private:
  // The line's object. Keys given twice, which JSON readers disagree on (the last wins here),
  // are refused, as a CSV column given twice is.
  std::optional<json> ParseObject(int line, const std::string& raw) {
    std::set<std::string> keys, twice;
    const json::parser_callback_t note_keys = [&](int depth, json::parse_event_t event,
                                                  json& parsed) {
      if (event == json::parse_event_t::key && depth == 1 && parsed.is_string() &&
          !keys.insert(parsed.get<std::string>()).second)
        twice.insert(parsed.get<std::string>());
      return true;
    };
    json value;
    try {
      value = json::parse(raw, note_keys);
    } catch (const json::exception& error) {
      Error(line, "is not JSON: " + JsonProblem(error.what()));
      return std::nullopt;
    }
    if (!value.is_object()) {
      Error(line, "is a JSON " + std::string(value.type_name()) +
                      ", not an object: each line is one " + kind_.noun + ", as " + kind_.example);
      return std::nullopt;
    }
    for (const std::string& key : twice)
      Error(line, "the key '" + key + "' is given twice");
    if (!twice.empty()) return std::nullopt;
    return value;
  }

  void Error(int line, const std::string& message) {
    diagnostics_.Error({path_, line, 0}, message);
  }

  bool Known(int line, const std::string& name) {
    if (std::find(kind_.columns.begin(), kind_.columns.end(), name) != kind_.columns.end())
      return true;
    Error(line, "unknown column '" + name + "' (columns: " + Join(kind_.columns, ", ") + ")");
    return false;
  }

  const std::string& path_;
  const RowFileKind& kind_;
  Diagnostics& diagnostics_;
  std::vector<Row> rows_;
};

}  // namespace

std::string JsonProblem(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return ShownText(what, 300);
}

bool IsJsonLines(const std::string& path) {
  return !AsciiLower(path).ends_with(".csv");
}

std::vector<Row> ReadRows(const std::string& path, std::string_view text, const RowFileKind& kind,
                          Diagnostics& diagnostics) {
  // A spreadsheet's "CSV UTF-8" starts with a byte order mark; the header is after it.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (text.size() > kind.max_bytes) {
    diagnostics.Error({path, 0, 0}, "larger than " + DescribeBytes(kind.max_bytes) +
                                        ", the most one file may be: split the file");
    return {};
  }
  if (!CheckUtf8(diagnostics, path, text, 1)) return {};
  RowReader reader(path, kind, diagnostics);
  if (IsJsonLines(path))
    reader.JsonLines(text);
  else
    reader.Csv(text);
  return reader.Take();
}

}  // namespace stagegate::manifest

#include "manifest/corpus_import.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxTasks = 100'000;
// Half the most a task file may be (kMaxManifestBytes): quoting makes the file written larger
// than what was read.
constexpr size_t kMaxImportBytes = kMaxManifestBytes / 2;

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, and cut: what
// went wrong and where ("parse error at line 1, column 9: ... invalid string: surrogate U+D800..
// U+DBFF must be followed by U+DC00..U+DFFF", "number overflow parsing '1e999999'").
std::string JsonProblem(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return ShownText(what, 300);
}

// A list cell: "a; b;c" -> {a, b, c}, blanks dropped.
std::vector<std::string> SplitList(const std::string& cell) {
  std::vector<std::string> items;
  for (const std::string& part : Split(cell, ';'))
    if (!Trim(part).empty()) items.emplace_back(Trim(part));
  return items;
}

// A slug of `text` for an id: lower-case letters, digits and '-'.
std::string Slug(const std::string& text) {
  std::string slug;
  for (unsigned char c : text) {
    if (std::isalnum(c))
      slug += static_cast<char>(std::tolower(c));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  return slug.empty() ? "task" : slug.substr(0, 40);
}

// Whether `text`, written as a double-quoted YAML scalar, reads back the same: a few code points
// (U+FFFE, U+FFFF) do not.
bool SurvivesYaml(const std::string& text) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  try {
    return YAML::Load(out.c_str()).as<std::string>() == text;
  } catch (const YAML::Exception&) {
    return false;
  }
}

class Reader {
 public:
  Reader(const std::string& path, const ImportDefaults& defaults, const Corpus& corpus,
         Diagnostics& diagnostics)
      : path_(path), defaults_(defaults), corpus_(corpus), diagnostics_(diagnostics) {
    for (const Task& task : corpus.tasks)
      taken_[task.id] = 0;
  }

  void Csv(const std::string& text) {
    int unclosed = 0;
    const std::vector<CsvRecord> records = ParseCsv(text, unclosed);
    if (unclosed) return Error(unclosed, "a quoted field is not closed");
    if (records.empty()) return Error(1, "the file is empty: give a header row, then questions");
    std::vector<std::string> head;
    for (const std::string& name : records.front().fields)
      head.push_back(AsciiLower(std::string(Trim(name))));
    bool known = true;
    for (const std::string& name : head)
      known = Known(records.front().line, name) && known;
    for (size_t c = 0; c < head.size(); ++c)
      if (std::find(head.begin(), head.begin() + c, head[c]) != head.begin() + c) {
        Error(records.front().line, "the column '" + head[c] + "' is given twice");
        known = false;
      }
    if (!known) return;
    if (std::find(head.begin(), head.end(), "prompt") == head.end())
      return Error(records.front().line, "the header has no 'prompt' column");
    for (size_t r = 1; r < records.size(); ++r) {
      const CsvRecord& record = records[r];
      if (record.fields.size() != head.size()) {
        Error(record.line, "has " + std::to_string(record.fields.size()) + " fields, the header " +
                               std::to_string(head.size()));
        continue;
      }
      std::map<std::string, json> row;
      for (size_t c = 0; c < head.size(); ++c)
        row[head[c]] = record.fields[c];
      Add(record.line, row);
    }
  }

  void JsonLines(const std::string& text) {
    int line = 0;
    for (const std::string& raw : Split(text, '\n')) {
      ++line;
      if (Trim(raw).empty()) continue;
      // Keys of the line's object given twice, which JSON readers disagree on (the last wins
      // here): refused, as a duplicate CSV column is.
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
        continue;
      }
      if (!value.is_object()) {
        Error(line, "is a JSON " + std::string(value.type_name()) +
                        ", not an object: each line is one question, as {\"prompt\": \"...\"}");
        continue;
      }
      if (!twice.empty()) {
        for (const std::string& key : twice)
          Error(line, "the key '" + key + "' is given twice");
        continue;
      }
      jsonl_ = true;
      std::map<std::string, json> row;
      bool known = true;
      for (const auto& [key, v] : value.items()) {
        known = Known(line, key) && known;
        row[key] = v;
      }
      if (known) Add(line, row);
    }
    if (line == 0 || (tasks_.empty() && diagnostics_.empty()))
      Error(1, "the file holds no question");
  }

  std::vector<ImportedTask> Take() { return std::move(tasks_); }

 private:
  void Error(int line, const std::string& message) {
    diagnostics_.Error({path_, line, 0}, message);
  }

  bool Known(int line, const std::string& name) {
    const std::vector<std::string>& columns = ImportColumns();
    if (std::find(columns.begin(), columns.end(), name) != columns.end()) return true;
    Error(line, "unknown column '" + name + "' (columns: " + Join(columns, ", ") + ")");
    return false;
  }

  // A text field: a string (or for CSV a cell); absent or blank gives "".
  std::string Text(int line, const std::map<std::string, json>& row, const std::string& key) {
    auto found = row.find(key);
    if (found == row.end() || found->second.is_null()) return "";
    if (!found->second.is_string()) {
      Error(line, "'" + key + "' must be text, got " + std::string(found->second.type_name()));
      return "";
    }
    const std::string text(Trim(found->second.get<std::string>()));
    if (HasControlCharacter(text, key == "prompt" || key == "reference")) {
      Error(line, "'" + key + "' holds a control character");
      return "";
    }
    if (!SurvivesYaml(text)) {
      Error(line, "'" + key + "' holds a character a task file cannot keep (such as U+FFFE)");
      return "";
    }
    return text;
  }

  // A list field: a JSON array of strings, or a string split at ';'.
  std::vector<std::string> List(int line, const std::map<std::string, json>& row,
                                const std::string& key) {
    auto found = row.find(key);
    if (found == row.end() || found->second.is_null()) return {};
    std::vector<std::string> items;
    if (found->second.is_string() && jsonl_) {
      Error(line, "'" + key + "' must be a JSON array of texts (only a CSV cell is split at ';')");
      return {};
    }
    if (found->second.is_string()) {
      items = SplitList(found->second.get<std::string>());
    } else if (found->second.is_array()) {
      for (const json& item : found->second) {
        if (!item.is_string()) {
          Error(line, "'" + key + "' must be a list of texts");
          return {};
        }
        if (!Trim(item.get<std::string>()).empty())
          items.emplace_back(Trim(item.get<std::string>()));
      }
    }
    if (found->second.is_string() || found->second.is_array()) {
      for (const std::string& item : items)
        if (HasControlCharacter(item) || !SurvivesYaml(item)) {
          Error(line, "'" + key + "' holds a control character or one a task file cannot keep");
          return {};
        }
      return items;
    }
    Error(line,
          "'" + key + "' must be a list of texts, got " + std::string(found->second.type_name()));
    return {};
  }

  void Add(int line, const std::map<std::string, json>& row) {
    if (tasks_.size() >= kMaxTasks) {
      if (tasks_.size() == kMaxTasks) Error(line, "more than 100,000 questions: split the file");
      return;
    }
    ImportedTask t{.line = line};
    const size_t errors = diagnostics_.size();
    t.prompt = Text(line, row, "prompt");
    if (t.prompt.empty() && diagnostics_.size() == errors) Error(line, "the prompt is empty");
    const auto or_default = [&](const std::string& key, const std::string& fallback,
                                const char* option) {
      std::string value = Text(line, row, key);
      if (value.empty()) value = fallback;
      if (value.empty()) Error(line, "no " + key + ": give the column or --" + std::string(option));
      return value;
    };
    t.category = or_default("category", defaults_.category, "category");
    t.persona = or_default("persona", defaults_.persona, "persona");
    t.approved_by = or_default("approved_by", defaults_.approved_by, "approved-by");
    t.source = or_default("source", defaults_.source, "source");
    if (!t.persona.empty() && !corpus_.FindPersona(t.persona))
      Error(line, "persona '" + t.persona + "' is not in the corpus's personas.yaml" +
                      (corpus_.personas.empty() ? std::string()
                                                : " (" + Join(corpus_.PersonaNames(), ", ") + ")"));
    t.reference = Text(line, row, "reference");
    t.facts = List(line, row, "facts");
    t.needs = List(line, row, "needs");
    for (const std::string& need : t.needs)
      if (need != "retrieval" && need != "identity" && need != "tools")
        Error(line, "unknown need '" + need + "' (retrieval, identity, tools)");
    t.tags = List(line, row, "tags");
    t.id = Text(line, row, "id");
    if (t.id.empty()) {
      const std::string stem = Slug(t.category);
      for (int n = ++counter_[stem];; n = ++counter_[stem]) {
        t.id = stem + "-" + std::string(n < 100 ? (n < 10 ? "00" : "0") : "") + std::to_string(n);
        if (!taken_.contains(t.id)) break;
      }
    }
    if (auto [at, inserted] = taken_.emplace(t.id, line); !inserted)
      Error(line, "id '" + t.id + "' is taken" +
                      (at->second ? " by line " + std::to_string(at->second)
                                  : std::string(" by a task of the corpus")));
    if (diagnostics_.size() == errors) tasks_.push_back(std::move(t));
  }

  const std::string& path_;
  const ImportDefaults& defaults_;
  const Corpus& corpus_;
  Diagnostics& diagnostics_;
  std::map<std::string, int> taken_;  // id -> line (0: the corpus's own)
  std::map<std::string, int> counter_;
  std::vector<ImportedTask> tasks_;
  bool jsonl_ = false;  // reading JSON Lines, whose lists are arrays
};

}  // namespace

const std::vector<std::string>& ImportColumns() {
  static const std::vector<std::string> columns = {"id",          "prompt", "category", "persona",
                                                   "reference",   "facts",  "needs",    "tags",
                                                   "approved_by", "source"};
  return columns;
}

std::vector<ImportedTask> ReadImport(const std::string& path, const std::string& text,
                                     const ImportDefaults& defaults, const Corpus& corpus,
                                     Diagnostics& diagnostics) {
  // A spreadsheet's "CSV UTF-8" starts with a byte order mark; the header is after it.
  std::string_view body = text;
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  if (body.size() > kMaxImportBytes) {
    diagnostics.Error({path, 0, 0}, "larger than " + DescribeBytes(kMaxImportBytes) +
                                        ", the most one import may be: split the file");
    return {};
  }
  if (!CheckUtf8(diagnostics, path, body, 1)) return {};
  Reader reader(path, defaults, corpus, diagnostics);
  if (AsciiLower(path).ends_with(".csv"))
    reader.Csv(std::string(body));
  else
    reader.JsonLines(std::string(body));
  return reader.Take();
}

std::string TasksYaml(const std::vector<ImportedTask>& tasks, const std::string& origin) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginSeq;
  for (const ImportedTask& t : tasks) {
    out << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << t.id;
    out << YAML::Key << "prompt" << YAML::Value << YAML::DoubleQuoted << t.prompt;
    out << YAML::Key << "persona" << YAML::Value << YAML::DoubleQuoted << t.persona;
    out << YAML::Key << "category" << YAML::Value << YAML::DoubleQuoted << t.category;
    if (!t.tags.empty()) {
      out << YAML::Key << "tags" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const std::string& tag : t.tags)
        out << YAML::DoubleQuoted << tag;
      out << YAML::EndSeq;
    }
    out << YAML::Key << "needs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& need : t.needs)
      out << need;
    out << YAML::EndSeq;
    out << YAML::Key << "reference" << YAML::Value << YAML::DoubleQuoted << t.reference;
    if (!t.facts.empty()) {
      out << YAML::Key << "checks" << YAML::Value << YAML::BeginSeq;
      for (const std::string& fact : t.facts)
        out << YAML::BeginMap << YAML::Key << "contains" << YAML::Value << YAML::DoubleQuoted
            << fact << YAML::EndMap;
      out << YAML::EndSeq;
    }
    out << YAML::Key << "approved_by" << YAML::Value << YAML::DoubleQuoted << t.approved_by;
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << t.source;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  return "# Imported by stagegate corpus import from " + origin + " (line numbers as there).\n" +
         std::string(out.c_str()) + "\n";
}

}  // namespace stagegate::manifest

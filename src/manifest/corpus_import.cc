#include "manifest/corpus_import.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/row_file.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxTasks = 100'000;
// Half the most a task file may be (kMaxManifestBytes): quoting makes the file written larger
// than what was read.
constexpr size_t kMaxImportBytes = kMaxManifestBytes / 2;

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

  void Read(const std::vector<Row>& rows, bool jsonl) {
    jsonl_ = jsonl;
    for (const Row& row : rows)
      Add(row.line, row.fields);
  }

  std::vector<ImportedTask> Take() { return std::move(tasks_); }

 private:
  void Error(int line, const std::string& message) {
    diagnostics_.Error({path_, line, 0}, message);
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
  const RowFileKind kind{.noun = "question",
                         .example = "{\"prompt\": \"...\"}",
                         .columns = ImportColumns(),
                         .required_column = "prompt",
                         .max_bytes = kMaxImportBytes};
  const std::vector<Row> rows = ReadRows(path, text, kind, diagnostics);
  Reader reader(path, defaults, corpus, diagnostics);
  reader.Read(rows, IsJsonLines(path));
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

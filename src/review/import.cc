#include "review/import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/strings.h"
#include "review/usability_fields.h"
#include "store/findings.h"
#include "store/review_data.h"

namespace stagegate::review {
namespace {

using json = nlohmann::json;

struct Export {
  std::string id;
  std::map<std::string, std::vector<int64_t>> levels;  // criterion -> its scale
  std::vector<std::string> criteria;                   // in rubric order
};

struct Item {
  std::string export_id;
  std::string reviewer;
};

// One item's scores as read from a file.
struct Scored {
  std::string where;  // "FILE:LINE"
  std::string item;
  std::string reviewer;
  std::map<std::string, int64_t> scores;
  std::optional<double> seconds;
  std::optional<store::Usability> usability;  // when the reviewer judged it
};

constexpr double kMaxSecondsPerItem = 86'400;

std::string Where(const std::string& file, int line) {
  return file + ":" + std::to_string(line);
}

class Reader {
 public:
  Reader(const std::map<std::string, Export>& exports, const std::map<std::string, Item>& items)
      : exports_(exports), items_(items) {}

  std::vector<std::string> errors;
  std::vector<Scored> scored;

  void Read(const std::string& file) {
    Result<std::string> text = ReadFile(file);
    if (!text.ok()) {
      errors.push_back(file + ": " + ReadFailure(text.status(), file));
      return;
    }
    // Spreadsheets save "CSV UTF-8" with a byte order mark; it is not part of the first field.
    std::string_view body = *text;
    if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
    if (std::optional<size_t> bad = FirstInvalidUtf8(body)) {
      const auto line = std::count(body.begin(), body.begin() + static_cast<long>(*bad), '\n');
      Error(Where(file, static_cast<int>(line) + 1), "not UTF-8: save the file as UTF-8");
      return;
    }
    const bool csv = file.size() >= 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
    if (csv)
      ReadCsv(file, std::string(body));
    else
      ReadJsonLines(file, std::string(body));
  }

 private:
  void Error(const std::string& where, const std::string& message) {
    errors.push_back(where + ": " + message);
  }

  // The export and reviewer a file's header names, checked.
  const Export* Header(const std::string& where, const std::string& export_id,
                       const std::string& reviewer) {
    auto found = exports_.find(export_id);
    if (found == exports_.end()) {
      Error(where, "export '" + export_id + "' is not an export of this run");
      return nullptr;
    }
    const bool known = std::any_of(items_.begin(), items_.end(), [&](const auto& entry) {
      return entry.second.export_id == export_id && entry.second.reviewer == reviewer;
    });
    if (!known) {
      Error(where, "reviewer '" + reviewer + "' has no packet in export " + export_id);
      return nullptr;
    }
    return &found->second;
  }

  // Checks one item's scores (criterion -> value as read; null: not given) and keeps them.
  void Check(const std::string& where, const Export& x, const std::string& reviewer,
             const std::string& item, const std::vector<std::pair<std::string, json>>& values,
             const json& seconds, const UsabilityFields& usability) {
    auto found = items_.find(item);
    if (found == items_.end() || found->second.export_id != x.id) {
      Error(where, "unknown item '" + item + "'");
      return;
    }
    if (found->second.reviewer != reviewer) {
      Error(where,
            "item '" + item + "' was given to " + found->second.reviewer + ", not to " + reviewer);
      return;
    }
    const bool none =
        std::all_of(values.begin(), values.end(), [](const auto& v) { return v.second.is_null(); });
    if (none && seconds.is_null() && usability.usability.is_null() &&
        usability.corrected_text.is_null() && usability.correction_seconds.is_null())
      return;  // not scored yet
    Scored s{.where = where, .item = item, .reviewer = reviewer};
    bool ok = true;
    std::vector<std::string> missing;
    for (const auto& [criterion, value] : values) {
      auto levels = x.levels.find(criterion);
      if (levels == x.levels.end()) {
        Error(where, "item '" + item + "': unknown criterion '" + criterion + "'" +
                         DidYouMean(criterion, x.criteria));
        ok = false;
        continue;
      }
      if (value.is_null()) continue;
      const std::vector<int64_t>& scale = levels->second;
      std::vector<std::string> allowed;
      for (int64_t level : scale)
        allowed.push_back(std::to_string(level));
      // Any scale level is a small whole number; a huge one must not reach the conversion.
      const bool integral = value.is_number() && std::abs(value.get<double>()) <= 1e9 &&
                            std::floor(value.get<double>()) == value.get<double>();
      const int64_t level = integral ? static_cast<int64_t>(value.get<double>()) : 0;
      if (!integral || std::find(scale.begin(), scale.end(), level) == scale.end()) {
        // A CSV cell is any bytes: invalid UTF-8 is shown as U+FFFD rather than thrown.
        Error(where, "item '" + item + "': '" + criterion + "' must be one of " +
                         Join(allowed, ", ") + ", got " +
                         value.dump(-1, ' ', false, json::error_handler_t::replace));
        ok = false;
        continue;
      }
      s.scores[criterion] = level;
    }
    for (const std::string& criterion : x.criteria)
      if (!s.scores.contains(criterion) &&
          std::none_of(values.begin(), values.end(),
                       [&](const auto& v) { return v.first == criterion && !v.second.is_null(); }))
        missing.push_back(criterion);
    if (!missing.empty()) {
      Error(where, "item '" + item + "': missing criteria: " + Join(missing, ", "));
      ok = false;
    }
    if (!seconds.is_null()) {
      // A day on one answer is already a mistake; more would swamp the effort figures.
      if (!seconds.is_number() || !(seconds.get<double>() >= 0) ||
          seconds.get<double>() > kMaxSecondsPerItem) {
        Error(where, "item '" + item + "': 'seconds' must be a number of seconds from 0 to " +
                         FormatNumber(kMaxSecondsPerItem) + ", got " + seconds.dump());
        ok = false;
      } else {
        s.seconds = seconds.get<double>();
      }
    }
    if (!CheckUsabilityOf(where, item, usability, s)) ok = false;
    auto [first, added] = seen_.emplace(item, where);
    if (!added) {
      Error(where, "item '" + item + "' is scored twice (first at " + first->second + ")");
      ok = false;
    }
    if (ok) scored.push_back(std::move(s));
  }

  // Checks an item's usability fields into `s`; false on any error.
  bool CheckUsabilityOf(const std::string& where, const std::string& item,
                        const UsabilityFields& fields, Scored& s) {
    CheckedUsability checked = CheckUsability(item, fields);
    for (const std::string& error : checked.errors)
      Error(where, error);
    if (!checked.errors.empty()) return false;
    if (checked.usability)
      s.usability = store::Usability{.item_id = item,
                                     .reviewer = s.reviewer,
                                     .usability = *checked.usability,
                                     .corrected_text = std::move(checked.corrected_text),
                                     .correction_seconds = checked.correction_seconds};
    return true;
  }

  void ReadJsonLines(const std::string& file, const std::string& text) {
    const std::vector<std::string> lines = Split(text, '\n');
    const Export* x = nullptr;
    std::string reviewer;
    bool header = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string where = Where(file, static_cast<int>(i) + 1);
      const std::string_view line = Trim(lines[i]);
      if (line.empty()) continue;
      json value;
      try {
        value = json::parse(line);
      } catch (const json::parse_error& e) {
        std::string what = e.what();
        const size_t colon = what.find("]: ");  // "[json.exception.parse_error.101] parse error..."
        Error(where,
              "not valid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 3)));
        if (!header) return;
        continue;
      } catch (const json::out_of_range& e) {
        // A number beyond a double's range (1e400) is JSON that nlohmann will not read.
        std::string what = e.what();
        const size_t bracket = what.find("] ");  // "[json.exception.out_of_range.406] number..."
        Error(where, bracket == std::string::npos ? what : what.substr(bracket + 2));
        if (!header) return;
        continue;
      }
      if (!header) {
        header = true;
        if (!value.is_object() || !value.contains("format") ||
            value["format"] != "stagegate-scores" || !value.contains("version") ||
            value["version"] != 1 || !value.contains("export_id") ||
            !value["export_id"].is_string() || !value.contains("reviewer") ||
            !value["reviewer"].is_string()) {
          Error(where,
                "not a stagegate scores file: the first line must be {\"format\": "
                "\"stagegate-scores\", \"version\": 1, \"export_id\": ..., \"reviewer\": ...}");
          return;
        }
        reviewer = value["reviewer"].get<std::string>();
        x = Header(where, value["export_id"].get<std::string>(), reviewer);
        if (!x) return;
        continue;
      }
      if (!value.is_object() || !value.contains("item") || !value["item"].is_string() ||
          !value.contains("scores") || !value["scores"].is_object()) {
        Error(where, "each line after the first must be an object with \"item\" and \"scores\"");
        continue;
      }
      std::vector<std::pair<std::string, json>> values;
      for (const auto& [criterion, v] : value["scores"].items())
        values.emplace_back(criterion, v);
      const auto field = [&](const char* name) {
        return value.contains(name) ? value[name] : json(nullptr);
      };
      Check(where, *x, reviewer, value["item"].get<std::string>(), values, field("seconds"),
            {field("usability"), field("corrected_text"), field("correction_seconds")});
    }
    if (!header) Error(Where(file, 1), "the file is empty");
  }

  // A number column's cell: null when empty or absent, the number, or else the text as given.
  static json NumberCell(const CsvRecord& record, std::optional<size_t> col) {
    if (!col || Trim(record.fields[*col]).empty()) return nullptr;
    json value = json::parse(Trim(record.fields[*col]), nullptr, false);
    return value.is_discarded() || !value.is_number() ? json(std::string(Trim(record.fields[*col])))
                                                      : value;
  }

  // The usability columns of a row (old packets have none): empty cells are not given. The
  // corrected text is kept as typed; only a cell of nothing but spaces counts as empty.
  static UsabilityFields UsabilityCells(
      const CsvRecord& record,
      const std::function<std::optional<size_t>(const std::string&)>& column) {
    UsabilityFields fields;
    if (const std::optional<size_t> col = column("usability");
        col && !Trim(record.fields[*col]).empty())
      fields.usability = std::string(Trim(record.fields[*col]));
    if (const std::optional<size_t> col = column("corrected_text");
        col && !Trim(record.fields[*col]).empty())
      fields.corrected_text = record.fields[*col];
    fields.correction_seconds = NumberCell(record, column("correction_seconds"));
    return fields;
  }

  void ReadCsv(const std::string& file, const std::string& text) {
    int unclosed = 0;
    const std::vector<CsvRecord> parsed = ParseCsv(text, unclosed);
    if (unclosed) {
      Error(Where(file, unclosed), "a quoted field is not closed");
      return;
    }
    const std::vector<CsvRecord>* records = &parsed;
    if (records->empty()) {
      Error(Where(file, 1), "the file is empty");
      return;
    }
    const std::vector<std::string>& head = records->front().fields;
    const auto column = [&](const std::string& name) -> std::optional<size_t> {
      auto at = std::find(head.begin(), head.end(), name);
      return at == head.end() ? std::nullopt : std::optional<size_t>(at - head.begin());
    };
    const std::optional<size_t> export_col = column("export_id"), reviewer_col = column("reviewer"),
                                item_col = column("item"), seconds_col = column("seconds");
    if (!export_col || !reviewer_col || !item_col) {
      Error(Where(file, 1),
            "not a stagegate scores file: the header must have the columns "
            "export_id, reviewer and item");
      return;
    }
    static const std::set<std::string> kText = {
        "export_id", "reviewer", "item",      "conversation",   "answer",
        "reference", "seconds",  "usability", "corrected_text", "correction_seconds"};
    for (const CsvRecord& record : std::span(*records).subspan(1)) {
      const std::string where = Where(file, record.line);
      if (record.fields.size() != head.size()) {
        Error(where, "has " + std::to_string(record.fields.size()) + " fields, the header " +
                         std::to_string(head.size()));
        continue;
      }
      const Export* x = Header(where, record.fields[*export_col], record.fields[*reviewer_col]);
      if (!x) continue;
      std::vector<std::pair<std::string, json>> values;
      for (size_t c = 0; c < head.size(); ++c) {
        if (kText.contains(head[c])) continue;
        const std::string_view cell = Trim(record.fields[c]);
        json value = nullptr;
        if (!cell.empty()) {
          value = json::parse(cell, nullptr, false);
          if (value.is_discarded() || !value.is_number()) value = std::string(cell);
        }
        values.emplace_back(head[c], value);
      }
      Check(where, *x, record.fields[*reviewer_col], record.fields[*item_col], values,
            NumberCell(record, seconds_col), UsabilityCells(record, column));
    }
  }

  const std::map<std::string, Export>& exports_;
  const std::map<std::string, Item>& items_;
  std::map<std::string, std::string> seen_;  // item -> where it was first scored
};

// The run's exports to reviewers (an LLM judge's are not theirs to import into), by id, with
// their rubrics' criteria and scales.
Result<std::map<std::string, Export>> ReviewerExports(store::Store& store,
                                                      const std::string& run_id) {
  Result<std::vector<store::ExportInfo>> stored = store.ListExports(run_id);
  if (!stored.ok()) return stored.status();
  std::map<std::string, Export> exports;
  for (const store::ExportInfo& info : *stored) {
    if (info.scorer != store::kReviewersScorer) continue;
    Export x{.id = info.export_id};
    for (const store::StoredRubric::Criterion& c : store::ParseRubric(info.rubric_json).criteria) {
      x.criteria.push_back(c.id);
      x.levels[c.id] = c.levels;
    }
    exports.emplace(x.id, std::move(x));
  }
  return exports;
}

// Counts each read usability judgement against the store's and adds those to write; a changed
// one without `replace` is an error.
Status PlanUsability(store::Store& store, const std::vector<Scored>& scored, bool replace,
                     int64_t now_ms, ImportResult& result, std::vector<store::Usability>& writes) {
  for (const Scored& s : scored) {
    if (!s.usability) continue;
    Result<std::optional<store::Usability>> stored = store.FindUsability(s.item, s.reviewer);
    if (!stored.ok()) return stored.status();
    if (!stored->has_value()) {
      ++result.usability_added;
    } else if ((*stored)->SameAs(*s.usability)) {
      ++result.usability_unchanged;
      continue;
    } else if (replace) {
      ++result.usability_replaced;
    } else {
      result.errors.push_back(s.where + ": item '" + s.item +
                              "': the store has another usability "
                              "judgement (" +
                              (*stored)->usability +
                              ") from an earlier import; "
                              "give --replace to change it (to " +
                              s.usability->usability + ")");
      continue;
    }
    writes.push_back(*s.usability);
    writes.back().imported_unix_ms = now_ms;
  }
  return Status::Ok();
}

}  // namespace

Result<ImportResult> ImportScores(store::Store& store, const std::string& run_id,
                                  const std::vector<std::string>& files,
                                  const ImportOptions& options) {
  Result<std::map<std::string, Export>> exports = ReviewerExports(store, run_id);
  if (!exports.ok()) return exports.status();
  if (exports->empty())
    return Status::InvalidInput("run " + run_id + " has no export: run `stagegate export " +
                                run_id + "` first");
  Result<std::vector<store::ReviewItem>> stored_items = store.ListReviewItems(run_id);
  if (!stored_items.ok()) return stored_items.status();
  std::map<std::string, Item> items;
  for (const store::ReviewItem& item : *stored_items)
    items.emplace(item.item_id, Item{item.export_id, item.reviewer});

  Reader reader(*exports, items);
  for (const std::string& file : files)
    reader.Read(file);
  ImportResult result;
  result.errors = std::move(reader.errors);

  // What is stored already: same value, nothing to do; a different one needs --replace.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::vector<store::Score> writes;
  for (const Scored& s : reader.scored) {
    ++result.items;
    for (const auto& [criterion, value] : s.scores) {
      Result<std::optional<int64_t>> stored = store.FindScore(s.item, s.reviewer, criterion);
      if (!stored.ok()) return stored.status();
      if (!stored->has_value()) {
        ++result.added;
      } else if (**stored == value) {
        ++result.unchanged;
        continue;
      } else if (options.replace) {
        ++result.replaced;
      } else {
        result.errors.push_back(s.where + ": item '" + s.item + "', " + criterion +
                                ": the store has " + std::to_string(**stored) +
                                " from an earlier import; give --replace to change it to " +
                                std::to_string(value));
        continue;
      }
      writes.push_back({.item_id = s.item,
                        .reviewer = s.reviewer,
                        .criterion = criterion,
                        .value = value,
                        .seconds = s.seconds,
                        .source = "reviewer",
                        .imported_unix_ms = now_ms});
    }
  }
  std::vector<store::Usability> usability;
  SG_RETURN_IF_ERROR(
      PlanUsability(store, reader.scored, options.replace, now_ms, result, usability));
  if (!result.errors.empty()) {
    result.added = result.unchanged = result.replaced = 0;
    result.usability_added = result.usability_unchanged = result.usability_replaced = 0;
    return result;
  }
  SG_RETURN_IF_ERROR(store.AddScores(writes));
  SG_RETURN_IF_ERROR(store.AddUsability(usability));
  return result;
}

}  // namespace stagegate::review

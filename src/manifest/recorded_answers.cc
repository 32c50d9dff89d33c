#include "manifest/recorded_answers.h"

#include <charconv>
#include <cmath>
#include <map>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/row_file.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {
namespace {

using json = nlohmann::json;

// The longest time to resolution taken: a year, beyond which the figure is a mistake.
constexpr double kMaxResolutionS = 366.0 * 24 * 3600;

class AnswerReader {
 public:
  AnswerReader(const std::string& path, const Corpus& corpus, Diagnostics& diagnostics)
      : path_(path), corpus_(corpus), diagnostics_(diagnostics) {}

  void Add(const Row& row) {
    if (answers_.size() >= kMaxRecordedAnswers) {
      if (answers_.size() == kMaxRecordedAnswers && !too_many_) {
        too_many_ = true;
        Error(row.line, "more than 100,000 answers: split the file");
      }
      return;
    }
    const size_t errors = diagnostics_.size();
    RecordedAnswer a{.line = row.line};
    a.task_id = Text(row, "task_id", false);
    if (a.task_id.empty() && diagnostics_.size() == errors) Error(row.line, "no task_id");
    if (!a.task_id.empty() && !corpus_.FindTask(a.task_id))
      Error(row.line, "task '" + ShownText(a.task_id, 80) + "' is not in the corpus" +
                          DidYouMean(a.task_id, corpus_.TaskIds()));
    a.answer = Text(row, "answer", true);
    if (a.answer.empty() && diagnostics_.size() == errors) Error(row.line, "the answer is empty");
    if (a.answer.size() > kMaxRecordedAnswerBytes)
      Error(row.line, "the answer is " + DescribeBytes(a.answer.size()) + "; at most " +
                          DescribeBytes(kMaxRecordedAnswerBytes) + " are read");
    a.answered_by = Text(row, "answered_by", false);
    a.resolution_s = Seconds(row);
    if (diagnostics_.size() != errors) return;  // a line with a problem answers nothing
    if (auto [at, added] = first_line_.emplace(a.task_id, row.line); !added)
      return Error(row.line, "task '" + ShownText(a.task_id, 80) +
                                 "' is answered twice (first at line " +
                                 std::to_string(at->second) + "): keep one answer a task");
    answers_.push_back(std::move(a));
  }

  std::vector<RecordedAnswer> Take() { return std::move(answers_); }

 private:
  void Error(int line, const std::string& message) {
    diagnostics_.Error({path_, line, 0}, message);
  }

  // A text field, trimmed: absent, null or blank gives "".
  std::string Text(const Row& row, const std::string& key, bool line_breaks) {
    auto found = row.fields.find(key);
    if (found == row.fields.end() || found->second.is_null()) return "";
    if (!found->second.is_string()) {
      Error(row.line, "'" + key + "' must be text, got " + std::string(found->second.type_name()));
      return "";
    }
    std::string text(Trim(found->second.get<std::string>()));
    if (HasControlCharacter(text, line_breaks)) {
      Error(row.line, "'" + key + "' holds a control character");
      return "";
    }
    return text;
  }

  // resolution_s: a number of seconds (a JSON number, or a CSV cell holding one), 0 or more.
  std::optional<double> Seconds(const Row& row) {
    auto found = row.fields.find("resolution_s");
    if (found == row.fields.end() || found->second.is_null()) return std::nullopt;
    std::optional<double> seconds;
    if (found->second.is_number()) {
      seconds = found->second.get<double>();
    } else if (found->second.is_string()) {
      const std::string_view cell = Trim(found->second.get<std::string>());
      if (cell.empty()) return std::nullopt;
      double value = 0;
      const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
      if (error == std::errc() && end == cell.data() + cell.size()) seconds = value;
    }
    if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > kMaxResolutionS) {
      Error(row.line,
            "'resolution_s' must be a number of seconds from 0 to 31622400 (a year), got " +
                ShownText(found->second.dump(), 40));
      return std::nullopt;
    }
    return seconds;
  }

  const std::string& path_;
  const Corpus& corpus_;
  Diagnostics& diagnostics_;
  std::map<std::string, int> first_line_;  // task -> the line that answered it
  std::vector<RecordedAnswer> answers_;
  bool too_many_ = false;
};

}  // namespace

const std::vector<std::string>& RecordedAnswerColumns() {
  static const std::vector<std::string> columns = {"task_id", "answer", "resolution_s",
                                                   "answered_by"};
  return columns;
}

std::vector<RecordedAnswer> ReadRecordedAnswers(const std::string& path, const std::string& text,
                                                const Corpus& corpus, Diagnostics& diagnostics) {
  const RowFileKind kind{.noun = "answer",
                         .example = "{\"task_id\": \"...\", \"answer\": \"...\"}",
                         .columns = RecordedAnswerColumns(),
                         .required_column = "task_id",
                         .max_bytes = kMaxManifestBytes};
  AnswerReader reader(path, corpus, diagnostics);
  for (const Row& row : ReadRows(path, text, kind, diagnostics))
    reader.Add(row);
  return reader.Take();
}

}  // namespace stagegate::manifest

#include "telemetry/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace stagegate::telemetry {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// ASCII only: the format's names are, and <cctype> would depend on the locale.
bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}
bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsMetricStart(char c) {
  return IsLetter(c) || c == ':';
}
bool IsMetricChar(char c) {
  return IsMetricStart(c) || IsDigit(c);
}
bool IsLabelChar(char c) {
  return IsLetter(c) || IsDigit(c);
}

bool IsMetricType(std::string_view type) {
  return type == "counter" || type == "gauge" || type == "histogram" || type == "summary" ||
         type == "untyped";
}

// The spellings Prometheus writes for the special values, else a decimal float. A leading '+'
// is accepted as Go's ParseFloat accepts it (from_chars does not).
std::optional<double> ParseValue(std::string_view token) {
  if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (token == "+Inf" || token == "Inf") return std::numeric_limits<double>::infinity();
  if (token == "-Inf") return -std::numeric_limits<double>::infinity();
  if (token.starts_with('+') && !token.starts_with("+-")) token.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  // from_chars also reads "inf" and "nan" in any case, which Prometheus does not write.
  if (error != std::errc() || end != token.data() + token.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<int64_t> ParseTimestamp(std::string_view token) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// Reads one line (without its ending). At the first thing it cannot read it records where and
// why, and returns false: the rest of a broken line cannot be trusted.
class LineParser {
 public:
  explicit LineParser(std::string_view line) : line_(line) {}

  bool Parse(Exposition& out) {
    SkipBlanks();
    if (AtEnd()) return true;
    if (Peek() == '#') return ParseComment(out.families);
    Sample sample;
    if (!ParseSample(sample)) return false;
    out.samples.push_back(std::move(sample));
    return true;
  }

  size_t error_column() const { return error_at_ + 1; }
  const std::string& error() const { return error_; }

 private:
  bool ParseComment(std::vector<MetricFamily>& families);
  bool ParseSample(Sample& sample);
  bool ReadLabels(Labels& labels);
  bool ReadLabelValue(std::string& value);
  bool ReadEscape(bool in_label_value, std::string& out);
  bool ReadName(bool (*is_start)(char), bool (*is_char)(char), const char* expected,
                std::string& name);

  bool AtEnd() const { return pos_ == line_.size(); }
  char Peek() const { return AtEnd() ? '\0' : line_[pos_]; }
  bool Consume(char c) {
    if (AtEnd() || line_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void SkipBlanks() {
    while (!AtEnd() && IsBlank(line_[pos_]))
      ++pos_;
  }
  // The characters up to the next blank or the end of the line.
  std::string_view Token() {
    const size_t start = pos_;
    while (!AtEnd() && !IsBlank(line_[pos_]))
      ++pos_;
    return line_.substr(start, pos_ - start);
  }
  bool Fail(size_t at, std::string message) {
    error_at_ = at;
    error_ = std::move(message);
    return false;
  }

  std::string_view line_;
  size_t pos_ = 0;
  size_t error_at_ = 0;
  std::string error_;
};

bool LineParser::ParseComment(std::vector<MetricFamily>& families) {
  ++pos_;  // the '#'
  SkipBlanks();
  const std::string_view keyword = Token();
  if (keyword != "HELP" && keyword != "TYPE") return true;  // a plain comment
  SkipBlanks();
  std::string name;
  if (!ReadName(IsMetricStart, IsMetricChar, "expected a metric name", name)) return false;
  if (!AtEnd() && !IsBlank(Peek())) return Fail(pos_, "invalid character in metric name");
  SkipBlanks();
  std::string text;
  if (keyword == "HELP") {
    while (!AtEnd()) {
      const char c = line_[pos_++];
      if (c != '\\') {
        text += c;
      } else if (!ReadEscape(false, text)) {
        return false;
      }
    }
  } else {
    const size_t type_at = pos_;
    text = Token();
    if (!IsMetricType(text))
      return Fail(type_at,
                  "expected a metric type (counter, gauge, histogram, summary or untyped)");
    SkipBlanks();
    if (!AtEnd()) return Fail(pos_, "unexpected text after the metric type");
  }
  auto family = std::find_if(families.begin(), families.end(),
                             [&](const MetricFamily& f) { return f.name == name; });
  if (family == families.end()) family = families.insert(family, MetricFamily{.name = name});
  (keyword == "HELP" ? family->help : family->type) = std::move(text);
  return true;
}

bool LineParser::ParseSample(Sample& sample) {
  if (!ReadName(IsMetricStart, IsMetricChar, "expected a metric name", sample.name)) return false;
  if (!AtEnd() && !IsBlank(Peek()) && Peek() != '{')
    return Fail(pos_, "invalid character in metric name");
  SkipBlanks();
  if (Consume('{') && !ReadLabels(sample.labels)) return false;
  SkipBlanks();

  const size_t value_at = pos_;
  const std::string_view value = Token();
  if (value.empty()) return Fail(value_at, "expected a value");
  const std::optional<double> number = ParseValue(value);
  if (!number) return Fail(value_at, "invalid value '" + std::string(value) + "'");
  sample.value = *number;
  SkipBlanks();
  if (AtEnd()) return true;

  const size_t timestamp_at = pos_;
  const std::string_view timestamp = Token();
  sample.timestamp_ms = ParseTimestamp(timestamp);
  if (!sample.timestamp_ms)
    return Fail(timestamp_at, "invalid timestamp '" + std::string(timestamp) + "'");
  SkipBlanks();
  if (!AtEnd()) return Fail(pos_, "unexpected text after the timestamp");
  return true;
}

// After the '{', up to and including the '}'.
bool LineParser::ReadLabels(Labels& labels) {
  while (true) {
    SkipBlanks();
    if (Consume('}')) return true;  // also after a trailing comma
    const size_t name_at = pos_;
    std::string name;
    if (!ReadName(IsLetter, IsLabelChar, "expected a label name", name)) return false;
    if (std::any_of(labels.begin(), labels.end(), [&](const auto& l) { return l.first == name; }))
      return Fail(name_at, "duplicate label '" + name + "'");
    SkipBlanks();
    if (!Consume('=')) return Fail(pos_, "expected '=' after label name");
    SkipBlanks();
    std::string value;
    if (!ReadLabelValue(value)) return false;
    labels.emplace_back(std::move(name), std::move(value));
    SkipBlanks();
    if (Consume('}')) return true;
    if (!Consume(',')) return Fail(pos_, "expected ',' or '}' after label value");
  }
}

bool LineParser::ReadLabelValue(std::string& value) {
  const size_t open_at = pos_;
  if (!Consume('"')) return Fail(pos_, "expected '\"' to open the label value");
  while (!AtEnd()) {
    const char c = line_[pos_++];
    if (c == '"') return true;
    if (c != '\\') {
      value += c;
    } else if (!ReadEscape(true, value)) {
      return false;
    }
  }
  return Fail(open_at, "unterminated label value");
}

// Appends the character escaped by the backslash just read. Only label values may escape '"';
// Prometheus rejects \" in a help text too.
bool LineParser::ReadEscape(bool in_label_value, std::string& out) {
  const size_t backslash_at = pos_ - 1;
  if (AtEnd()) return Fail(backslash_at, "a backslash ends the line");
  const char c = line_[pos_];
  if (c != '\\' && c != 'n' && !(in_label_value && c == '"'))
    return Fail(backslash_at, std::string("unknown escape '\\") + c + "'");
  out += c == 'n' ? '\n' : c;
  ++pos_;
  return true;
}

bool LineParser::ReadName(bool (*is_start)(char), bool (*is_char)(char), const char* expected,
                          std::string& name) {
  if (AtEnd() || !is_start(line_[pos_])) return Fail(pos_, expected);
  const size_t start = pos_;
  while (!AtEnd() && is_char(line_[pos_]))
    ++pos_;
  name = line_.substr(start, pos_ - start);
  return true;
}

}  // namespace

Result<Exposition> ParsePrometheusText(std::string_view text) {
  Exposition exposition;
  std::string errors;
  int bad_lines = 0;
  for (int line_number = 1; !text.empty(); ++line_number) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);

    LineParser parser(line);
    if (parser.Parse(exposition)) continue;
    if (++bad_lines > kMaxPrometheusErrors) continue;
    if (!errors.empty()) errors += '\n';
    errors += "line " + std::to_string(line_number) + ", column " +
              std::to_string(parser.error_column()) + ": " + parser.error();
  }
  if (bad_lines > kMaxPrometheusErrors)
    errors += "\n" + std::to_string(bad_lines - kMaxPrometheusErrors) + " more bad lines not shown";
  if (bad_lines > 0) return Status::InvalidInput(errors);
  return exposition;
}

std::optional<double> FindValue(const Exposition& exposition, std::string_view name,
                                const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const Sample& sample : exposition.samples) {
    if (sample.name != name) continue;
    const bool matches = std::all_of(labels.begin(), labels.end(), [&](const auto& wanted) {
      return std::find(sample.labels.begin(), sample.labels.end(), wanted) != sample.labels.end();
    });
    if (matches) return sample.value;
  }
  return std::nullopt;
}

}  // namespace stagegate::telemetry

#include "manifest/yaml_reader.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "base/files.h"
#include "base/strings.h"

namespace stagegate::manifest {

namespace {

// How much of a scalar a message quotes.
constexpr size_t kMaxQuotedBytes = 60;

bool IsQuoted(const YAML::Node& node) {
  return node.Tag() == "!";
}

bool IsPresent(const YAML::Node& node) {
  return node.IsDefined() && !node.IsNull();
}

// A number's text that strtod reads whole, but only as an underflow (to a subnormal number or to
// 0) or an overflow.
enum class OutOfRange { kNo, kTooSmall, kTooLarge };

OutOfRange NumberOutOfRange(const std::string& text) {
  if (text.empty()) return OutOfRange::kNo;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return OutOfRange::kNo;
  if (errno == ERANGE) return std::fabs(value) > 1 ? OutOfRange::kTooLarge : OutOfRange::kTooSmall;
  if (std::isfinite(value) && value != 0 && std::fabs(value) < DBL_MIN)
    return OutOfRange::kTooSmall;
  return OutOfRange::kNo;
}

// The number `text` is, when it is one of normal size (or 0).
std::optional<double> ParseDouble(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
    return std::nullopt;
  if (value != 0 && std::fabs(value) < DBL_MIN) return std::nullopt;  // subnormal
  return value;
}

std::optional<int64_t> ParseInteger(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size() || errno == ERANGE) return std::nullopt;
  return value;
}

std::optional<bool> ParseBool(const YAML::Node& node) {
  bool value = false;
  if (!YAML::convert<bool>::decode(node, value)) return std::nullopt;
  return value;
}

}  // namespace

SourcePos YamlFile::Pos(const YAML::Node& node) const {
  YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {path_, 0, 0};
  return {path_, mark.line + first_line_, mark.column + 1};
}

void YamlFile::Error(const YAML::Node& node, std::string message) const {
  diagnostics_->Error(Pos(node), std::move(message));
}

void YamlFile::Error(SourcePos pos, std::string message) const {
  diagnostics_->Error(std::move(pos), std::move(message));
}

namespace {

// A budget of nodes for the tag walk: an alias bomb is reported by ReadJson, which has its own.
constexpr size_t kMaxWalkNodes = 1'000'000;

// YAML's own tags ("!!str", written out as tag:yaml.org,2002:str), a quoted scalar's "!" and a
// plain node's "?" are plain YAML; any other tag ("!python/object") asks for a type stagegate
// does not have, so it is refused rather than read as its bare value.
bool IsPlainTag(const std::string& tag) {
  return tag.empty() || tag == "?" || tag == "!" || tag.starts_with("tag:yaml.org,2002:");
}

void CheckTags(const YamlFile& file, const YAML::Node& node, size_t& budget) {
  if (budget == 0 || !node.IsDefined()) return;
  --budget;
  if (!IsPlainTag(node.Tag())) {
    file.Error(node, "the tag '" + node.Tag() + "' is not supported: stagegate reads plain YAML");
    return;
  }
  if (node.IsSequence()) {
    for (const YAML::Node& item : node)
      CheckTags(file, item, budget);
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      CheckTags(file, entry.first, budget);
      CheckTags(file, entry.second, budget);
    }
  }
}

// Where a second document of `text` starts, if it has one. The parser is asked for two documents
// and no more: YAML::LoadAll asks until there are none, and on some malformed input yaml-cpp 0.7
// yields empty documents forever.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::optional<YAML::Mark> SecondDocument(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
  if (!parser.HandleNextDocument(handler) || !parser.HandleNextDocument(handler)) return {};
  return handler.starts.size() >= 2 ? handler.starts[1] : YAML::Mark::null_mark();
}

}  // namespace

bool CheckUtf8(Diagnostics& diagnostics, const std::string& path, std::string_view text,
               int first_line) {
  const std::optional<size_t> bad = FirstInvalidUtf8(text);
  if (!bad) return true;
  int line = first_line;
  size_t line_begin = 0;
  for (size_t i = 0; i < *bad; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_begin = i + 1;
    }
  }
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
  diagnostics.Error({path, line, static_cast<int>(*bad - line_begin) + 1},
                    std::string("not UTF-8: the byte ") + byte +
                        " starts no UTF-8 character; save the file as UTF-8");
  return false;
}

std::optional<YAML::Node> YamlFile::Parse(const std::string& text) const {
  if (text.size() > kMaxManifestBytes) {
    diagnostics_->Error({path_, 0, 0}, "larger than " + DescribeBytes(kMaxManifestBytes) +
                                           ", the most a manifest may be");
    return std::nullopt;
  }
  if (!CheckUtf8(*diagnostics_, path_, text, first_line_)) return std::nullopt;
  YAML::Node document;
  std::optional<YAML::Mark> second;
  try {
    document = YAML::Load(text);
    second = SecondDocument(text);
  } catch (const YAML::Exception& error) {
    SourcePos pos{path_, 0, 0};
    if (!error.mark.is_null()) pos = {path_, error.mark.line + first_line_, error.mark.column + 1};
    diagnostics_->Error(pos, "YAML syntax error: " + error.msg);
    return std::nullopt;
  }
  if (second) {
    SourcePos pos{path_, 0, 0};
    if (!second->is_null()) pos = {path_, second->line + first_line_, second->column + 1};
    diagnostics_->Error(pos, "a second YAML document (after '---'): a manifest file holds one");
    return std::nullopt;
  }
  const size_t before = diagnostics_->size();
  size_t budget = kMaxWalkNodes;
  CheckTags(*this, document, budget);
  if (diagnostics_->size() != before) return std::nullopt;
  return document;
}

std::string Describe(const YAML::Node& node) {
  if (!IsPresent(node)) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  // A long value is not quoted: a path that names a file that is not a manifest at all (a rubric
  // path naming /etc/shadow) must not have that file printed back in the problems.
  const std::string& text = node.Scalar();
  if (text.size() > kMaxQuotedBytes || text.find('\n') != std::string::npos)
    return "a text of " + std::to_string(text.size()) + " bytes";
  if (IsQuoted(node)) return "the quoted string \"" + text + "\"";
  return "'" + text + "'";
}

std::optional<std::string> ReadString(const YamlFile& file, const YAML::Node& node,
                                      std::string_view name) {
  if (!node.IsScalar()) {
    file.Error(node, std::string(name) + " must be a string, got " + Describe(node));
    return std::nullopt;
  }
  return node.Scalar();
}

bool CheckRange(const YamlFile& file, const YAML::Node& node, std::string_view name, double value,
                Range range) {
  const double min = range.min.value_or(-kLargestNumber);
  const double max = range.max.value_or(kLargestNumber);
  const bool below = range.min_exclusive && range.min ? value <= min : value < min;
  const bool above = value > max;
  if (!below && !above) return true;
  std::string rule;
  if (range.min && range.max) {
    rule = range.min_exclusive
               ? "greater than " + FormatNumber(min) + " and at most " + FormatNumber(max)
               : "between " + FormatNumber(min) + " and " + FormatNumber(max);
  } else if (below) {
    rule = (range.min_exclusive ? "greater than " : "at least ") + FormatNumber(min);
  } else {
    rule = "at most " + FormatNumber(max);
  }
  file.Error(node, std::string(name) + " must be " + rule + ", got " + FormatNumber(value, 6));
  return false;
}

std::optional<double> ReadNumber(const YamlFile& file, const YAML::Node& node,
                                 std::string_view name, Range range) {
  std::optional<double> value;
  if (node.IsScalar() && !IsQuoted(node)) value = ParseDouble(node.Scalar());
  if (!value) {
    // A number too small or too large for a double is one, and is refused as what it is.
    const OutOfRange out =
        node.IsScalar() && !IsQuoted(node) ? NumberOutOfRange(node.Scalar()) : OutOfRange::kNo;
    if (out == OutOfRange::kTooSmall)
      file.Error(node, std::string(name) + " is too small: " + Describe(node) +
                           " is below 2.2e-308, the smallest normal number (it would be kept as "
                           "a subnormal number, or as 0)");
    else if (out == OutOfRange::kTooLarge)
      file.Error(node, std::string(name) + " is too large: " + Describe(node) +
                           " is beyond 1.8e308, the largest number");
    else
      file.Error(node, std::string(name) + " must be a number, got " + Describe(node));
    return std::nullopt;
  }
  if (!CheckRange(file, node, name, *value, range)) return std::nullopt;
  return value;
}

std::optional<int64_t> ReadInteger(const YamlFile& file, const YAML::Node& node,
                                   std::string_view name, Range range) {
  std::optional<int64_t> value;
  if (node.IsScalar() && !IsQuoted(node)) value = ParseInteger(node.Scalar());
  if (!value) {
    file.Error(node, std::string(name) + " must be a whole number, got " + Describe(node));
    return std::nullopt;
  }
  if (!CheckRange(file, node, name, static_cast<double>(*value), range)) return std::nullopt;
  return value;
}

std::optional<bool> ReadBool(const YamlFile& file, const YAML::Node& node, std::string_view name) {
  std::optional<bool> value;
  if (node.IsScalar() && !IsQuoted(node)) value = ParseBool(node);
  if (!value) file.Error(node, std::string(name) + " must be true or false, got " + Describe(node));
  return value;
}

std::optional<std::vector<std::string>> ReadStringList(const YamlFile& file, const YAML::Node& node,
                                                       std::string_view name) {
  if (!node.IsSequence()) {
    file.Error(node, std::string(name) + " must be a list of strings, got " + Describe(node));
    return std::nullopt;
  }
  std::vector<std::string> items;
  bool ok = true;
  for (const YAML::Node& item : node) {
    std::optional<std::string> text = ReadString(file, item, std::string(name) + " item");
    if (text) {
      items.push_back(*text);
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return items;
}

std::optional<size_t> ReadEnumIndex(const YamlFile& file, const YAML::Node& node,
                                    std::string_view name, const std::vector<std::string>& names) {
  if (node.IsScalar()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (node.Scalar() == names[i]) return i;
  }
  std::string message =
      std::string(name) + " must be one of " + Join(names, ", ") + ", got " + Describe(node);
  if (node.IsScalar()) message += DidYouMean(node.Scalar(), names);
  file.Error(node, message);
  return std::nullopt;
}

namespace {

// Aliases let a few lines of YAML name billions of nodes; a budget keeps that from hanging a load.
constexpr size_t kMaxJsonNodes = 100000;

nlohmann::json ToJson(const YamlFile& file, const YAML::Node& node, size_t& budget) {
  if (budget == 0) return nullptr;
  --budget;
  if (!IsPresent(node)) return nullptr;
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (const YAML::Node& item : node)
      array.push_back(ToJson(file, item, budget));
    return array;
  }
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        file.Error(entry.first, "mapping keys must be strings");
        continue;
      }
      object[entry.first.Scalar()] = ToJson(file, entry.second, budget);
    }
    return object;
  }
  const std::string& text = node.Scalar();
  if (IsQuoted(node)) return text;
  if (std::optional<int64_t> integer = ParseInteger(text)) return *integer;
  if (std::optional<double> number = ParseDouble(text)) return *number;
  if (std::optional<bool> flag = ParseBool(node)) return *flag;
  return text;
}

}  // namespace

nlohmann::json ReadJson(const YamlFile& file, const YAML::Node& node) {
  size_t budget = kMaxJsonNodes;
  nlohmann::json value = ToJson(file, node, budget);
  if (budget == 0) {
    file.Error(node, "this value is too large: more than " + std::to_string(kMaxJsonNodes) +
                         " YAML nodes once its aliases are expanded");
    return nullptr;
  }
  return value;
}

MapReader::MapReader(const YamlFile& file, const YAML::Node& node, std::string what)
    : file_(&file), node_(node), what_(std::move(what)) {
  if (!node.IsMap()) {
    file.Error(node, what_ + " must be a mapping, got " + Describe(node));
    return;
  }
  valid_ = true;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      file.Error(entry.first, "mapping keys must be strings, got " + Describe(entry.first));
      continue;
    }
    bool duplicate = false;
    for (const auto& [key, value] : entries_) {
      if (key.Scalar() == entry.first.Scalar()) {
        file.Error(entry.first, "duplicate key '" + entry.first.Scalar() + "' (first at line " +
                                    std::to_string(file.Pos(key).line) + ")");
        duplicate = true;
        break;
      }
    }
    if (!duplicate) entries_.emplace_back(entry.first, entry.second);
  }
}

MapReader::~MapReader() {
  assert((finished_ || !valid_) && "MapReader::Finish() was not called");
}

YAML::Node MapReader::Get(const std::string& key, Need need) {
  known_.push_back(key);
  for (const auto& [key_node, value] : entries_) {
    if (key_node.Scalar() != key) continue;
    if (IsPresent(value)) return value;
    if (need == Need::kRequired) file_->Error(key_node, "'" + key + "' needs a value");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (valid_ && need == Need::kRequired)
    file_->Error(node_, what_ + ": missing required key '" + key + "'");
  return YAML::Node(YAML::NodeType::Undefined);
}

std::optional<std::string> MapReader::String(const std::string& key, Need need) {
  YAML::Node value = Get(key, need);
  if (!value.IsDefined()) return std::nullopt;
  return ReadString(*file_, value, "'" + key + "'");
}

std::optional<double> MapReader::Number(const std::string& key, Need need, Range range) {
  YAML::Node value = Get(key, need);
  if (!value.IsDefined()) return std::nullopt;
  return ReadNumber(*file_, value, "'" + key + "'", range);
}

std::optional<int64_t> MapReader::Integer(const std::string& key, Need need, Range range) {
  YAML::Node value = Get(key, need);
  if (!value.IsDefined()) return std::nullopt;
  return ReadInteger(*file_, value, "'" + key + "'", range);
}

std::optional<bool> MapReader::Bool(const std::string& key, Need need) {
  YAML::Node value = Get(key, need);
  if (!value.IsDefined()) return std::nullopt;
  return ReadBool(*file_, value, "'" + key + "'");
}

std::optional<std::vector<std::string>> MapReader::StringList(const std::string& key, Need need) {
  YAML::Node value = Get(key, need);
  if (!value.IsDefined()) return std::nullopt;
  return ReadStringList(*file_, value, "'" + key + "'");
}

void MapReader::Finish() {
  finished_ = true;
  std::vector<YAML::Node> unknown;
  for (const auto& [key_node, value] : entries_) {
    if (std::find(known_.begin(), known_.end(), key_node.Scalar()) == known_.end())
      unknown.push_back(key_node);
  }
  // Many keys and not one known: a file that is not a manifest (a path naming /etc/shadow reads
  // as a mapping of its lines). One problem, which does not print its lines back.
  if (unknown.size() >= 3 && unknown.size() == entries_.size()) {
    file_->Error(node_, what_ + " has none of its keys: " + std::to_string(unknown.size()) +
                            " unknown keys, not shown (is this the right file?)");
    return;
  }
  for (const YAML::Node& key_node : unknown) {
    const std::string& key = key_node.Scalar();
    const std::string shown = key.size() > kMaxQuotedBytes
                                  ? "of " + std::to_string(key.size()) + " bytes"
                                  : "'" + key + "'";
    file_->Error(key_node, "unknown key " + shown + DidYouMean(key, known_));
  }
}

}  // namespace stagegate::manifest

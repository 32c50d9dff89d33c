#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "manifest/diagnostics.h"
#include "manifest/enum_name.h"

namespace stagegate::manifest {

/// The largest manifest file (scenario, corpus, task file, document, rubric, profile) read.
inline constexpr size_t kMaxManifestBytes = size_t{16} << 20;

/// One parsed YAML text and where its nodes came from: the file as the user named it, and the line
/// at which the text starts within that file (a front-matter block starts below its '---' line).
/// Holds a reference to the Diagnostics, which must outlive it.
class YamlFile {
 public:
  YamlFile(std::string path, Diagnostics& diagnostics, int first_line = 1)
      : path_(std::move(path)), diagnostics_(&diagnostics), first_line_(first_line) {}

  const std::string& path() const { return path_; }
  SourcePos Pos(const YAML::Node& node) const;
  void Error(const YAML::Node& node, std::string message) const;
  void Error(SourcePos pos, std::string message) const;

  /// Parses `text`, which must be one YAML document of UTF-8 text of at most kMaxManifestBytes
  /// with no tags but YAML's own. A problem is reported at its position (a syntax error at
  /// yaml-cpp's mark, a byte that is not UTF-8 at its line and column) and yields nullopt.
  std::optional<YAML::Node> Parse(const std::string& text) const;

 private:
  std::string path_;
  Diagnostics* diagnostics_;
  int first_line_;
};

/// True when all of `text` is UTF-8; otherwise reports the first byte that is not, at its line
/// (counted from `first_line`) and column, and returns false.
bool CheckUtf8(Diagnostics& diagnostics, const std::string& path, std::string_view text,
               int first_line = 1);

enum class Need { kOptional, kRequired };

/// The largest magnitude any manifest number may have unless its Range says otherwise: larger
/// values of counts, durations and intervals only overflow what is computed from them.
inline constexpr double kLargestNumber = 1e9;

/// Allowed values of a number. Errors say "must be at least 0", "must be between 1 and 99", ...
/// With no max, kLargestNumber is the max; with no min, -kLargestNumber is the min.
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
};
inline constexpr Range kAnyNumber{};
inline constexpr Range kNonNegative{.min = 0};
inline constexpr Range kPositive{.min = 0, .min_exclusive = true};
inline constexpr Range kProbability{.min = 0, .max = 1};

// Readers of one value node. `name` is how messages refer to the value ("'rate'", "a level").
// Each reports a problem and returns nullopt when the node is not of the expected kind.
std::optional<std::string> ReadString(const YamlFile& file, const YAML::Node& node,
                                      std::string_view name);
std::optional<double> ReadNumber(const YamlFile& file, const YAML::Node& node,
                                 std::string_view name, Range range = kAnyNumber);
std::optional<int64_t> ReadInteger(const YamlFile& file, const YAML::Node& node,
                                   std::string_view name, Range range = kAnyNumber);
std::optional<bool> ReadBool(const YamlFile& file, const YAML::Node& node, std::string_view name);
std::optional<std::vector<std::string>> ReadStringList(const YamlFile& file, const YAML::Node& node,
                                                       std::string_view name);
bool CheckRange(const YamlFile& file, const YAML::Node& node, std::string_view name, double value,
                Range range);
/// A YAML value as JSON: plain scalars become numbers, booleans or null where YAML reads them so;
/// quoted scalars stay strings.
nlohmann::json ReadJson(const YamlFile& file, const YAML::Node& node);
/// "a list", "a mapping", "nothing" or the scalar in quotes: how a message shows what was found.
std::string Describe(const YAML::Node& node);

std::optional<size_t> ReadEnumIndex(const YamlFile& file, const YAML::Node& node,
                                    std::string_view name, const std::vector<std::string>& names);

template <typename E, size_t N>
std::optional<E> ReadEnum(const YamlFile& file, const YAML::Node& node, std::string_view name,
                          const EnumName<E> (&names)[N]) {
  std::vector<std::string> texts;
  for (const EnumName<E>& entry : names)
    texts.emplace_back(entry.name);
  std::optional<size_t> index = ReadEnumIndex(file, node, name, texts);
  if (!index) return std::nullopt;
  return names[*index].value;
}

/// Reads the keys of one YAML mapping. Every accessor registers its key as known; Finish() then
/// reports each key nobody asked for, with a did-you-mean suggestion, so the schema is exactly
/// the set of keys the loader reads. Duplicate keys are reported on construction. When the node is
/// not a mapping, that is reported once and every accessor finds nothing.
class MapReader {
 public:
  /// `what` names the mapping in messages about missing keys ("target", "stage 'tools'").
  MapReader(const YamlFile& file, const YAML::Node& node, std::string what);
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;
  ~MapReader();

  bool valid() const { return valid_; }
  SourcePos pos() const { return file_->Pos(node_); }
  const YamlFile& file() const { return *file_; }

  /// The value of `key`, or an undefined node when it is absent (reported when required). A null
  /// value counts as absent.
  YAML::Node Get(const std::string& key, Need need = Need::kOptional);
  bool Has(const std::string& key) { return Get(key).IsDefined(); }

  std::optional<std::string> String(const std::string& key, Need need = Need::kOptional);
  std::optional<double> Number(const std::string& key, Need need = Need::kOptional,
                               Range range = kAnyNumber);
  std::optional<int64_t> Integer(const std::string& key, Need need = Need::kOptional,
                                 Range range = kAnyNumber);
  std::optional<bool> Bool(const std::string& key, Need need = Need::kOptional);
  std::optional<std::vector<std::string>> StringList(const std::string& key,
                                                     Need need = Need::kOptional);
  template <typename E, size_t N>
  std::optional<E> Enum(const std::string& key, const EnumName<E> (&names)[N],
                        Need need = Need::kOptional) {
    YAML::Node value = Get(key, need);
    if (!value.IsDefined()) return std::nullopt;
    return ReadEnum(*file_, value, "'" + key + "'", names);
  }

  /// Reports the keys that no accessor asked for. Call once, after the last accessor.
  void Finish();

 private:
  const YamlFile* file_;
  YAML::Node node_;
  std::string what_;
  bool valid_ = false;
  bool finished_ = false;
  std::vector<std::pair<YAML::Node, YAML::Node>> entries_;  // key node, value node
  std::vector<std::string> known_;
};

}  // namespace stagegate::manifest

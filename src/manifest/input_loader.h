#pragma once

#include <string>

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// A file path the map names at `key`, as written and resolved against the file's folder (empty
/// when absent). The file itself is not opened.
PathRef ReadPath(MapReader& map, const std::string& key);

/// Reads a scenario's `input` mapping: its source and what the source takes (token lengths,
/// sessions, a dataset's or trace's keys, a shared prefix, extra body fields). Problems go to
/// the file's diagnostics.
InputSpec ReadInput(const YamlFile& file, const YAML::Node& node);

}  // namespace stagegate::manifest

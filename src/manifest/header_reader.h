#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Where each header name of one stage's `headers:` is written.
using HeaderPositions = std::map<std::string, SourcePos>;

/// Reads a stage's `headers:` mapping into stage.headers, and where each name is written into
/// `positions`. Reports, each at its position: a name that is not an HTTP token, a value with a
/// control character (a CR or LF would inject a header of its own), and a name given twice (names
/// compare case-insensitively; the message names both places).
void ReadHeaders(const YamlFile& file, const YAML::Node& node, Stage& stage,
                 HeaderPositions& positions);

/// Reports, at the header's position, an Authorization header in a stage's `headers:` that would
/// go out beside the one stagegate sends itself: the API key of the target's `api_key_env`, or a
/// persona's token on a stage (this one or a later one that inherits the header) with
/// persona_credentials. A request carries one Authorization header. `positions` holds each
/// stage's, in the order of scenario.stages.
void CheckAuthorizationHeaders(const YamlFile& file, const Scenario& scenario,
                               const std::vector<HeaderPositions>& positions);

}  // namespace stagegate::manifest

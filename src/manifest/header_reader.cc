#include "manifest/header_reader.h"

#include <set>
#include <string>

#include "base/http_header.h"

namespace stagegate::manifest {

void ReadHeaders(const YamlFile& file, const YAML::Node& node, Stage& stage,
                 HeaderPositions& positions) {
  if (!node.IsMap()) {
    file.Error(node, "'headers' must be a mapping of names to values, got " + Describe(node));
    return;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const SourcePos pos = file.Pos(entry.first);
    std::optional<std::string> value = ReadString(file, entry.second, "header '" + name + "'");
    if (!value) continue;
    if (std::optional<std::string> problem = HeaderProblem(name, *value)) {
      // A bad name is the key's fault; a bad value, the value's.
      const std::optional<std::string> name_problem = HeaderProblem(name, "");
      file.Error(name_problem ? pos : file.Pos(entry.second), *problem);
      continue;
    }
    bool repeated = false;
    for (const auto& [earlier, earlier_pos] : positions)
      if (SameHeaderName(earlier, name)) {
        file.Error(pos, "header '" + name + "' is given twice: also as '" + earlier + "' at " +
                            earlier_pos.ToString() + " (names are case-insensitive)");
        repeated = true;
      }
    if (repeated) continue;
    stage.headers[name] = *value;
    positions[name] = pos;
  }
}

void CheckAuthorizationHeaders(const YamlFile& file, const Scenario& scenario,
                               const std::vector<HeaderPositions>& positions) {
  std::optional<SourcePos> inherited;  // the Authorization header the stages so far send
  bool persona_credentials = false;
  for (size_t i = 0; i < scenario.stages.size() && i < positions.size(); ++i) {
    const Stage& stage = scenario.stages[i];
    for (const auto& [name, pos] : positions[i])
      if (SameHeaderName(name, "Authorization")) inherited = pos;
    if (stage.persona_credentials) persona_credentials = *stage.persona_credentials;
    if (!inherited) continue;
    if (!scenario.target.api_key_env.empty())
      file.Error(*inherited,
                 "header 'Authorization' would be sent twice: the target's 'api_key_env' sends "
                 "the API key as 'Authorization: Bearer ...'; give one of them");
    else if (persona_credentials)
      file.Error(*inherited, "header 'Authorization' would be sent twice: stage '" + stage.name +
                                 "' sends each persona's token as 'Authorization: Bearer ...' "
                                 "(persona_credentials); give one of them");
  }
}

}  // namespace stagegate::manifest

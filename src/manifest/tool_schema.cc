#include "manifest/tool_schema.h"

#include <cmath>

namespace stagegate::manifest {
namespace {

bool OfOneType(const nlohmann::json& value, const std::string& name) {
  if (name == "string") return value.is_string();
  if (name == "number") return value.is_number();
  if (name == "integer")
    return value.is_number_integer() ||
           (value.is_number_float() && std::isfinite(value.get<double>()) &&
            std::trunc(value.get<double>()) == value.get<double>());
  if (name == "boolean") return value.is_boolean();
  if (name == "object") return value.is_object();
  if (name == "array") return value.is_array();
  if (name == "null") return value.is_null();
  return true;  // a type this reading does not know constrains nothing
}

}  // namespace

nlohmann::json ArgumentSchemaType(const nlohmann::json& parameters, const std::string& argument) {
  if (!parameters.is_object() || !parameters.contains("properties")) return nullptr;
  const nlohmann::json& properties = parameters["properties"];
  if (!properties.is_object() || !properties.contains(argument)) return nullptr;
  const nlohmann::json& property = properties[argument];
  if (!property.is_object() || !property.contains("type")) return nullptr;
  return property["type"];
}

bool UnknownArgument(const nlohmann::json& parameters, const std::string& argument) {
  if (!parameters.is_object() || !parameters.contains("properties")) return false;
  const nlohmann::json& properties = parameters["properties"];
  return properties.is_object() && !properties.contains(argument);
}

bool OfSchemaType(const nlohmann::json& value, const nlohmann::json& type) {
  if (type.is_string()) return OfOneType(value, type.get<std::string>());
  if (!type.is_array() || type.empty()) return true;
  for (const nlohmann::json& one : type)
    if (!one.is_string() || OfOneType(value, one.get<std::string>())) return true;
  return false;
}

std::string JsonTypeName(const nlohmann::json& value) {
  if (value.is_string()) return "string";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "boolean";
  if (value.is_object()) return "object";
  if (value.is_array()) return "array";
  return "null";
}

std::string SchemaTypeText(const nlohmann::json& type) {
  if (type.is_string()) return type.get<std::string>();
  if (!type.is_array()) return "";
  std::string text;
  for (size_t i = 0; i < type.size(); ++i) {
    if (i) text += i + 1 == type.size() ? " or " : ", ";
    text += type[i].is_string() ? type[i].get<std::string>() : type[i].dump();
  }
  return text;
}

}  // namespace stagegate::manifest

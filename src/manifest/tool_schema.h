#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace stagegate::manifest {

/// The JSON Schema `type` a tool's `parameters` schema gives its argument `argument`
/// (properties.ARGUMENT.type: a name or a list of names), or null when the schema gives none.
nlohmann::json ArgumentSchemaType(const nlohmann::json& parameters, const std::string& argument);

/// Whether the schema declares its arguments (an object of `properties`), and `argument` is not
/// one of them.
bool UnknownArgument(const nlohmann::json& parameters, const std::string& argument);

/// Whether `value` is of the JSON Schema `type` (a name, or a list of names any of which will
/// do): string, number, integer (a number with no fraction, 2.0 included), boolean, object,
/// array, null. A type that is null or not a name or list of names admits every value.
bool OfSchemaType(const nlohmann::json& value, const nlohmann::json& type);

/// The JSON type of `value` in the words of a JSON Schema: "string", "integer", "number",
/// "boolean", "object", "array" or "null".
std::string JsonTypeName(const nlohmann::json& value);

/// `type` for a message: "integer", "string or null"; "" when it is null.
std::string SchemaTypeText(const nlohmann::json& type);

}  // namespace stagegate::manifest

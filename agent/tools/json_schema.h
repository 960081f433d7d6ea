// Checking a JSON value against a JSON Schema: the keywords tool schemas use (type, enum,
// const, properties, required, additionalProperties, items, lengths, bounds, allOf/anyOf/oneOf,
// local $ref). Other keywords are not checked. Used for MCP tools' structured output.
#pragma once

#include <json/json.h>

#include <string>
#include <vector>

namespace lousho::agent::tools {

// How `value` fails `schema`: at most `max` lines "<path>: <problem>" (the path "$" for the
// value, "$.a[2]" inside it); empty when it fits. A schema that is no object (or `true`) takes
// anything; `false` takes nothing. Never throws; nesting past 64 levels is not looked into.
std::vector<std::string> SchemaMismatches(const Json::Value& schema, const Json::Value& value,
                                          size_t max = 5);

}  // namespace lousho::agent::tools

// Freeform tools: a tool whose one argument is a free text "input" (a patch) says so in its
// parameter schema, with the grammar of that text; APIs with custom tools (OpenAI Responses) send
// it raw under that grammar, the others see the plain schema.
#pragma once

#include <json/json.h>

#include <string>
#include <string_view>

#include "support/json_util.h"

namespace lousho::agent {

// The schema member holding the grammar (Lark; "text" for any text).
inline constexpr std::string_view kFreeformGrammarKey = "x-lousho-freeform-grammar";

// The freeform grammar of a tool's parameter schema, or "" for an ordinary tool.
inline std::string FreeformGrammar(const Json::Value& schema) {
  return StringOr(schema, kFreeformGrammarKey);
}

// The schema as APIs without custom tools get it (the grammar member left out).
inline Json::Value WithoutFreeformGrammar(Json::Value schema) {
  if (schema.isObject()) schema.removeMember(std::string(kFreeformGrammarKey));
  return schema;
}

}  // namespace lousho::agent

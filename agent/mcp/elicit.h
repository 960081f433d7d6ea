// What an MCP server asks of the user (elicitation/create, as a 2025 request or inside a 2026
// input_required result), put to the editor: a form-mode question as the editor's form, a
// URL-mode one as its URL step, and a decline where the editor has no way to ask.
#pragma once

#include <json/json.h>

#include <map>
#include <string>
#include <vector>

#include "core/client_services.h"
#include "support/cancel.h"

namespace lousho::agent::mcp {

// The fields of a form-mode request's requestedSchema: strings and numbers as text, enums
// (`enum`, `oneOf` with titles) as a choice, arrays of enums as a multiple choice, booleans as
// a yes/no choice. Properties of any other shape are left out.
std::vector<FormField> FormFieldsOf(const Json::Value& requested_schema);

// The `content` of an accepted ElicitResult: each answer typed by its property (a number, an
// integer, a boolean, an array), and the schema's `default` for a property left unanswered.
// An answer that does not fit its type (a number that is not one) is left out.
Json::Value ElicitContent(const Json::Value& requested_schema,
                          const std::map<std::string, std::vector<std::string>>& answers);

// The ElicitResult for `params` (an ElicitRequest's), asked through `editor` in `session_id`,
// else (a form, where the editor has no forms) field by field through `dialogs` (the RPC
// door's): {"action":"decline"} when neither can ask that kind of question (or both are null),
// "cancel" when the question was dismissed or `cancel` fired.
Json::Value AskEditor(const Json::Value& params, Elicitation* editor, Dialogs* dialogs,
                      const std::string& session_id, const CancelToken& cancel);

}  // namespace lousho::agent::mcp

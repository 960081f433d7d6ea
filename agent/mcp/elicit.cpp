// MCP elicitation through the editor's forms and URL steps.
#include "agent/mcp/elicit.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

Json::Value ActionResult(const char* action) {
  Json::Value r(Json::objectValue);
  r["action"] = action;
  return r;
}

// The choices of an enum property: `enum` (with `enumNames` as titles), or `oneOf`/`anyOf` of
// {const, title}. Empty when the property offers none.
std::vector<FormChoice> ChoicesOf(const Json::Value& prop) {
  std::vector<FormChoice> out;
  const Json::Value& values = MemberOrNull(prop, "enum");
  const Json::Value& names = MemberOrNull(prop, "enumNames");
  if (values.isArray()) {
    for (Json::ArrayIndex i = 0; i < values.size(); ++i) {
      const Json::Value& v = ElementOrNull(values, i);
      if (!v.isString()) continue;
      const Json::Value& n = ElementOrNull(names, i);
      const std::string value = AsString(v).value_or("");
      out.push_back({value, AsString(n).value_or(value)});
    }
    return out;
  }
  for (const char* key : {"oneOf", "anyOf"}) {
    const Json::Value& alts = MemberOrNull(prop, key);
    if (!alts.isArray()) continue;
    for (const auto& alt : alts) {
      std::string value = StringOr(alt, "const");
      if (!value.empty()) out.push_back({value, StringOr(alt, "title", value)});
    }
  }
  return out;
}

std::optional<FormField> FieldOf(const std::string& name, const Json::Value& prop) {
  FormField f;
  f.name = name;
  f.title = StringOr(prop, "title", name);
  f.description = StringOr(prop, "description");
  const std::string type = StringOr(prop, "type");
  if (type == "array") {
    f.kind = FormField::Kind::kMultiChoice;
    f.choices = ChoicesOf(MemberOrNull(prop, "items"));
    if (f.choices.empty()) return std::nullopt;
  } else if (type == "boolean") {
    f.kind = FormField::Kind::kChoice;
    f.choices = {{"true", "Yes"}, {"false", "No"}};
  } else if (type == "string" || type == "number" || type == "integer") {
    f.choices = ChoicesOf(prop);
    f.kind = f.choices.empty() ? FormField::Kind::kText : FormField::Kind::kChoice;
  } else {
    return std::nullopt;
  }
  return f;
}

// One answer as its property's JSON type; null when it does not fit.
Json::Value Typed(const Json::Value& prop, const std::vector<std::string>& answer) {
  const std::string type = StringOr(prop, "type");
  if (type == "array") {
    Json::Value arr(Json::arrayValue);
    for (const auto& v : answer) arr.append(v);
    return arr;
  }
  if (answer.empty()) return Json::Value();
  const std::string& text = answer.front();
  if (type == "boolean") {
    if (text == "true" || text == "false") return Json::Value(text == "true");
    return Json::Value();
  }
  if (type == "number" || type == "integer") {
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(d)) return Json::Value();
    if (type == "number") return Json::Value(d);
    if (d != std::floor(d) || std::fabs(d) > 9.0e15) return Json::Value();
    return Json::Value(static_cast<Json::Int64>(d));
  }
  return Json::Value(text);
}

Json::Value AskForm(const Json::Value& params, Elicitation* editor, const std::string& session_id,
                    const CancelToken& cancel) {
  const Json::Value& schema = MemberOrNull(params, "requestedSchema");
  FormRequest form;
  form.message = StringOr(params, "message");
  form.fields = FormFieldsOf(schema);
  auto reply = editor->AskForm(session_id, form, cancel);
  if (!reply.ok() || reply->action == ElicitationAction::kCancel) return ActionResult("cancel");
  if (reply->action == ElicitationAction::kDecline) return ActionResult("decline");
  Json::Value r = ActionResult("accept");
  r["content"] = ElicitContent(schema, reply->answers);
  return r;
}

Json::Value AskUrl(const Json::Value& params, Elicitation* editor, const std::string& session_id,
                   const CancelToken& cancel) {
  static std::atomic<long long> ids{0};
  UrlRequest step;
  step.elicitation_id = StringOr(params, "elicitationId", "mcp-url-" + std::to_string(++ids));
  step.url = StringOr(params, "url");
  step.message = StringOr(params, "message");
  // Only the user can say it is finished: the page is the server's, not ours.
  auto action = editor->OpenUrl(session_id, step, CancelToken(), cancel);
  if (!action.ok() || *action == ElicitationAction::kCancel) return ActionResult("cancel");
  return ActionResult(*action == ElicitationAction::kAccept ? "accept" : "decline");
}

using DialogAnswer = std::optional<std::vector<std::string>>;

// A choice field as a list of its titles; the value of the one picked.
Result<DialogAnswer> AskChoice(const FormField& f, const std::string& title, Dialogs& dialogs,
                               const std::string& session_id, const CancelToken& cancel) {
  std::vector<std::string> titles;
  for (const auto& c : f.choices) titles.push_back(c.title);
  auto picked = dialogs.Select(session_id, title, titles, cancel);
  if (!picked.ok()) return picked.error();
  if (!picked->has_value()) return DialogAnswer();
  for (const auto& c : f.choices)
    if (c.title == **picked) return DialogAnswer(std::vector<std::string>{c.value});
  return DialogAnswer(std::vector<std::string>{});
}

// "a, b ,c" as {"a", "b", "c"}.
std::vector<std::string> SplitAtCommas(const std::string& text) {
  std::vector<std::string> values;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    const size_t b = item.find_first_not_of(' ');
    if (b != std::string::npos)
      values.push_back(item.substr(b, item.find_last_not_of(' ') - b + 1));
    item.clear();
  }
  return values;
}

// One field through a dialog: a choice as a list, anything else typed in (the choices of a
// multiple choice named in the title, the answer split at commas). nullopt: dismissed.
Result<DialogAnswer> AskField(const FormField& f, Dialogs& dialogs, const std::string& session_id,
                              const CancelToken& cancel) {
  using Answer = DialogAnswer;
  std::string title = f.title + (f.description.empty() ? "" : ": " + f.description);
  if (f.kind == FormField::Kind::kChoice) return AskChoice(f, title, dialogs, session_id, cancel);
  for (size_t i = 0; i < f.choices.size(); ++i)
    title += (i == 0 ? " (" : ", ") + f.choices[i].value + (i + 1 == f.choices.size() ? ")" : "");
  const bool many = f.kind == FormField::Kind::kMultiChoice;
  auto typed = dialogs.Input(session_id, title, many ? "comma-separated" : "", cancel);
  if (!typed.ok()) return typed.error();
  if (!typed->has_value()) return Answer();
  if (many) return Answer(SplitAtCommas(**typed));
  std::vector<std::string> values;
  if (!(*typed)->empty()) values.push_back(**typed);
  return Answer(values);
}

Json::Value AskDialogs(const Json::Value& params, Dialogs& dialogs, const std::string& session_id,
                       const CancelToken& cancel) {
  const Json::Value& schema = MemberOrNull(params, "requestedSchema");
  // The question itself first: the user may decline it as a whole.
  auto go = dialogs.Confirm(session_id, "MCP server question", StringOr(params, "message"), cancel);
  if (!go.ok() || !go->has_value()) return ActionResult("cancel");
  if (!**go) return ActionResult("decline");
  std::map<std::string, std::vector<std::string>> answers;
  for (const auto& f : FormFieldsOf(schema)) {
    auto answer = AskField(f, dialogs, session_id, cancel);
    if (!answer.ok() || !answer->has_value()) return ActionResult("cancel");
    if (!(*answer)->empty()) answers[f.name] = std::move(**answer);
  }
  Json::Value r = ActionResult("accept");
  r["content"] = ElicitContent(schema, answers);
  return r;
}

}  // namespace

std::vector<FormField> FormFieldsOf(const Json::Value& requested_schema) {
  std::vector<FormField> fields;
  const Json::Value& props = MemberOrNull(requested_schema, "properties");
  if (!props.isObject()) return fields;
  std::vector<std::string> required;
  const Json::Value& req = MemberOrNull(requested_schema, "required");
  if (req.isArray())
    for (const auto& r : req)
      if (auto s = AsString(r)) required.push_back(*s);
  for (const auto& name : MemberNames(props)) {
    auto field = FieldOf(name, MemberOrNull(props, name.c_str()));
    if (!field) continue;
    field->required = std::find(required.begin(), required.end(), name) != required.end();
    fields.push_back(std::move(*field));
  }
  return fields;
}

Json::Value ElicitContent(const Json::Value& requested_schema,
                          const std::map<std::string, std::vector<std::string>>& answers) {
  Json::Value content(Json::objectValue);
  const Json::Value& props = MemberOrNull(requested_schema, "properties");
  if (!props.isObject()) return content;
  for (const auto& name : MemberNames(props)) {
    const Json::Value& prop = MemberOrNull(props, name.c_str());
    auto it = answers.find(name);
    Json::Value value = it == answers.end() ? Json::Value() : Typed(prop, it->second);
    if (value.isNull()) value = MemberOrNull(prop, "default");
    if (!value.isNull()) content[name] = std::move(value);
  }
  return content;
}

Json::Value AskEditor(const Json::Value& params, Elicitation* editor, Dialogs* dialogs,
                      const std::string& session_id, const CancelToken& cancel) {
  const bool url = StringOr(params, "mode") == "url";
  if (editor == nullptr || !(url ? editor->CanOpenUrl() : editor->CanAskForm())) {
    if (!url && dialogs != nullptr) return AskDialogs(params, *dialogs, session_id, cancel);
    return ActionResult("decline");
  }
  return url ? AskUrl(params, editor, session_id, cancel)
             : AskForm(params, editor, session_id, cancel);
}

}  // namespace lousho::agent::mcp

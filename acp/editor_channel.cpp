// The editor's side of ClientServices: each call is one request to the client.
#include "acp/editor_channel.h"

#include <climits>

#include "acp/methods.h"
#include "acp/server_util.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {

EditorChannel::EditorChannel(jsonrpc::Peer* peer, long cleanup_timeout_ms)
    : peer_(peer), cleanup_timeout_ms_(cleanup_timeout_ms) {}

void EditorChannel::SetCapabilities(const ClientCapabilities& caps) {
  std::lock_guard<std::mutex> lock(mu_);
  caps_ = caps;
}

ClientCapabilities EditorChannel::capabilities() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caps_;
}

agent::ClientServices EditorChannel::Services() {
  std::lock_guard<std::mutex> lock(mu_);
  agent::ClientServices s;
  s.permissions = this;
  if (caps_.fs_read || caps_.fs_write) s.files = this;
  if (caps_.terminal) s.terminals = this;
  if (caps_.elicitation_form || caps_.elicitation_url) s.elicitation = this;
  return s;
}

agent::PermissionDecision EditorChannel::RequestPermission(const std::string& session_id,
                                                           const agent::PermissionRequest& request,
                                                           const CancelToken& cancel) {
  auto res =
      peer_->Call(method::kRequestPermission, PermissionRequestToJson(session_id, request), cancel);
  if (!res.ok()) {
    if (res.error().code == ErrorCode::kClientError) {
      log::Warn("permission request failed: " + res.error().message + "; treating as rejected");
      return agent::PermissionDecision::kRejectOnce;
    }
    return agent::PermissionDecision::kCancelled;
  }
  return PermissionDecisionFromJson(*res);
}

bool EditorChannel::CanReadTextFile() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caps_.fs_read;
}

bool EditorChannel::CanWriteTextFile() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caps_.fs_write;
}

Result<std::string> EditorChannel::ReadTextFile(const std::string& session_id,
                                                const std::string& path, int line, int limit,
                                                const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  if (line > 0) p["line"] = line;
  if (limit > 0) p["limit"] = limit;
  auto res = peer_->Call(method::kFsRead, p, cancel);
  if (!res.ok()) return res.error();
  auto content = AsString(MemberOrNull(*res, "content"));
  if (!content)
    return MakeError(ErrorCode::kClientError, "fs/read_text_file: the editor sent no content");
  return *content;
}

Status EditorChannel::WriteTextFile(const std::string& session_id, const std::string& path,
                                    const std::string& content, const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  p["content"] = content;
  auto res = peer_->Call(method::kFsWrite, p, cancel);
  if (!res.ok()) return res.error();
  // The result is an object (null from clients that send no result); anything else is malformed.
  if (!res->isObject() && !res->isNull())
    return MakeError(ErrorCode::kClientError,
                     "fs/write_text_file: the editor sent a malformed reply");
  return Status::Ok();
}

Result<std::string> EditorChannel::CreateTerminal(const std::string& session_id,
                                                  const agent::TerminalRequest& request,
                                                  const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["command"] = request.command;
  Json::Value args(Json::arrayValue);
  for (const auto& a : request.args) args.append(a);
  p["args"] = args;
  Json::Value env(Json::arrayValue);
  for (const auto& [k, v] : request.env) {
    Json::Value e = Obj();
    e["name"] = k;
    e["value"] = v;
    env.append(e);
  }
  p["env"] = env;
  if (!request.cwd.empty()) p["cwd"] = request.cwd;
  if (request.output_byte_limit > 0)
    p["outputByteLimit"] = static_cast<Json::Int64>(request.output_byte_limit);
  auto res = peer_->Call(method::kTerminalCreate, p, cancel);
  if (!res.ok()) return res.error();
  auto id = AsString(MemberOrNull(*res, "terminalId"));
  if (!id || id->empty())
    return MakeError(ErrorCode::kClientError, "terminal/create: the editor sent no terminalId");
  return *id;
}

namespace {
// An exit status: `exitCode` an int or null, `signal` a string or null; anything else is a
// malformed reply.
Result<agent::TerminalExit> ExitFromJson(const Json::Value& v) {
  agent::TerminalExit e;
  const Json::Value& code = MemberOrNull(v, "exitCode");
  const Json::Value& signal = MemberOrNull(v, "signal");
  auto n = AsInt64(code);
  if (!v.isObject() || (!code.isNull() && (!n || *n < INT32_MIN || *n > INT32_MAX)) ||
      (!signal.isNull() && !signal.isString()))
    return MakeError(ErrorCode::kClientError, "the editor sent a malformed exit status");
  if (n) e.exit_code = static_cast<int>(*n);
  e.signal = AsString(signal);
  return e;
}

Json::Value TerminalParams(const std::string& session_id, const std::string& terminal_id) {
  Json::Value p(Json::objectValue);
  p["sessionId"] = session_id;
  p["terminalId"] = terminal_id;
  return p;
}
}  // namespace

Result<agent::TerminalOutput> EditorChannel::GetTerminalOutput(const std::string& session_id,
                                                               const std::string& terminal_id) {
  auto res = peer_->Call(method::kTerminalOutput, TerminalParams(session_id, terminal_id),
                         CancelToken(), cleanup_timeout_ms_);
  if (!res.ok()) return res.error();
  agent::TerminalOutput out;
  out.output = StringOr(*res, "output");
  out.truncated = BoolOr(*res, "truncated", false);
  const Json::Value& status = MemberOrNull(*res, "exitStatus");
  if (auto exit = ExitFromJson(status); exit.ok()) out.exit = *exit;
  return out;
}

Result<agent::TerminalExit> EditorChannel::WaitForTerminalExit(const std::string& session_id,
                                                               const std::string& terminal_id,
                                                               const CancelToken& cancel) {
  auto res = peer_->Call(method::kTerminalWait, TerminalParams(session_id, terminal_id), cancel);
  if (!res.ok()) return res.error();
  return ExitFromJson(*res);  // a malformed status fails the call
}

Status EditorChannel::KillTerminal(const std::string& session_id, const std::string& terminal_id) {
  auto res = peer_->Call(method::kTerminalKill, TerminalParams(session_id, terminal_id),
                         CancelToken(), cleanup_timeout_ms_);
  if (!res.ok()) return res.error();
  return Status::Ok();
}

Status EditorChannel::ReleaseTerminal(const std::string& session_id,
                                      const std::string& terminal_id) {
  auto res = peer_->Call(method::kTerminalRelease, TerminalParams(session_id, terminal_id),
                         CancelToken(), cleanup_timeout_ms_);
  if (!res.ok()) return res.error();
  return Status::Ok();
}

bool EditorChannel::CanAskForm() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caps_.elicitation_form;
}

bool EditorChannel::CanOpenUrl() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caps_.elicitation_url;
}

namespace {
// The params every elicitation/create shares: the session (and tool call) it belongs to.
Json::Value ElicitationParams(const std::string& session_id, const std::string& tool_call_id,
                              const char* mode, const std::string& message) {
  Json::Value p(Json::objectValue);
  p["sessionId"] = session_id;
  if (!tool_call_id.empty()) p["toolCallId"] = tool_call_id;
  p["mode"] = mode;
  p["message"] = message;
  return p;
}

Json::Value ChoicesJson(const std::vector<agent::FormChoice>& choices) {
  Json::Value list(Json::arrayValue);
  for (const auto& c : choices) {
    Json::Value o(Json::objectValue);
    o["const"] = c.value;
    o["title"] = c.title.empty() ? c.value : c.title;
    list.append(o);
  }
  return list;
}

// A field as an elicitation property: text a string, a choice a string with titled options
// (`oneOf`), several choices an array of titled options.
Json::Value FieldSchema(const agent::FormField& f) {
  Json::Value p(Json::objectValue);
  if (f.kind == agent::FormField::Kind::kMultiChoice) {
    p["type"] = "array";
    p["items"]["anyOf"] = ChoicesJson(f.choices);
  } else {
    p["type"] = "string";
    if (f.kind == agent::FormField::Kind::kChoice) p["oneOf"] = ChoicesJson(f.choices);
  }
  if (!f.title.empty()) p["title"] = f.title;
  if (!f.description.empty()) p["description"] = f.description;
  return p;
}

Json::Value FormSchema(const std::vector<agent::FormField>& fields) {
  Json::Value schema(Json::objectValue);
  schema["type"] = "object";
  schema["properties"] = Json::Value(Json::objectValue);
  Json::Value required(Json::arrayValue);
  for (const auto& f : fields) {
    schema["properties"][f.name] = FieldSchema(f);
    if (f.required) required.append(f.name);
  }
  if (!required.empty()) schema["required"] = required;
  return schema;
}

agent::ElicitationAction ActionFromJson(const Json::Value& result) {
  const std::string action = StringOr(result, "action");
  if (action == "accept") return agent::ElicitationAction::kAccept;
  if (action == "decline") return agent::ElicitationAction::kDecline;
  return agent::ElicitationAction::kCancel;  // cancel, and actions this agent does not know
}

bool IsOffered(const agent::FormField& f, const std::string& value) {
  for (const auto& c : f.choices)
    if (c.value == value) return true;
  return false;
}

// One field's answer from the accepted content: absent stays absent; anything else must have
// the field's shape (a string, or an array of strings) and name only offered choices.
Status ReadAnswer(const agent::FormField& f, const Json::Value& value,
                  std::vector<std::string>* out) {
  const bool multi = f.kind == agent::FormField::Kind::kMultiChoice;
  std::vector<std::string> values;
  if (!multi) {
    auto s = AsString(value);
    if (!s) return MakeError(ErrorCode::kClientError, "expected a string");
    values.push_back(*s);
  } else if (value.isArray()) {
    for (Json::ArrayIndex i = 0; i < value.size(); ++i) {
      auto s = AsString(ElementOrNull(value, i));
      if (!s) return MakeError(ErrorCode::kClientError, "expected strings");
      values.push_back(*s);
    }
  } else {
    return MakeError(ErrorCode::kClientError, "expected an array");
  }
  if (f.kind != agent::FormField::Kind::kText) {
    for (const auto& v : values)
      if (!IsOffered(f, v)) return MakeError(ErrorCode::kClientError, "not a choice offered");
  }
  *out = std::move(values);
  return Status::Ok();
}
}  // namespace

Result<agent::FormReply> EditorChannel::AskForm(const std::string& session_id,
                                                const agent::FormRequest& request,
                                                const CancelToken& cancel) {
  Json::Value p = ElicitationParams(session_id, request.tool_call_id, "form", request.message);
  p["requestedSchema"] = FormSchema(request.fields);
  auto res = peer_->Call(method::kElicitationCreate, p, cancel);
  if (!res.ok()) return res.error();
  agent::FormReply reply;
  reply.action = ActionFromJson(*res);
  if (reply.action != agent::ElicitationAction::kAccept) return reply;
  const Json::Value& content = MemberOrNull(*res, "content");
  for (const auto& f : request.fields) {
    const Json::Value& value = MemberOrNull(content, f.name);
    if (value.isNull()) continue;
    std::vector<std::string> values;
    if (Status st = ReadAnswer(f, value, &values); !st.ok())
      return MakeError(ErrorCode::kClientError, "elicitation/create: the editor's answer to " +
                                                    f.name + ": " + st.error().message);
    reply.answers[f.name] = std::move(values);
  }
  return reply;
}

Result<agent::ElicitationAction> EditorChannel::OpenUrl(const std::string& session_id,
                                                        const agent::UrlRequest& request,
                                                        const CancelToken& done,
                                                        const CancelToken& cancel) {
  Json::Value p = ElicitationParams(session_id, request.tool_call_id, "url", request.message);
  p["elicitationId"] = request.elicitation_id;
  p["url"] = request.url;
  // The step may finish before the user answers (they opened the page from elsewhere): the
  // request is withdrawn then.
  LinkedCancelSource either(done, cancel);
  auto res = peer_->Call(method::kElicitationCreate, p, either.token());
  if (!res.ok() && (cancel.cancelled() || !done.cancelled())) return res.error();
  if (res.ok()) {
    agent::ElicitationAction action = ActionFromJson(*res);
    if (action != agent::ElicitationAction::kAccept) return action;
    // The user went to the page; the step ends when the caller sees it finish.
    while (!either.token().WaitFor(60000)) {
    }
    if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
  }
  Json::Value complete(Json::objectValue);
  complete["elicitationId"] = request.elicitation_id;
  peer_->Notify(method::kElicitationComplete, complete);
  return agent::ElicitationAction::kAccept;
}

}  // namespace lousho::acp

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

}  // namespace lousho::acp

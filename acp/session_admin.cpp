// The ACP server: managing sessions and credentials beside the conversation: session/delete,
// session/fork (unstable) and logout.
#include "acp/methods.h"
#include "acp/server.h"
#include "acp/server_util.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
using jsonrpc::Reply;

namespace {
// The answer to a failed deletion: an unknown id names the field; a file another session holds
// (another lousho, or another connection of this one) says so with LOUSHO_SESSION_LOCKED.
void AnswerDeleteError(Reply& reply, const Error& e) {
  if (e.code == ErrorCode::kSessionNotFound)
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: params.sessionId: " + e.message,
                       ErrorData(e.code));
  reply.Error(jsonrpc::kInternalError, e.message, ErrorData(e));
}
}  // namespace

// A session open in this connection is closed first (a running prompt answers "cancelled"),
// then its file goes: the client asked for it by id, and no other connection can hold it then.
// A file held elsewhere is refused and kept. The file is removed for good (no trash folder):
// clients confirm before they send session/delete.
void Server::DeleteSession(const SessionIdParams& params, Reply reply) {
  if (!EnsureAgent(&reply)) return;
  if (!SavesSessions())
    return reply.Error(jsonrpc::kMethodNotFound, "Method not found: sessions are not saved");
  std::shared_ptr<agent::Session> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(params.session_id);
    if (it != sessions_.end()) {
      open = it->second;
      sessions_.erase(it);
    }
  }
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  // The file's folder is searched: disk work, on a worker.
  auto remove = [this, id = params.session_id, shared_reply] {
    Status st = pool_.Post([this, id, shared_reply] {
      Status deleted = host_->Delete(id, "");
      if (!deleted.ok()) return AnswerDeleteError(*shared_reply, deleted.error());
      log::Info("session " + id + " deleted");
      shared_reply->Result(Obj());
    });
    if (!st.ok())
      shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
  };
  if (open) return open->Close(remove);  // the file's lock goes before `remove` runs
  remove();
}

// The fork holds the history of a session open in this connection up to its leaf, or up to and
// including the message `_meta.messageId` names; it is a new session (its own id and file, naming
// the first as its parent), opened here as session/new opens one. Files are not restored.
void Server::ForkSession(const ForkSessionParams& params, Reply reply) {
  std::shared_ptr<agent::Session> from;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(params.session_id);
    if (it != sessions_.end()) from = it->second;
  }
  if (!from)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.sessionId: session " + params.session_id +
                           " is not open in this connection (load or resume it first)");
  std::string leaf = from->transcript().Leaf();
  if (!params.message_id.empty()) {
    bool found = false;
    for (const agent::Entry& e : from->transcript().Entries())
      found = found || (e.id == params.message_id && e.kind == agent::EntryKind::kMessage);
    if (!found)
      return reply.Error(jsonrpc::kInvalidParams,
                         "Invalid params: params._meta.messageId: no message " + params.message_id +
                             " in session " + params.session_id);
    leaf = params.message_id;
  }
  if (!CanOpen(params.session, &reply)) return;
  auto servers = McpServers(params.session, &reply);
  if (!servers) return;
  auto values = std::make_shared<SessionConfigValues>();
  agent::SessionOptions so = BaseOptions(params.session, host_->NewSessionId(), values);
  auto session = Register([&] { return host_->Fork(*from, leaf, std::move(so)); }, &reply,
                          [&](const agent::Session& s) { *values = ConfigValuesOf(s); });
  if (!session) return;
  StartSession(session, std::move(*servers), std::move(reply), [this, session] {
    Json::Value res = SessionResult(*session);
    res["sessionId"] = session->info().id;
    return res;
  });
}

// Forgets what `lousho setup` stored and loads the agent again without it. Open sessions keep
// running with the key they began with (closing them is the client's choice); a new session
// needs `authenticate` again unless the environment still holds a key, which `_meta` says.
void Server::Logout(const LogoutParams& /*params*/, Reply reply) {
  auto forgot = host_->ForgetStoredCredentials();
  if (!forgot.ok())
    return reply.Error(jsonrpc::kInternalError, forgot.error().message, ErrorData(forgot.error()));
  TakeAgent();
  load_error_.reset();
  Json::Value mine = Obj();
  mine["forgotStoredCredentials"] = *forgot;
  mine["credentialsRemain"] = !view_.provider_error.has_value();
  Json::Value meta = Obj();
  meta["lousho"] = mine;
  Json::Value res = Obj();
  res["_meta"] = meta;
  reply.Result(res);
}

}  // namespace lousho::acp

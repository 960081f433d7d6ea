// The ACP server: opening sessions (new, load, resume), listing and closing them.
#include <filesystem>

#include "acp/methods.h"
#include "acp/server.h"
#include "acp/server_util.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
namespace fs = std::filesystem;
using jsonrpc::Reply;

bool Server::CanOpen(const NewSessionParams& params, Reply* reply) {
  if (!EnsureAgent(reply)) return false;
  if (!RefreshCredentials()) {
    // ACP's "authentication required": the editor shows the message (which names the variable).
    reply->Error(kAuthRequired, "Authentication required: " + view_.provider_error->message,
                 ErrorData(view_.provider_error->code));
    return false;
  }
  fs::path dir(params.cwd);
  if (!dir.is_absolute()) {
    reply->Error(jsonrpc::kInvalidParams, "Invalid params: params.cwd: must be an absolute path");
    return false;
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    reply->Error(jsonrpc::kInvalidParams,
                 "Invalid params: params.cwd: no such directory: " + params.cwd);
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (sessions_.size() >= options_.max_sessions) {
    Error full =
        MakeError(ErrorCode::kSessionLimit,
                  "Too many open sessions (limit " + std::to_string(options_.max_sessions) +
                      "); close one with session/close" + options_.max_sessions_note);
    reply->Error(jsonrpc::kInternalError, full.message, ErrorData(full));
    return false;
  }
  return true;
}

agent::SessionOptions Server::BaseOptions(const NewSessionParams& params, const std::string& id,
                                          const std::shared_ptr<SessionConfigValues>& values) {
  agent::SessionOptions so;
  std::error_code ec;
  fs::path dir(params.cwd);
  so.cwd = fs::weakly_canonical(dir, ec);
  if (ec) so.cwd = dir;
  for (const auto& d : params.additional_directories) {
    fs::path root = fs::weakly_canonical(d, ec);
    so.additional_roots.push_back(ec ? fs::path(d) : root);
  }
  so.id = id;
  so.system_prompt = params.system_prompt;
  so.services = editor_.Services();
  so.pool = &pool_;
  so.sink = MakeSink(id, values);
  return so;
}

std::shared_ptr<agent::Session> Server::Register(
    const std::function<Result<std::shared_ptr<agent::Session>>()>& create, Reply* reply,
    const std::function<void(const agent::Session&)>& before_visible) {
  auto created = create();
  if (!created.ok()) {
    reply->Error(jsonrpc::kInternalError, created.error().message, ErrorData(created.error()));
    return nullptr;
  }
  std::shared_ptr<agent::Session> session = *created;
  if (before_visible) before_visible(*session);
  bool added;
  {
    std::lock_guard<std::mutex> lock(mu_);
    added = sessions_.emplace(session->info().id, session).second;
  }
  if (!added) {
    session->Close(nullptr);  // lets go of its file
    reply->Error(jsonrpc::kInvalidParams, "Invalid params: params.sessionId: session " +
                                              session->info().id + " is already open");
    return nullptr;
  }
  return session;
}

Json::Value Server::SessionResult(const agent::Session& session) {
  Json::Value res = Obj();
  AddSessionSetup(session, &res);
  return res;
}

void Server::NewSession(const NewSessionParams& params, Reply reply) {
  if (!CanOpen(params, &reply)) return;
  auto servers = McpServers(params, &reply);
  if (!servers) return;
  auto values = std::make_shared<SessionConfigValues>();
  agent::SessionOptions so = BaseOptions(params, host_->NewSessionId(), values);
  // Nothing is written until the first message: a session nobody spoke in leaves no file.
  auto session = Register([&] { return host_->New(std::move(so)); }, &reply,
                          [&](const agent::Session& s) { *values = ConfigValuesOf(s); });
  if (!session) return;
  StartSession(session, std::move(*servers), std::move(reply), [this, session] {
    Json::Value res = SessionResult(*session);
    res["sessionId"] = session->info().id;
    return res;
  });
}

void Server::LoadSession(const LoadSessionParams& params, Reply reply) {
  OpenStored(params, /*replay=*/true, std::move(reply));
}

void Server::ResumeSession(const LoadSessionParams& params, Reply reply) {
  OpenStored(params, /*replay=*/false, std::move(reply));
}

void Server::OpenStored(const LoadSessionParams& params, bool replay, Reply reply) {
  if (!EnsureAgent(&reply)) return;
  if (!SavesSessions())
    return reply.Error(jsonrpc::kMethodNotFound, "Method not found: sessions are not saved");
  if (!CanOpen(params.session, &reply)) return;
  auto servers = McpServers(params.session, &reply);
  if (!servers) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sessions_.count(params.session_id) != 0)
      return reply.Error(jsonrpc::kInvalidParams, "Invalid params: params.sessionId: session " +
                                                      params.session_id + " is already open");
  }
  // Reading the file is disk work: a worker does it, never the reader thread.
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = pool_.Post([this, params, replay, shared_reply, servers = std::move(*servers)] {
    auto path = host_->Find(params.session_id, params.session.cwd);
    if (!path.ok())
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.sessionId: " + path.error().message,
                                 ErrorData(path.error()));
    auto values = std::make_shared<SessionConfigValues>();
    agent::SessionOptions so = BaseOptions(params.session, params.session_id, values);
    // The history goes out before the session can be prompted, so no turn's update mixes in.
    auto send_history = [this, replay, values](const agent::Session& s) {
      *values = ConfigValuesOf(s);  // a stored session may have restored its model
      if (replay)
        s.transcript().VisitBranch([&](const std::vector<const agent::Entry*>& branch) {
          SendReplay(s.info().id, branch);
        });
    };
    auto session = Register([&] { return host_->Open(std::move(so), *path); }, shared_reply.get(),
                            send_history);
    if (!session) return;
    StartSession(session, servers, std::move(*shared_reply),
                 [this, session] { return SessionResult(*session); });
  });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

std::optional<std::vector<config::McpServerSpec>> Server::McpServers(const NewSessionParams& params,
                                                                     Reply* reply) {
  auto editor = McpServersFromJson(params.mcp_servers);
  if (!editor.ok()) {
    reply->Error(jsonrpc::kInvalidParams, "Invalid params: " + editor.error().message);
    return std::nullopt;
  }
  return agent::mcp::MergeServers(std::move(*editor), view_.mcp_servers);
}

void Server::StartSession(const std::shared_ptr<agent::Session>& session,
                          std::vector<config::McpServerSpec> servers, Reply reply,
                          const std::function<Json::Value()>& result) {
  // A server that wants a login asks the user once the client knows the session.
  auto announced = std::make_shared<CancelSource>();
  auto finish = [this, result, warnings = session->info().load_warnings, announced](
                    Reply r, const std::string& sid,
                    const std::vector<agent::mcp::ServerStatus>& status) {
    r.Result(result());
    AnnounceSession(sid, status, warnings);
    announced->Cancel();
  };
  if (servers.empty()) return finish(std::move(reply), session->info().id, {});
  // Starting servers takes time (up to the start timeout): a worker waits, not the reader.
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  agent::mcp::StartOptions mo;
  mo.cwd = session->info().cwd;
  mo.roots = session->info().roots;
  mo.client_version = options_.version;
  mo.settings = view_.mcp;
  mo.cancel = shutdown_.token();
  // Logins ask through the editor's URL step where it has one, the servers' questions through
  // its forms; their end is told in the session.
  mo.login.elicitation = editor_.CanOpenUrl() || editor_.CanAskForm() ? &editor_ : nullptr;
  mo.login.session_id = session->info().id;
  mo.login.announced = announced->token();
  mo.login.wait_announced = true;
  // A server's prompts changed (it said so, or a login brought them): the editor's command
  // list is sent again, once the editor knows the session.
  mo.on_commands_changed = [this, sid = session->info().id, announced] {
    if (announced->token().cancelled()) SendCommands(sid);
  };
  mo.login.on_login = [this, sid = session->info().id](const std::string& server, bool waiting,
                                                       const std::string& msg) {
    if (!waiting) TellUser(sid, "info", "MCP server " + server, msg);
  };
  Status st = pool_.Post([this, session, servers = std::move(servers), mo, shared_reply, finish] {
    auto status = host::AttachMcpServers(*session, servers, mo);
    if (shutdown_.cancelled()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        sessions_.erase(session->info().id);
      }
      session->Close([] {}, CancelCause::kShutdown);
      return shared_reply->Error(jsonrpc::kInternalError, "the agent is shutting down");
    }
    finish(std::move(*shared_reply), session->info().id, status);
  });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

// After the answer: a note for each MCP server that is missing, then the commands.
void Server::AnnounceSession(const std::string& sid,
                             const std::vector<agent::mcp::ServerStatus>& servers,
                             const std::vector<std::string>& load_warnings) {
  auto say = [&](const std::string& msg) { TellUser(sid, nullptr, "", msg); };
  if (!load_warnings.empty())
    say("The session file was repaired as it was read (nothing in it was dropped): " +
        load_warnings.front() +
        (load_warnings.size() > 1
             ? " (and " + std::to_string(load_warnings.size() - 1) + " more like it)"
             : std::string()) +
        ".");
  const bool notices = editor_.capabilities().notices;
  for (const auto& s : servers) {
    std::string msg = agent::mcp::FailureMessage(s);
    if (msg.empty()) continue;
    // The editor's URL step asks for the login.
    if (!s.login_url.empty() && editor_.CanOpenUrl()) continue;
    // A client that takes notices shows it beside the conversation, not in it.
    if (notices)
      SendUpdate(sid, NoticeUpdate("warning",
                                   "MCP server " + s.name +
                                       (s.login_url.empty() ? " did not start" : " needs a login"),
                                   msg));
    else
      say(msg);
  }
  SendCommands(sid);
}

void Server::TellUser(const std::string& sid, const char* severity, const std::string& title,
                      const std::string& msg) {
  if (severity != nullptr && editor_.capabilities().notices)
    return SendUpdate(sid, NoticeUpdate(severity, title, msg));
  Json::Value u = Obj();
  u["sessionUpdate"] = "agent_message_chunk";
  Json::Value text = Obj();
  text["type"] = "text";
  text["text"] = msg + "\n";
  u["content"] = text;
  SendUpdate(sid, u);
}

namespace {
constexpr size_t kListPageSize = 50;
}  // namespace

void Server::ListSessions(const ListSessionsParams& params, Reply reply) {
  // The spec names the session folder: a list needs the agent.
  if (!EnsureAgent(&reply)) return;
  if (!SavesSessions())
    return reply.Error(jsonrpc::kMethodNotFound, "Method not found: sessions are not saved");
  size_t offset = 0;
  if (!params.cursor.empty()) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(params.cursor.c_str(), &end, 10);
    if (end == params.cursor.c_str() || *end != '\0')
      return reply.Error(jsonrpc::kInvalidParams,
                         "Invalid params: params.cursor: not a cursor "
                         "this agent gave");
    offset = static_cast<size_t>(n);
  }
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = pool_.Post([this, cwd = params.cwd, offset, shared_reply] {
    std::vector<agent::SessionSummary> all = host_->List(cwd);
    Json::Value res = Obj();
    Json::Value list(Json::arrayValue);
    for (size_t i = offset; i < all.size() && i < offset + kListPageSize; ++i) {
      Json::Value item = Obj();
      item["sessionId"] = all[i].id;
      item["cwd"] = all[i].cwd;
      if (!all[i].title.empty()) item["title"] = all[i].title;
      item["updatedAt"] = agent::IsoTimestamp(all[i].updated_ms);
      list.append(item);
    }
    res["sessions"] = list;
    if (offset + kListPageSize < all.size())
      res["nextCursor"] = std::to_string(offset + kListPageSize);
    shared_reply->Result(res);
  });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

// Ends a session as if session/cancel had arrived, then frees it: its running prompt answers
// "cancelled" before this request's reply. Nothing here waits: the session's worker answers.
void Server::CloseSession(const SessionIdParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(session->info().id);
  }
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  session->Close([shared_reply] { shared_reply->Result(Obj()); });
}

}  // namespace lousho::acp

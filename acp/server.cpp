// ACP server: method table, session handling, and editor services.
#include "acp/server.h"

#include <filesystem>
#include <random>

#include "acp/methods.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
namespace fs = std::filesystem;
using jsonrpc::Reply;

namespace {
Json::Value Obj() { return Json::Value(Json::objectValue); }

constexpr int kAuthRequired = -32000;

Json::Value ErrorData(const std::string& code) {
  Json::Value d(Json::objectValue);
  d["code"] = code;
  return d;
}
}  // namespace

Server::Server(LineTransport* transport, std::shared_ptr<const agent::AgentConfig> agent,
               ServerOptions options)
    : agent_(std::move(agent)),
      options_(std::move(options)),
      peer_(transport,
            jsonrpc::PeerOptions{options_.record_file,
                                 [this](const std::string& m) -> std::optional<jsonrpc::RpcError> {
                                   std::lock_guard<std::mutex> lock(mu_);
                                   if (initialized_ || m == method::kInitialize)
                                     return std::nullopt;
                                   return jsonrpc::RpcError{
                                       jsonrpc::kInvalidRequest,
                                       "Invalid Request: call initialize first", Json::Value()};
                                 }}) {
  BindMethods();
}

Server::~Server() = default;

void Server::BindMethods() {
  peer_.OnRequest(method::kInitialize,
                  [this](const Json::Value& p, Reply r) { Initialize(p, std::move(r)); });
  peer_.OnRequest(method::kSessionNew,
                  [this](const Json::Value& p, Reply r) { NewSession(p, std::move(r)); });
  peer_.OnRequest(method::kSessionPrompt,
                  [this](const Json::Value& p, Reply r) { Prompt(p, std::move(r)); });
  peer_.OnRequest(method::kSessionSetMode,
                  [this](const Json::Value& p, Reply r) { SetMode(p, std::move(r)); });
  peer_.OnRequest(method::kSessionClose,
                  [this](const Json::Value& p, Reply r) { CloseSession(p, std::move(r)); });
  peer_.OnNotification(method::kSessionCancel, [this](const Json::Value& p) { Cancel(p); });
  peer_.OnNotification(method::kCancelRequest, [this](const Json::Value& p) { CancelRequest(p); });
}

void Server::Run() {
  peer_.Run();
  // Input ended: cancel every turn, then let the workers finish and write their last lines.
  std::map<std::string, std::shared_ptr<agent::Session>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  log::Info("input closed; ending " + std::to_string(sessions.size()) + " session(s)");
  for (auto& [id, s] : sessions) s->Cancel();
  sessions.clear();  // joins each worker
}

void Server::Initialize(const Json::Value& params, Reply reply) {
  FieldReader r(params, "params");
  auto version = r.Int("protocolVersion", true);
  const Json::Value* caps = r.Object("clientCapabilities", false);
  if (!r.ok()) return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + r.error());
  {
    std::lock_guard<std::mutex> lock(mu_);
    initialized_ = true;
    client_caps_ = ClientCapabilitiesFromJson(caps ? *caps : Json::Value());
  }
  (void)version;  // a v1 agent answers 1 whatever the client speaks
  Json::Value res = Obj();
  res["protocolVersion"] = kProtocolVersion;
  Json::Value ac = Obj();
  ac["loadSession"] = false;
  Json::Value pc = Obj();
  pc["image"] = agent_->provider && agent_->provider->SupportsImages();
  pc["audio"] = false;
  pc["embeddedContext"] = true;
  ac["promptCapabilities"] = pc;
  Json::Value mcp = Obj();
  mcp["http"] = false;
  mcp["sse"] = false;
  ac["mcpCapabilities"] = mcp;
  Json::Value sc = Obj();
  sc["close"] = Obj();
  sc["additionalDirectories"] = Obj();  // honoured as extra roots of the session's tools
  ac["sessionCapabilities"] = sc;
  res["agentCapabilities"] = ac;
  res["authMethods"] = Json::Value(Json::arrayValue);
  Json::Value info = Obj();
  info["name"] = "lousho";
  info["title"] = agent_->name.empty() ? "lousho" : agent_->name;
  info["version"] = options_.version;
  res["agentInfo"] = info;
  reply.Result(res);
}

std::string Server::NewSessionId() {
  std::lock_guard<std::mutex> lock(mu_);
  ++session_counter_;
  if (options_.test_mode) return "sess-" + std::to_string(session_counter_);
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[33];
  snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
           static_cast<unsigned long long>(rng()));
  return buf;
}

void Server::NewSession(const Json::Value& params, Reply reply) {
  if (agent_->provider_error) {
    // ACP's "authentication required": the editor shows the message (which names the variable).
    return reply.Error(kAuthRequired, "Authentication required: " + agent_->provider_error->message,
                       ErrorData(agent_->provider_error->code));
  }
  FieldReader r(params, "params");
  auto cwd = r.String("cwd", true);
  const Json::Value* mcp = r.Array("mcpServers", false);
  const Json::Value* extra = r.Array("additionalDirectories", false);
  if (!r.ok()) return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + r.error());
  fs::path dir(*cwd);
  if (!dir.is_absolute())
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.cwd: must be an absolute path");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.cwd: no such directory: " + *cwd);
  agent::SessionOptions so;
  so.cwd = fs::weakly_canonical(dir, ec);
  if (extra) {
    for (Json::ArrayIndex i = 0; i < extra->size(); ++i) {
      const Json::Value& d = (*extra)[i];
      if (!d.isString() || !fs::path(d.asString()).is_absolute())
        return reply.Error(jsonrpc::kInvalidParams,
                           "Invalid params: params.additionalDirectories[" + std::to_string(i) +
                               "]: expected an absolute path");
      so.additional_roots.push_back(fs::weakly_canonical(d.asString(), ec));
    }
  }
  if (mcp && !mcp->empty())
    log::Warn("session/new: " + std::to_string(mcp->size()) +
              " MCP server(s) given; this version does not connect to MCP servers yet");
  so.id = NewSessionId();
  so.client = this;
  std::string sid = so.id;
  so.sink = [this, sid](const agent::Event& e) {
    if (auto update = UpdateFromEvent(e)) SendUpdate(sid, *update);
  };
  auto session = std::make_shared<agent::Session>(agent_, std::move(so));
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[sid] = session;
  }
  Json::Value res = Obj();
  res["sessionId"] = sid;
  res["modes"] = ModesToJson(session->mode());
  reply.Result(res);
  // Commands only after the session exists for the client.
  if (!agent_->commands.empty()) {
    Json::Value u = Obj();
    u["sessionUpdate"] = "available_commands_update";
    Json::Value list(Json::arrayValue);
    for (const auto& c : agent_->commands) {
      Json::Value item = Obj();
      item["name"] = c.name;
      item["description"] = c.description.empty() ? c.name : c.description;
      if (!c.hint.empty()) {
        Json::Value input = Obj();
        input["hint"] = c.hint;
        item["input"] = input;
      }
      list.append(item);
    }
    u["availableCommands"] = list;
    SendUpdate(sid, u);
  }
}

std::shared_ptr<agent::Session> Server::FindSession(const Json::Value& params, Reply* reply) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  if (!r.ok()) {
    reply->Error(jsonrpc::kInvalidParams, "Invalid params: " + r.error());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(*sid);
  if (it == sessions_.end()) {
    reply->Error(jsonrpc::kInvalidParams,
                 "Invalid params: params.sessionId: unknown session " + *sid);
    return nullptr;
  }
  return it->second;
}

void Server::Prompt(const Json::Value& params, Reply reply) {
  auto session = FindSession(params, &reply);
  if (!session) return;
  FieldReader r(params, "params");
  const Json::Value* prompt = r.Array("prompt", true);
  if (!r.ok()) return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + r.error());
  if (prompt->empty())
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: params.prompt: must not be empty");
  auto content = PromptFromJson(*prompt, agent_->provider->SupportsImages());
  if (!content.ok())
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + content.error().message);
  // The reply moves into the completion; shared so the std::function stays copyable.
  const std::string request_key = WriteJson(reply.id());
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  bool registered;
  {
    std::lock_guard<std::mutex> lock(mu_);
    registered = prompts_.emplace(request_key, session).second;
  }
  Status st = session->Prompt(std::move(*content),
                              [this, request_key, shared_reply](Result<agent::TurnResult> res) {
                                {
                                  std::lock_guard<std::mutex> lock(mu_);
                                  prompts_.erase(request_key);
                                }
                                if (res.ok()) {
                                  Json::Value out = Obj();
                                  out["stopReason"] = StopReasonName(res->stop);
                                  shared_reply->Result(out);
                                } else {
                                  shared_reply->Error(jsonrpc::kInternalError, res.error().message,
                                                      ErrorData(res.error().code));
                                }
                              });
  if (!st.ok()) {
    if (registered) {
      std::lock_guard<std::mutex> lock(mu_);
      prompts_.erase(request_key);  // this request never started
    }
    shared_reply->Error(jsonrpc::kInvalidRequest,
                        "Invalid Request: a prompt is already running in this session");
  }
}

void Server::SetMode(const Json::Value& params, Reply reply) {
  auto session = FindSession(params, &reply);
  if (!session) return;
  FieldReader r(params, "params");
  auto mode_id = r.String("modeId", true);
  if (!r.ok()) return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + r.error());
  auto mode = agent::ParsePermissionMode(*mode_id);
  if (!mode)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.modeId: unknown mode " + *mode_id);
  session->SetMode(*mode);
  reply.Result(Obj());
}

// Ends a session as if session/cancel had arrived, then frees it: its running prompt answers
// "cancelled" before this request's reply, and its worker thread is gone after it.
void Server::CloseSession(const Json::Value& params, Reply reply) {
  auto session = FindSession(params, &reply);
  if (!session) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(session->id());
  }
  session->Cancel();
  session.reset();  // the last owner: joins the worker once the cancelled turn has answered
  reply.Result(Obj());
}

void Server::Cancel(const Json::Value& params) {
  if (!params.isObject() || !params["sessionId"].isString()) return;
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(params["sessionId"].asString());
    if (it == sessions_.end()) return;
    s = it->second;
  }
  s->Cancel();
}

// Cancelling a session/prompt request is the same as session/cancel for its session; the prompt
// still answers once, with stopReason "cancelled".
void Server::CancelRequest(const Json::Value& params) {
  const Json::Value* id = FindMember(params, "requestId");
  if (id == nullptr) return;
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prompts_.find(WriteJson(*id));
    if (it == prompts_.end()) return;
    s = it->second.lock();
  }
  if (s) s->Cancel();
}

void Server::SendUpdate(const std::string& session_id, const Json::Value& update) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["update"] = update;
  peer_.Notify(method::kSessionUpdate, p);
}

// --- ClientServices ---

agent::PermissionDecision Server::RequestPermission(const std::string& session_id,
                                                    const agent::PermissionRequest& request,
                                                    const CancelToken& cancel) {
  auto res =
      peer_.Call(method::kRequestPermission, PermissionRequestToJson(session_id, request), cancel);
  if (!res.ok()) {
    if (res.error().code == "LOUSHO_CLIENT_ERROR") {
      log::Warn("permission request failed: " + res.error().message + "; treating as rejected");
      return agent::PermissionDecision::kRejectOnce;
    }
    return agent::PermissionDecision::kCancelled;
  }
  return PermissionDecisionFromJson(*res);
}

bool Server::CanReadTextFile() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_caps_.fs_read;
}

bool Server::CanWriteTextFile() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_caps_.fs_write;
}

bool Server::HasTerminal() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_caps_.terminal;
}

Result<std::string> Server::ReadTextFile(const std::string& session_id, const std::string& path,
                                         int line, int limit, const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  if (line > 0) p["line"] = line;
  if (limit > 0) p["limit"] = limit;
  auto res = peer_.Call(method::kFsRead, p, cancel);
  if (!res.ok()) return res.error();
  if (!res->isObject() || !(*res)["content"].isString())
    return MakeError("LOUSHO_CLIENT_ERROR", "fs/read_text_file: the editor sent no content");
  return (*res)["content"].asString();
}

Status Server::WriteTextFile(const std::string& session_id, const std::string& path,
                             const std::string& content, const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  p["content"] = content;
  auto res = peer_.Call(method::kFsWrite, p, cancel);
  if (!res.ok()) return res.error();
  return Status::Ok();
}

Result<std::string> Server::CreateTerminal(const std::string& session_id,
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
  auto res = peer_.Call(method::kTerminalCreate, p, cancel);
  if (!res.ok()) return res.error();
  if (!res->isObject() || !(*res)["terminalId"].isString())
    return MakeError("LOUSHO_CLIENT_ERROR", "terminal/create: the editor sent no terminalId");
  return (*res)["terminalId"].asString();
}

namespace {
agent::TerminalExit ExitFromJson(const Json::Value& v) {
  agent::TerminalExit e;
  if (v.isObject()) {
    if (v["exitCode"].isIntegral()) e.exit_code = v["exitCode"].asInt();
    if (v["signal"].isString()) e.signal = v["signal"].asString();
  }
  return e;
}

Json::Value TerminalParams(const std::string& session_id, const std::string& terminal_id) {
  Json::Value p(Json::objectValue);
  p["sessionId"] = session_id;
  p["terminalId"] = terminal_id;
  return p;
}
}  // namespace

Result<agent::TerminalOutput> Server::GetTerminalOutput(const std::string& session_id,
                                                        const std::string& terminal_id) {
  auto res =
      peer_.Call(method::kTerminalOutput, TerminalParams(session_id, terminal_id), CancelToken());
  if (!res.ok()) return res.error();
  agent::TerminalOutput out;
  if (res->isObject()) {
    out.output = (*res).get("output", "").asString();
    out.truncated = (*res).get("truncated", false).asBool();
    if ((*res)["exitStatus"].isObject()) out.exit = ExitFromJson((*res)["exitStatus"]);
  }
  return out;
}

Result<agent::TerminalExit> Server::WaitForTerminalExit(const std::string& session_id,
                                                        const std::string& terminal_id,
                                                        const CancelToken& cancel) {
  auto res = peer_.Call(method::kTerminalWait, TerminalParams(session_id, terminal_id), cancel);
  if (!res.ok()) return res.error();
  return ExitFromJson(*res);
}

Status Server::KillTerminal(const std::string& session_id, const std::string& terminal_id) {
  auto res =
      peer_.Call(method::kTerminalKill, TerminalParams(session_id, terminal_id), CancelToken());
  if (!res.ok()) return res.error();
  return Status::Ok();
}

Status Server::ReleaseTerminal(const std::string& session_id, const std::string& terminal_id) {
  auto res =
      peer_.Call(method::kTerminalRelease, TerminalParams(session_id, terminal_id), CancelToken());
  if (!res.ok()) return res.error();
  return Status::Ok();
}

}  // namespace lousho::acp

// ACP server: method table, session handling, and editor services.
#include "acp/server.h"

#include <climits>
#include <cstdint>
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

// The auth method ids lousho offers.
constexpr char kAuthEnv[] = "lousho-env";
constexpr char kAuthSetup[] = "lousho-setup";
constexpr char kSetupName[] = "Set up model access";
constexpr char kSetupDescription[] =
    "Choose Anthropic, OpenAI or an OpenAI-compatible server, paste a key, and lousho checks "
    "and stores it";

// The `data` of a JSON-RPC error: the LOUSHO_* name editors and scripts branch on.
Json::Value ErrorData(ErrorCode code) {
  Json::Value d(Json::objectValue);
  d["code"] = ErrorCodeName(code);
  return d;
}

// An internal error's data also carries `details`: Zed shows it in place of the bare
// "Internal error" for -32603.
Json::Value ErrorData(const Error& e) {
  Json::Value d = ErrorData(e.code);
  d["details"] = e.message;
  return d;
}
}  // namespace

Server::Server(LineTransport* transport, std::shared_ptr<const agent::AgentConfig> agent,
               ServerOptions options)
    : agent_(std::move(agent)),
      view_(agent::ViewOf(*agent_)),
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

template <typename P>
void Server::Bind(const char* method, void (Server::*handler)(const P&, Reply)) {
  peer_.OnRequest(method, [this, handler](const Json::Value& raw, Reply reply) {
    Result<P> params = P::FromJson(raw);
    if (!params.ok())
      return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + params.error().message);
    (this->*handler)(*params, std::move(reply));
  });
}

template <typename P>
void Server::BindNotification(const char* method, void (Server::*handler)(const P&)) {
  peer_.OnNotification(method, [this, handler](const Json::Value& raw) {
    Result<P> params = P::FromJson(raw);
    if (params.ok()) (this->*handler)(*params);  // a notification has no one to tell
  });
}

// The whole ACP surface, one line per method.
void Server::BindMethods() {
  Bind(method::kInitialize, &Server::Initialize);
  Bind(method::kAuthenticate, &Server::Authenticate);
  Bind(method::kSessionNew, &Server::NewSession);
  Bind(method::kSessionPrompt, &Server::Prompt);
  Bind(method::kSessionSetMode, &Server::SetMode);
  Bind(method::kSessionClose, &Server::CloseSession);
  BindNotification(method::kSessionCancel, &Server::Cancel);
  BindNotification(method::kCancelRequest, &Server::CancelRequest);
}

void Server::Run() {
  peer_.Run();
  // Input ended: cancel every turn, then let them finish and write their last lines (calls to
  // the editor fail at once now).
  std::map<std::string, std::shared_ptr<agent::Session>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  log::Info("input closed; ending " + std::to_string(sessions.size()) + " session(s)");
  for (auto& [id, s] : sessions) s->Close([] {}, CancelCause::kShutdown);
  sessions.clear();
  pool_.Drain();
}

void Server::Initialize(const InitializeParams& params, Reply reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    initialized_ = true;
    client_caps_ = params.capabilities;
  }
  // A v1 agent answers 1 whatever the client speaks.
  Json::Value res = Obj();
  res["protocolVersion"] = kProtocolVersion;
  Json::Value ac = Obj();
  ac["loadSession"] = false;
  Json::Value pc = Obj();
  pc["image"] = view_.images;
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
  res["authMethods"] = AuthMethods(params.capabilities);
  Json::Value info = Obj();
  info["name"] = "lousho";
  info["title"] = view_.name.empty() ? "lousho" : view_.name;
  info["version"] = options_.version;
  res["agentInfo"] = info;
  reply.Result(res);
}

// The registry lists only agents with an `agent` or `terminal` method; a `terminal` one may be
// offered only to clients that said they run them (ACP's AuthMethodTerminal).
Json::Value Server::AuthMethods(const ClientCapabilities& caps) const {
  Json::Value methods(Json::arrayValue);
  if (caps.auth_terminal) {
    // The client appends `args` to the command it launched lousho with: `lousho acp --setup`.
    Json::Value m = Obj();
    m["type"] = "terminal";
    m["id"] = kAuthSetup;
    m["name"] = kSetupName;
    m["description"] = kSetupDescription;
    Json::Value args(Json::arrayValue);
    args.append("--setup");
    m["args"] = args;
    m["env"] = Obj();
    methods.append(m);
  } else if (caps.meta_terminal_auth && !options_.executable.empty()) {
    // The older form: the client runs this full command itself.
    Json::Value m = Obj();
    m["id"] = kAuthSetup;
    m["name"] = kSetupName;
    m["description"] = kSetupDescription;
    Json::Value t = Obj();
    t["label"] = "lousho setup";
    t["command"] = options_.executable;
    Json::Value args(Json::arrayValue);
    args.append("setup");
    t["args"] = args;
    t["env"] = Obj();
    Json::Value meta = Obj();
    meta["terminal-auth"] = t;
    m["_meta"] = meta;
    methods.append(m);
  }
  // Always: an agent-handled method (no `type`: ACP's default) that reads the credentials
  // again, after the user set them in the agent's environment or ran `lousho setup`.
  Json::Value env = Obj();
  env["id"] = kAuthEnv;
  env["name"] = "Use API key from environment or lousho setup";
  env["description"] =
      "Reads ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL from the agent's environment, "
      "else the key `lousho setup` stored";
  methods.append(env);
  return methods;
}

bool Server::RefreshCredentials() {
  if (!view_.provider_error) return true;
  if (!options_.reload) return false;
  auto again = options_.reload();
  if (!again.ok()) {
    log::Warn("reloading the agent: " + again.error().ToString());
    return false;
  }
  agent_ = *again;
  view_ = agent::ViewOf(*agent_);
  if (!view_.provider_error) log::Info("model credentials found; sessions can start");
  return !view_.provider_error;
}

void Server::Authenticate(const AuthenticateParams& params, Reply reply) {
  if (params.method_id != kAuthEnv && params.method_id != kAuthSetup)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.methodId: unknown auth method '" + params.method_id +
                           "' (offered: " + kAuthEnv + ", " + kAuthSetup + ")");
  if (!RefreshCredentials())
    return reply.Error(kAuthRequired, "Authentication required: " + view_.provider_error->message,
                       ErrorData(view_.provider_error->code));
  reply.Result(Obj());
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

void Server::NewSession(const NewSessionParams& params, Reply reply) {
  if (!RefreshCredentials()) {
    // ACP's "authentication required": the editor shows the message (which names the variable).
    return reply.Error(kAuthRequired, "Authentication required: " + view_.provider_error->message,
                       ErrorData(view_.provider_error->code));
  }
  fs::path dir(params.cwd);
  if (!dir.is_absolute())
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.cwd: must be an absolute path");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.cwd: no such directory: " + params.cwd);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sessions_.size() >= options_.max_sessions) {
      Error full = MakeError(ErrorCode::kSessionLimit, "Too many open sessions (limit " +
                                                           std::to_string(options_.max_sessions) +
                                                           "); close one with session/close");
      return reply.Error(jsonrpc::kInternalError, full.message, ErrorData(full));
    }
  }
  agent::SessionOptions so;
  so.cwd = fs::weakly_canonical(dir, ec);
  if (ec) so.cwd = dir;
  for (const auto& d : params.additional_directories) {
    fs::path root = fs::weakly_canonical(d, ec);
    so.additional_roots.push_back(ec ? fs::path(d) : root);
  }
  if (params.mcp_servers.isArray() && !params.mcp_servers.empty())
    log::Warn("session/new: " + std::to_string(params.mcp_servers.size()) +
              " MCP server(s) given; this version does not connect to MCP servers yet");
  so.id = NewSessionId();
  {
    std::lock_guard<std::mutex> lock(mu_);
    so.services.permissions = this;
    if (client_caps_.fs_read || client_caps_.fs_write) so.services.files = this;
    if (client_caps_.terminal) so.services.terminals = this;
  }
  so.pool = &pool_;
  std::string sid = so.id;
  so.sink = [this, sid](const agent::Event& e) {
    if (auto update = UpdateFromEvent(e)) SendUpdate(sid, *update);
  };
  auto created = agent::Session::Create(agent_, std::move(so));
  if (!created.ok())
    return reply.Error(jsonrpc::kInternalError, created.error().message,
                       ErrorData(created.error()));
  std::shared_ptr<agent::Session> session = *created;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[sid] = session;
  }
  Json::Value res = Obj();
  res["sessionId"] = sid;
  res["modes"] = ModesToJson(session->mode());
  reply.Result(res);
  // Commands only after the session exists for the client.
  if (!view_.commands.empty()) {
    Json::Value u = Obj();
    u["sessionUpdate"] = "available_commands_update";
    Json::Value list(Json::arrayValue);
    for (const auto& c : view_.commands) {
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

std::shared_ptr<agent::Session> Server::FindSession(const std::string& session_id, Reply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) {
    reply->Error(jsonrpc::kInvalidParams,
                 "Invalid params: params.sessionId: unknown session " + session_id);
    return nullptr;
  }
  return it->second;
}

void Server::Prompt(const PromptParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto content = PromptFromJson(params.prompt, session->SupportsImages());
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
  Status st = session->Prompt(
      std::move(*content), [this, request_key, shared_reply](Result<agent::TurnResult> res) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          prompts_.erase(request_key);
        }
        if (res.ok()) {
          Json::Value out = Obj();
          out["stopReason"] = StopReasonName(res->stop);
          shared_reply->Result(out);
        } else {
          shared_reply->Error(jsonrpc::kInternalError, res.error().message, ErrorData(res.error()));
        }
      });
  if (!st.ok()) {
    if (registered) {
      std::lock_guard<std::mutex> lock(mu_);
      prompts_.erase(request_key);  // this request never started
    }
    if (st.error().code == ErrorCode::kSessionBusy)
      return shared_reply->Error(jsonrpc::kInvalidRequest,
                                 "Invalid Request: a prompt is already running in this session");
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
  }
}

void Server::SetMode(const SetModeParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto mode = agent::ParsePermissionMode(params.mode_id);
  if (!mode)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.modeId: unknown mode " + params.mode_id);
  // Answered after the mode update has gone out, on the session's worker.
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = session->SetMode(*mode, [shared_reply] { shared_reply->Result(Obj()); });
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
    sessions_.erase(session->id());
  }
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  session->Close([shared_reply] { shared_reply->Result(Obj()); });
}

void Server::Cancel(const SessionIdParams& params) {
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(params.session_id);
    if (it == sessions_.end()) return;
    s = it->second;
  }
  s->Cancel();
}

// Cancelling a session/prompt request is the same as session/cancel for its session; the prompt
// still answers once, with stopReason "cancelled".
void Server::CancelRequest(const CancelRequestParams& params) {
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prompts_.find(WriteJson(params.request_id));
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

// --- The client's capabilities ---

agent::PermissionDecision Server::RequestPermission(const std::string& session_id,
                                                    const agent::PermissionRequest& request,
                                                    const CancelToken& cancel) {
  auto res =
      peer_.Call(method::kRequestPermission, PermissionRequestToJson(session_id, request), cancel);
  if (!res.ok()) {
    if (res.error().code == ErrorCode::kClientError) {
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

Result<std::string> Server::ReadTextFile(const std::string& session_id, const std::string& path,
                                         int line, int limit, const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  if (line > 0) p["line"] = line;
  if (limit > 0) p["limit"] = limit;
  auto res = peer_.Call(method::kFsRead, p, cancel);
  if (!res.ok()) return res.error();
  auto content = AsString(MemberOrNull(*res, "content"));
  if (!content)
    return MakeError(ErrorCode::kClientError, "fs/read_text_file: the editor sent no content");
  return *content;
}

Status Server::WriteTextFile(const std::string& session_id, const std::string& path,
                             const std::string& content, const CancelToken& cancel) {
  Json::Value p = Obj();
  p["sessionId"] = session_id;
  p["path"] = path;
  p["content"] = content;
  auto res = peer_.Call(method::kFsWrite, p, cancel);
  if (!res.ok()) return res.error();
  // The result is an object (null from clients that send no result); anything else is malformed.
  if (!res->isObject() && !res->isNull())
    return MakeError(ErrorCode::kClientError,
                     "fs/write_text_file: the editor sent a malformed reply");
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

Result<agent::TerminalOutput> Server::GetTerminalOutput(const std::string& session_id,
                                                        const std::string& terminal_id) {
  auto res = peer_.Call(method::kTerminalOutput, TerminalParams(session_id, terminal_id),
                        CancelToken(), options_.cleanup_timeout_ms);
  if (!res.ok()) return res.error();
  agent::TerminalOutput out;
  out.output = StringOr(*res, "output");
  out.truncated = BoolOr(*res, "truncated", false);
  const Json::Value& status = MemberOrNull(*res, "exitStatus");
  if (auto exit = ExitFromJson(status); exit.ok()) out.exit = *exit;
  return out;
}

Result<agent::TerminalExit> Server::WaitForTerminalExit(const std::string& session_id,
                                                        const std::string& terminal_id,
                                                        const CancelToken& cancel) {
  auto res = peer_.Call(method::kTerminalWait, TerminalParams(session_id, terminal_id), cancel);
  if (!res.ok()) return res.error();
  return ExitFromJson(*res);  // a malformed status fails the call
}

Status Server::KillTerminal(const std::string& session_id, const std::string& terminal_id) {
  auto res = peer_.Call(method::kTerminalKill, TerminalParams(session_id, terminal_id),
                        CancelToken(), options_.cleanup_timeout_ms);
  if (!res.ok()) return res.error();
  return Status::Ok();
}

Status Server::ReleaseTerminal(const std::string& session_id, const std::string& terminal_id) {
  auto res = peer_.Call(method::kTerminalRelease, TerminalParams(session_id, terminal_id),
                        CancelToken(), options_.cleanup_timeout_ms);
  if (!res.ok()) return res.error();
  return Status::Ok();
}

}  // namespace lousho::acp

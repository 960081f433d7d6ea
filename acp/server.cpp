// ACP server: method table, session handling, and editor services.
#include "acp/server.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "acp/methods.h"
#include "agent/builtin_commands.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
namespace fs = std::filesystem;
using jsonrpc::Reply;

namespace {
// The session's mode, model and thinking level as its config options name them.
SessionConfigValues ConfigValuesOf(const agent::Session& session) {
  SessionConfigValues v;
  v.mode = session.selection().mode();
  const agent::ModelChoice m = session.selection().model();
  v.model = m.provider_name + "/" + m.model_id;
  v.thinking = agent::ThinkingLevelId(m.thinking);
  return v;
}
}  // namespace

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

size_t SessionsForFileLimit(uint64_t limit) {
  if (limit <= kReservedFds + kFdsPerSession) return 1;
  return static_cast<size_t>(std::min<uint64_t>((limit - kReservedFds) / kFdsPerSession,
                                                std::numeric_limits<size_t>::max()));
}

Server::Server(LineTransport* transport, host::SessionHost* host, ServerOptions options)
    : host_(host),
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
  load_error_ = options_.load_error;
  for (const auto& l : host::SessionHost::ThinkingLevels()) levels_.emplace_back(l.id, l.name);
  TakeAgent();
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
  Bind(method::kSessionLoad, &Server::LoadSession);
  Bind(method::kSessionResume, &Server::ResumeSession);
  Bind(method::kSessionList, &Server::ListSessions);
  Bind(method::kSessionPrompt, &Server::Prompt);
  Bind(method::kSessionSetMode, &Server::SetMode);
  Bind(method::kSessionSetConfigOption, &Server::SetConfigOption);
  Bind(method::kSessionSetModel, &Server::SetModel);
  Bind(method::kSessionClose, &Server::CloseSession);
  BindNotification(method::kSessionCancel, &Server::Cancel);
  BindNotification(method::kCancelRequest, &Server::CancelRequest);
}

void Server::Run() {
  peer_.Run();
  shutdown_.Cancel(CancelCause::kShutdown);
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
  ac["loadSession"] = SavesSessions();
  Json::Value pc = Obj();
  pc["image"] = view_.images;
  pc["audio"] = false;
  pc["embeddedContext"] = true;
  ac["promptCapabilities"] = pc;
  Json::Value mcp = Obj();
  mcp["http"] = true;
  mcp["sse"] = true;
  ac["mcpCapabilities"] = mcp;
  Json::Value sc = Obj();
  sc["close"] = Obj();
  sc["additionalDirectories"] = Obj();  // honoured as extra roots of the session's tools
  sc["systemPrompt"] = SystemPromptCapability();
  if (SavesSessions()) {
    sc["list"] = Obj();
    sc["resume"] = Obj();
  }
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

bool Server::SavesSessions() const { return host_->saves_sessions(); }

void Server::TakeAgent() {
  agent_ = host_->agent();
  view_ = agent::ViewOf(*agent_);
  // The host's offers: the same list the RPC door offers.
  view_.models.clear();
  for (const auto& m : host_->models()) view_.models.push_back(m.option);
}

bool Server::EnsureAgent(Reply* reply) {
  if (!load_error_) return true;
  if (options_.reload) {
    Status again = host_->Load();
    if (again.ok()) {
      TakeAgent();
      load_error_.reset();
      log::Info("agent '" + agent_->name + "' loaded; sessions can start");
      return true;
    }
    // The file may have changed: its current error.
    load_error_ =
        options_.explain_load_error ? options_.explain_load_error(again.error()) : again.error();
  }
  // The editor shows the message (Zed: data.details for -32603): the code, the place in the
  // spec and what to do.
  const std::string text =
      std::string(ErrorCodeName(load_error_->code)) + ": " + load_error_->message;
  Json::Value data = ErrorData(load_error_->code);
  data["details"] = text;
  reply->Error(jsonrpc::kInternalError, text, data);
  return false;
}

bool Server::RefreshCredentials() {
  if (!view_.provider_error) return true;
  if (!options_.reload) return false;
  Status again = host_->Load();
  if (!again.ok()) {
    log::Warn("reloading the agent: " + again.error().ToString());
    return false;
  }
  TakeAgent();
  if (!view_.provider_error) log::Info("model credentials found; sessions can start");
  return !view_.provider_error;
}

void Server::Authenticate(const AuthenticateParams& params, Reply reply) {
  if (params.method_id != kAuthEnv && params.method_id != kAuthSetup)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.methodId: unknown auth method '" + params.method_id +
                           "' (offered: " + kAuthEnv + ", " + kAuthSetup + ")");
  if (!EnsureAgent(&reply)) return;
  if (!RefreshCredentials())
    return reply.Error(kAuthRequired, "Authentication required: " + view_.provider_error->message,
                       ErrorData(view_.provider_error->code));
  reply.Result(Obj());
}

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
  {
    std::lock_guard<std::mutex> lock(mu_);
    so.services.permissions = this;
    if (client_caps_.fs_read || client_caps_.fs_write) so.services.files = this;
    if (client_caps_.terminal) so.services.terminals = this;
  }
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
          ForEachReplayUpdate(branch, [&](const Json::Value& u) { SendUpdate(s.info().id, u); });
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
  auto finish = [this, result, warnings = session->info().load_warnings](
                    Reply r, const std::string& sid,
                    const std::vector<agent::mcp::ServerStatus>& status) {
    r.Result(result());
    AnnounceSession(sid, status, warnings);
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
  auto say = [&](const std::string& msg) {
    Json::Value u = Obj();
    u["sessionUpdate"] = "agent_message_chunk";
    Json::Value text = Obj();
    text["type"] = "text";
    text["text"] = msg + "\n";
    u["content"] = text;
    SendUpdate(sid, u);
  };
  if (!load_warnings.empty())
    say("The session file was repaired as it was read (nothing in it was dropped): " +
        load_warnings.front() +
        (load_warnings.size() > 1
             ? " (and " + std::to_string(load_warnings.size() - 1) + " more like it)"
             : std::string()) +
        ".");
  for (const auto& s : servers) {
    std::string msg = agent::mcp::FailureMessage(s);
    if (!msg.empty()) say(msg);
  }
  SendCommands(sid);
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

agent::EventSink Server::MakeSink(const std::string& session_id,
                                  const std::shared_ptr<SessionConfigValues>& values) {
  bool compaction_updates = false;
  bool notices = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    compaction_updates = client_caps_.compaction;
    notices = client_caps_.notices;
  }
  // Events come on the session's worker, one at a time: the values need no lock.
  return [this, session_id, values, compaction_updates, notices](const agent::Event& e) {
    // Text chunks, one per stream delta, skip the Json::Value.
    if (auto params = ChunkUpdateParamsJson(session_id, e)) {
      peer_.NotifySerialized(method::kSessionUpdate, *params);
      return;
    }
    std::optional<Json::Value> update;
    if (compaction_updates) update = CompactionUpdateFromEvent(e);
    if (!update) update = UpdateFromEvent(e);
    if (update) SendUpdate(session_id, *update);
    if (notices)
      if (auto notice = NoticeUpdateFromEvent(e)) SendUpdate(session_id, *notice);
    if (const auto* mode = std::get_if<agent::event::ModeChanged>(&e)) {
      if (auto m = agent::ParsePermissionMode(mode->mode_id)) values->mode = *m;
    } else if (const auto* model = std::get_if<agent::event::ModelChanged>(&e)) {
      values->model = model->provider + "/" + model->model_id;
      values->thinking = model->thinking;
    } else {
      return;
    }
    SendUpdate(session_id, ConfigOptionUpdate(*values, view_.models, levels_));
  };
}

void Server::AddSessionSetup(const agent::Session& session, Json::Value* result) const {
  const SessionConfigValues values = ConfigValuesOf(session);
  (*result)["modes"] = ModesToJson(values.mode);
  (*result)["models"] = ModelsToJson(values.model, view_.models);
  (*result)["configOptions"] = ConfigOptionsToJson(values, view_.models, levels_);
}

void Server::SendCommands(const std::string& session_id) {
  Json::Value list(Json::arrayValue);
  for (const auto& c : agent::kBuiltinCommands) {
    Json::Value item = Obj();
    item["name"] = c.name;
    item["description"] = c.description;
    if (c.hint[0] != '\0') {
      Json::Value input = Obj();
      input["hint"] = c.hint;
      item["input"] = input;
    }
    list.append(item);
  }
  for (const auto& c : view_.commands) {
    if (agent::FindBuiltinCommand(c.name)) continue;  // the built-in one runs
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
  Json::Value u = Obj();
  u["sessionUpdate"] = "available_commands_update";
  u["availableCommands"] = list;
  SendUpdate(session_id, u);
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
  auto content = PromptFromJson(params.prompt, session->selection().SupportsImages());
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
  Status st = session->selection().SetMode(*mode, [shared_reply] { shared_reply->Result(Obj()); });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

// A config option changes through the engine; the answer (all options, as they now are) goes out
// on the session's worker after the config_option_update the change caused.
void Server::SetConfigOption(const SetConfigOptionParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto value = AsString(params.value);
  if (!value)
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: params.value: expected a string");
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  auto answer = [this, shared_reply, weak = std::weak_ptr<agent::Session>(session)] {
    auto s = weak.lock();
    if (!s) return shared_reply->Error(jsonrpc::kInternalError, "the session is gone");
    Json::Value res = Obj();
    res["configOptions"] = ConfigOptionsToJson(ConfigValuesOf(*s), view_.models, levels_);
    shared_reply->Result(res);
  };
  Status st = Status::Ok();
  if (params.config_id == kConfigMode) {
    auto mode = agent::ParsePermissionMode(*value);
    if (!mode)
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.value: unknown mode " + *value);
    st = session->selection().SetMode(*mode, answer);
  } else if (params.config_id == kConfigModel) {
    st = session->selection().SelectModel(*value, answer);
  } else if (params.config_id == kConfigThoughtLevel) {
    const agent::ThinkingLevel level = agent::ParseThinkingLevel(*value);
    if (*value != agent::ThinkingLevelId(level))
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.value: unknown thinking level " + *value);
    st = session->selection().SetThinking(level, answer);
  } else {
    return shared_reply->Error(
        jsonrpc::kInvalidParams,
        "Invalid params: params.configId: unknown option " + params.config_id);
  }
  if (!st.ok()) {
    const int code = st.error().code == ErrorCode::kModelUnknown ? jsonrpc::kInvalidParams
                                                                 : jsonrpc::kInternalError;
    shared_reply->Error(code, st.error().message, ErrorData(st.error().code));
  }
}

void Server::SetModel(const SetModelParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = session->selection().SelectModel(params.model_id,
                                               [shared_reply] { shared_reply->Result(Obj()); });
  if (!st.ok()) {
    const int code = st.error().code == ErrorCode::kModelUnknown ? jsonrpc::kInvalidParams
                                                                 : jsonrpc::kInternalError;
    shared_reply->Error(code, st.error().message, ErrorData(st.error().code));
  }
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
  peer_.NotifySerialized(method::kSessionUpdate, UpdateParamsJson(session_id, update));
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

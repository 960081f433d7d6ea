// The ACP server: its method table, initialize, authentication and loading the agent.
#include "acp/server.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "acp/methods.h"
#include "acp/server_util.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
namespace fs = std::filesystem;
using jsonrpc::Reply;

// The session's mode, model and thinking level as its config options name them.
SessionConfigValues ConfigValuesOf(const agent::Session& session) {
  SessionConfigValues v;
  v.mode = session.selection().mode();
  const agent::ModelChoice m = session.selection().model();
  v.model = m.provider_name + "/" + m.model_id;
  v.thinking = agent::ThinkingLevelId(m.thinking);
  return v;
}

namespace {
// The auth method ids lousho offers.
constexpr char kAuthEnv[] = "lousho-env";
constexpr char kAuthSetup[] = "lousho-setup";
constexpr char kSetupName[] = "Set up model access";
constexpr char kSetupDescription[] =
    "Choose Anthropic, OpenAI or an OpenAI-compatible server, paste a key, and lousho checks "
    "and stores it";
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
                                 }}),
      editor_(&peer_, options_.cleanup_timeout_ms) {
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
  Bind(method::kSessionDelete, &Server::DeleteSession);
  Bind(method::kSessionFork, &Server::ForkSession);
  Bind(method::kLogout, &Server::Logout);
  BindNotification(method::kSessionCancel, &Server::Cancel);
  BindNotification(method::kCancelRequest, &Server::CancelRequest);
  BindRewind();  // [rewind] _lousho/rewind
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
  }
  editor_.SetCapabilities(params.capabilities);
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
  sc["fork"] = Obj();  // unstable
  if (SavesSessions()) {
    sc["list"] = Obj();
    sc["resume"] = Obj();
    sc["delete"] = Obj();
  }
  ac["sessionCapabilities"] = sc;
  Json::Value auth = Obj();
  auth["logout"] = Obj();
  ac["auth"] = auth;
  AdvertiseRewind(&ac);  // [rewind]
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

void Server::SendUpdate(const std::string& session_id, const Json::Value& update) {
  peer_.NotifySerialized(method::kSessionUpdate, UpdateParamsJson(session_id, update));
}

void Server::SendReplay(const std::string& session_id,
                        const std::vector<const agent::Entry*>& branch) {
  // Written in batches: a long history costs a system call per batch, not per update, and no
  // more than one batch is held at a time.
  constexpr size_t kBatchLines = 256;
  constexpr size_t kBatchBytes = size_t{256} << 10;
  std::vector<std::string> batch;
  size_t bytes = 0;
  auto flush = [&] {
    peer_.NotifySerializedBatch(method::kSessionUpdate, batch);
    batch.clear();
    bytes = 0;
  };
  ForEachReplayUpdate(branch, [&](const Json::Value& u) {
    batch.push_back(UpdateParamsJson(session_id, u));
    bytes += batch.back().size();
    if (batch.size() >= kBatchLines || bytes >= kBatchBytes) flush();
  });
  if (!batch.empty()) flush();
}

}  // namespace lousho::acp

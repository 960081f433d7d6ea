// The ACP front door: binds the ACP method table to the session engine and serves the editor's
// side of ClientServices over the same connection.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "acp/codec.h"
#include "acp/editor_channel.h"
#include "agent/mcp/servers.h"
#include "agent/session.h"
#include "host/session_host.h"
#include "support/jsonrpc.h"
#include "support/transport.h"
#include "support/worker_pool.h"

namespace lousho::acp {

// The open-file budget behind the default session cap: descriptors lousho keeps for itself
// (stdio, logs, the signal pipe, the worker pool's, a few spare) and for each open session (its
// session file, its model connection, a running bash tool's pipes, and an MCP stdio server or
// two). `lousho acp` caps open sessions at (open-file limit - kReservedFds) / kFdsPerSession,
// and at kDefaultMaxSessions.
inline constexpr uint64_t kReservedFds = 64;
inline constexpr uint64_t kFdsPerSession = 16;
inline constexpr size_t kDefaultMaxSessions = 1024;
// How many sessions an open-file limit of `limit` leaves room for (at least 1).
size_t SessionsForFileLimit(uint64_t limit);

struct ServerOptions {
  std::string record_file;
  std::string version;
  size_t max_sessions = kDefaultMaxSessions;  // open sessions; session/new past it is refused
  // Said after the refusal when the cap comes from the open-file limit: where it comes from and
  // how to raise it.
  std::string max_sessions_note;
  // How long a call to the editor made while cleaning up (terminal/kill, output, release) may
  // wait for its answer.
  long cleanup_timeout_ms = 5000;
  // The program's absolute path, for the older terminal-auth form (the editor runs it).
  std::string executable;
  // `authenticate`, and session/new while the agent lacks credentials, load the agent again
  // (SessionHost::Load: environment and stored credentials re-read). False: never reloads.
  bool reload = true;
  // Set when the agent did not load at start (a spec found by the lookup, not named on the
  // command line): the host's agent is then a stand-in that answers `initialize` and opens no
  // session. session/new, load, resume, list and authenticate load it first and answer its
  // error (-32603, data.code and data.details) while it fails; once it loads, the agent is
  // kept as any other.
  std::optional<Error> load_error;
  // What the user is told of a failed load (load_error's wording); null: the error as it is.
  std::function<Error(Error)> explain_load_error;
};

// The session's mode, model and thinking level as its config options name them.
SessionConfigValues ConfigValuesOf(const agent::Session& session);

// Owns the sessions of one connection. Run() blocks until input ends (or Stop()), then cancels
// every turn and waits for their last lines. Handlers never block the reader thread.
// The editor's services (EditorChannel) are thread-safe.
class Server {
 public:
  // `host` outlives the server.
  Server(LineTransport* transport, host::SessionHost* host, ServerOptions options);
  ~Server();

  void Run();

 private:
  void BindMethods();
  // Binds a method whose params are P (P::FromJson checks them; a failure answers -32602).
  template <typename P>
  void Bind(const char* method, void (Server::*handler)(const P&, jsonrpc::Reply));
  template <typename P>
  void BindNotification(const char* method, void (Server::*handler)(const P&));
  void Initialize(const InitializeParams& params, jsonrpc::Reply reply);
  void Authenticate(const AuthenticateParams& params, jsonrpc::Reply reply);
  void NewSession(const NewSessionParams& params, jsonrpc::Reply reply);
  void LoadSession(const LoadSessionParams& params, jsonrpc::Reply reply);
  void ResumeSession(const LoadSessionParams& params, jsonrpc::Reply reply);
  void ListSessions(const ListSessionsParams& params, jsonrpc::Reply reply);
  // What session/new, load and resume share: checks that a session may open here (answering
  // the error and returning false when not), the options every session gets, registering it,
  // the response (one function, so new and load answer alike) and the updates that follow it.
  bool CanOpen(const NewSessionParams& params, jsonrpc::Reply* reply);
  agent::SessionOptions BaseOptions(const NewSessionParams& params, const std::string& id,
                                    const std::shared_ptr<SessionConfigValues>& values);
  std::shared_ptr<agent::Session> Register(
      const std::function<Result<std::shared_ptr<agent::Session>>()>& create, jsonrpc::Reply* reply,
      const std::function<void(const agent::Session&)>& before_visible = nullptr);
  Json::Value SessionResult(const agent::Session& session);
  // session/load (replay true) and session/resume, on a worker.
  void OpenStored(const LoadSessionParams& params, bool replay, jsonrpc::Reply reply);
  // The editor's `mcpServers` (a malformed list answers -32602 and gives nullopt) merged with the
  // spec's; parsed before the session is created.
  std::optional<std::vector<config::McpServerSpec>> McpServers(const NewSessionParams& params,
                                                               jsonrpc::Reply* reply);
  // The tail every session opening shares (session/new, load, resume), after Register: starts
  // the MCP servers on a worker, never the reader thread, waiting at most the spec's
  // mcp.startTimeoutMs for all together; then answers `reply` with `result()` and announces the
  // session (AnnounceSession).
  void StartSession(const std::shared_ptr<agent::Session>& session,
                    std::vector<config::McpServerSpec> servers, jsonrpc::Reply reply,
                    const std::function<Json::Value()>& result);
  // Tells the user in the session what reading its file repaired and each server that did not
  // start, then sends the commands.
  void AnnounceSession(const std::string& sid, const std::vector<agent::mcp::ServerStatus>& servers,
                       const std::vector<std::string>& load_warnings = {});
  // A line for the user outside a turn: a notice where the client takes them (and `severity` is
  // given), else a message.
  void TellUser(const std::string& sid, const char* severity, const std::string& title,
                const std::string& msg);
  // While the agent has not loaded (ServerOptions::load_error), loads it again; answers the error
  // and returns false while it still fails. Reader thread.
  bool EnsureAgent(jsonrpc::Reply* reply);
  // Whether session files are saved (or will be, once the agent loads).
  bool SavesSessions() const;
  // Reloads the agent when it lacks credentials; returns whether it has them now. Reader thread.
  bool RefreshCredentials();
  // Takes the host's agent as it is now (after a load). Reader thread.
  void TakeAgent();
  Json::Value AuthMethods(const ClientCapabilities& caps) const;
  void Prompt(const PromptParams& params, jsonrpc::Reply reply);
  void SetMode(const SetModeParams& params, jsonrpc::Reply reply);
  void SetConfigOption(const SetConfigOptionParams& params, jsonrpc::Reply reply);
  void SetModel(const SetModelParams& params, jsonrpc::Reply reply);
  void CloseSession(const SessionIdParams& params, jsonrpc::Reply reply);
  // session_admin.cpp: session/delete, session/fork and logout.
  void DeleteSession(const SessionIdParams& params, jsonrpc::Reply reply);
  void ForkSession(const ForkSessionParams& params, jsonrpc::Reply reply);
  void Logout(const LogoutParams& params, jsonrpc::Reply reply);
  void Cancel(const SessionIdParams& params);
  void CancelRequest(const CancelRequestParams& params);
  // [rewind] _lousho/rewind (acp/rewind.cpp): bound, advertised, served on a worker.
  void BindRewind();
  static void AdvertiseRewind(Json::Value* agent_capabilities);
  void RewindSession(const std::string& session_id, const std::string& message_id,
                     bool restore_files, jsonrpc::Reply reply);
  std::shared_ptr<agent::Session> FindSession(const std::string& session_id, jsonrpc::Reply* reply);
  void SendUpdate(const std::string& session_id, const Json::Value& update);
  // The branch's history as session/update notifications (session/load's replay), in order.
  void SendReplay(const std::string& session_id, const std::vector<const agent::Entry*>& branch);
  // The event sink of a session: its updates, and config_option_update when the mode or the
  // model changes. `values` are the session's current ones: set them (ConfigValuesOf) once the
  // session is created, before it runs anything (a loaded session may have restored a model).
  agent::EventSink MakeSink(const std::string& session_id,
                            const std::shared_ptr<SessionConfigValues>& values);
  // What session/new (and session/load) answer besides the id: modes, models, configOptions.
  void AddSessionSetup(const agent::Session& session, Json::Value* result) const;
  // available_commands_update: the built-in commands, then the session's (spec, files).
  void SendCommands(const std::string& session_id);

  // Declared first: destroyed last, after every session that runs on it.
  WorkerPool pool_;
  host::SessionHost* host_;
  // Passed to new sessions, never called. Replaced only on the reader thread (authenticate,
  // session/new), which is also the only reader of both.
  std::shared_ptr<const agent::AgentConfig> agent_;
  agent::AgentView view_;
  ThinkingLevelNames levels_;  // the host's
  ServerOptions options_;
  jsonrpc::Peer peer_;
  EditorChannel editor_;  // the sessions' ClientServices
  mutable std::mutex mu_;
  bool initialized_ = false;
  std::map<std::string, std::shared_ptr<agent::Session>> sessions_;
  // Running prompts by their request id (as JSON text), for $/cancel_request.
  std::map<std::string, std::weak_ptr<agent::Session>> prompts_;
  std::optional<Error> load_error_;  // the agent has not loaded (ServerOptions::load_error)
  // Fired when input ends: MCP servers still starting stop waiting.
  CancelSource shutdown_;
};

}  // namespace lousho::acp

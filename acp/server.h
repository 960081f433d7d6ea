// The ACP front door: binds the ACP method table to the session engine and serves the editor's
// side of ClientServices over the same connection.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "acp/codec.h"
#include "agent/client_services.h"
#include "agent/session.h"
#include "support/jsonrpc.h"
#include "support/transport.h"
#include "support/worker_pool.h"

namespace lousho::acp {

struct ServerOptions {
  std::string record_file;
  bool test_mode = false;  // deterministic session ids
  std::string version;
  size_t max_sessions = 1024;  // open sessions; session/new past it is refused
  // How long a call to the editor made while cleaning up (terminal/kill, output, release) may
  // wait for its answer.
  long cleanup_timeout_ms = 5000;
  // The program's absolute path, for the older terminal-auth form (the editor runs it).
  std::string executable;
  // Loads the agent again (environment and stored credentials re-read): `authenticate` calls
  // it, and session/new does while the current agent lacks credentials. Null: never reloads.
  std::function<Result<std::shared_ptr<const agent::AgentConfig>>()> reload;
};

// Owns the sessions of one connection. Run() blocks until input ends (or Stop()), then cancels
// every turn and waits for their last lines. Handlers never block the reader thread.
// ClientServices calls are thread-safe.
class Server : public agent::PermissionPrompter, public agent::FileAccess, public agent::Terminals {
 public:
  Server(LineTransport* transport, std::shared_ptr<const agent::AgentConfig> agent,
         ServerOptions options);
  ~Server() override;

  void Run();

  // The capabilities an ACP client may have (fs and terminal as it declares them).
  agent::PermissionDecision RequestPermission(const std::string& session_id,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override;
  bool CanReadTextFile() const override;
  bool CanWriteTextFile() const override;
  Result<std::string> ReadTextFile(const std::string& session_id, const std::string& path, int line,
                                   int limit, const CancelToken& cancel) override;
  Status WriteTextFile(const std::string& session_id, const std::string& path,
                       const std::string& content, const CancelToken& cancel) override;
  Result<std::string> CreateTerminal(const std::string& session_id,
                                     const agent::TerminalRequest& request,
                                     const CancelToken& cancel) override;
  Result<agent::TerminalOutput> GetTerminalOutput(const std::string& session_id,
                                                  const std::string& terminal_id) override;
  Result<agent::TerminalExit> WaitForTerminalExit(const std::string& session_id,
                                                  const std::string& terminal_id,
                                                  const CancelToken& cancel) override;
  Status KillTerminal(const std::string& session_id, const std::string& terminal_id) override;
  Status ReleaseTerminal(const std::string& session_id, const std::string& terminal_id) override;

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
  // Reloads the agent when it lacks credentials; returns whether it has them now. Reader thread.
  bool RefreshCredentials();
  Json::Value AuthMethods(const ClientCapabilities& caps) const;
  void Prompt(const PromptParams& params, jsonrpc::Reply reply);
  void SetMode(const SetModeParams& params, jsonrpc::Reply reply);
  void CloseSession(const SessionIdParams& params, jsonrpc::Reply reply);
  void Cancel(const SessionIdParams& params);
  void CancelRequest(const CancelRequestParams& params);
  std::shared_ptr<agent::Session> FindSession(const std::string& session_id, jsonrpc::Reply* reply);
  void SendUpdate(const std::string& session_id, const Json::Value& update);
  std::string NewSessionId();

  // Declared first: destroyed last, after every session that runs on it.
  WorkerPool pool_;
  // Passed to new sessions, never called. Replaced only on the reader thread (authenticate,
  // session/new), which is also the only reader of both.
  std::shared_ptr<const agent::AgentConfig> agent_;
  agent::AgentView view_;
  ServerOptions options_;
  jsonrpc::Peer peer_;
  mutable std::mutex mu_;
  bool initialized_ = false;
  ClientCapabilities client_caps_;
  std::map<std::string, std::shared_ptr<agent::Session>> sessions_;
  // Running prompts by their request id (as JSON text), for $/cancel_request.
  std::map<std::string, std::weak_ptr<agent::Session>> prompts_;
  long long session_counter_ = 0;
};

}  // namespace lousho::acp

// The ACP front door: binds the ACP method table to the session engine and serves the editor's
// side of ClientServices over the same connection.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "acp/codec.h"
#include "agent/client_services.h"
#include "agent/session.h"
#include "support/jsonrpc.h"
#include "support/transport.h"

namespace lousho::acp {

struct ServerOptions {
  std::string record_file;
  bool test_mode = false;  // deterministic session ids
  std::string version;
};

// Owns the sessions of one connection. Run() blocks until input ends, then cancels every turn
// and waits for the workers. ClientServices calls are thread-safe.
class Server : public agent::ClientServices {
 public:
  Server(LineTransport* transport, std::shared_ptr<const agent::AgentConfig> agent,
         ServerOptions options);
  ~Server() override;

  void Run();

  // ClientServices.
  agent::PermissionDecision RequestPermission(const std::string& session_id,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override;
  bool CanReadTextFile() const override;
  bool CanWriteTextFile() const override;
  Result<std::string> ReadTextFile(const std::string& session_id, const std::string& path, int line,
                                   int limit, const CancelToken& cancel) override;
  Status WriteTextFile(const std::string& session_id, const std::string& path,
                       const std::string& content, const CancelToken& cancel) override;
  bool HasTerminal() const override;
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
  void Initialize(const Json::Value& params, jsonrpc::Reply reply);
  void NewSession(const Json::Value& params, jsonrpc::Reply reply);
  void Prompt(const Json::Value& params, jsonrpc::Reply reply);
  void SetMode(const Json::Value& params, jsonrpc::Reply reply);
  void CloseSession(const Json::Value& params, jsonrpc::Reply reply);
  void Cancel(const Json::Value& params);
  void CancelRequest(const Json::Value& params);
  std::shared_ptr<agent::Session> FindSession(const Json::Value& params, jsonrpc::Reply* reply);
  void SendUpdate(const std::string& session_id, const Json::Value& update);
  std::string NewSessionId();

  std::shared_ptr<const agent::AgentConfig> agent_;
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

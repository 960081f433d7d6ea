// The editor's side of ClientServices over an ACP connection: permission requests, the client's
// file system, its terminals and its forms and URL steps (elicitation), each offered as the
// client declared it in `initialize`.
#pragma once

#include <mutex>
#include <string>

#include "acp/codec.h"
#include "agent/permissions.h"
#include "core/client_services.h"
#include "support/jsonrpc.h"

namespace lousho::acp {

// Thread-safe: sessions call it from their workers while the reader thread sets the
// capabilities once, on `initialize`.
class EditorChannel : public agent::PermissionPrompter,
                      public agent::FileAccess,
                      public agent::Terminals,
                      public agent::Elicitation {
 public:
  // `peer` outlives the channel. `cleanup_timeout_ms` bounds the calls made while cleaning up
  // (terminal output, kill, release).
  EditorChannel(jsonrpc::Peer* peer, long cleanup_timeout_ms);

  void SetCapabilities(const ClientCapabilities& caps);
  ClientCapabilities capabilities() const;
  // The services a new session gets: permissions always, files, terminals and elicitation as
  // declared.
  agent::ClientServices Services();

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
  bool CanAskForm() const override;
  bool CanOpenUrl() const override;
  Result<agent::FormReply> AskForm(const std::string& session_id, const agent::FormRequest& request,
                                   const CancelToken& cancel) override;
  Result<agent::ElicitationAction> OpenUrl(const std::string& session_id,
                                           const agent::UrlRequest& request,
                                           const CancelToken& done,
                                           const CancelToken& cancel) override;

 private:
  jsonrpc::Peer* peer_;
  long cleanup_timeout_ms_;
  mutable std::mutex mu_;
  ClientCapabilities caps_;
};

}  // namespace lousho::acp

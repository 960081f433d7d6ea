// A session's MCP servers: started together with one deadline, their tools offered to the
// session as a ToolSource (refreshed when a server says its list changed), stopped when the
// session closes. The doors start them through host::AttachMcpServers.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/mcp/client.h"
#include "agent/mcp/mcp_login.h"
#include "agent/mcp/mcp_tool.h"
#include "agent/mcp/prompts.h"
#include "config/agent_spec.h"
#include "core/command_source.h"
#include "core/tool.h"
#include "support/cancel.h"

namespace lousho::agent::mcp {

class ServerAuth;     // oauth_flow.h
struct PendingLogin;  // oauth_flow.h

struct StartOptions {
  std::filesystem::path cwd;                 // stdio servers start here unless they name a cwd
  std::vector<std::filesystem::path> roots;  // answered to roots/list as file:// URIs
  std::string client_version;
  config::McpSettings settings;
  CancelToken cancel;        // stops waiting (and starting) at once
  std::string ca_cert_path;  // tests
  ProxySetting proxy;        // the agent's `proxy:` for HTTP servers; unset: the environment's
  // Where HTTP servers' OAuth tokens are kept; empty: TokenStoreDir of the process environment.
  std::string auth_dir;
  LoginHooks login;  // how a server that wants a login asks the user
  // Told (on a thread of the servers; keep it short) when the prompt commands changed after the
  // start: a server's prompts were listed again after it said they changed, or a login brought
  // a server's prompts. May be empty (a door that lists commands only when asked).
  std::function<void()> on_commands_changed;
};

// How one server's start went.
struct ServerStatus {
  std::string name;
  bool connected = false;
  size_t tools = 0;
  std::string error;        // empty when connected
  std::string stderr_tail;  // a failed stdio server's last words
  std::string login_url;    // not empty: waiting for the user to log in there
};

// The editor's servers, then the spec's whose names the editor did not use.
std::vector<config::McpServerSpec> MergeServers(std::vector<config::McpServerSpec> editor,
                                                const std::vector<config::McpServerSpec>& spec);

// A line for the user about a server that did not start (empty for one that did).
std::string FailureMessage(const ServerStatus& status);

// Thread-safe.
class McpServers : public ToolSource, public CommandSource {
 public:
  // Starts every server at once, each on its own thread, and returns when all have connected
  // and listed their tools, or when settings.start_timeout_ms has passed for all together, or
  // `cancel` fired. A server still starting then is reported as timed out and stopped.
  static std::shared_ptr<McpServers> Start(const std::vector<config::McpServerSpec>& specs,
                                           const StartOptions& options);
  ~McpServers() override;

  std::vector<ServerStatus> status() const;
  // The connected servers' clients, by name (the cli calls them directly).
  std::shared_ptr<Client> Find(const std::string& server) const;
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken& cancel) override;
  void Close() override;
  // Prompts as commands (PromptCatalog) and editor links to resources (ResolveResourceLinks).
  std::vector<SourceCommand> Commands() const override { return prompts_.Commands(); }
  std::optional<Result<std::vector<ContentBlock>>> ExpandCommand(
      const std::string& name, const std::vector<std::string>& words,
      const CancelToken& cancel) override {
    return prompts_.Expand(name, words, cancel);
  }
  void ResolveLinks(std::vector<ContentBlock>& content, const CancelToken& cancel) override;

 private:
  struct Slot;
  McpServers() = default;
  void StartOne(const std::shared_ptr<Slot>& slot);
  void AwaitStarts(const StartOptions& options);
  void Rebuild();  // under mu_
  // The connected servers that announced resources (under mu_).
  std::vector<std::shared_ptr<Client>> ResourceClients() const;
  // After a refusal that wants a login: begins it (discovery, registration) and returns why the
  // server is not available yet; `login` gets the login to finish.
  Status PrepareLogin(const std::shared_ptr<Slot>& slot, const Status& refused,
                      const CancelToken& stop, std::shared_ptr<PendingLogin>* login,
                      std::string* url);
  // On its own thread: the user's login, then the server's start with the new token.
  void RunLogin(const std::shared_ptr<Slot>& slot, const std::shared_ptr<PendingLogin>& login);
  // A server said a list changed (on its reader thread): prompts are listed again by Refresh.
  void ListChanged(const std::string& server, const std::string& list);
  // On its own thread until Close: lists again the prompts of the servers that said they
  // changed, and tells the door when the commands changed.
  void Refresh();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Slot>> slots_;  // in the given order
  std::vector<std::shared_ptr<Tool>> tools_;
  std::vector<std::thread> starters_;  // joined at Close (a slow one may still be ending)
  std::vector<std::thread> logins_;    // under mu_; joined at Close
  LoginHooks hooks_;
  std::function<void()> on_commands_changed_;
  std::set<std::string> stale_prompts_;  // under mu_: servers whose prompts changed
  std::thread refresher_;                // runs Refresh; joined at Close
  PromptCatalog prompts_;
  CancelSource closing_;  // ends the logins
  bool closed_ = false;
};

}  // namespace lousho::agent::mcp

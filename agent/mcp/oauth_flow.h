// OAuth 2.1 over the network for one HTTP MCP server, as the MCP authorization spec describes
// it: discovery from the server's challenge, client registration, the authorization-code login
// with PKCE and a loopback redirect (or a device code), the token exchange, refresh, logout.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "agent/mcp/http_transport.h"
#include "agent/mcp/oauth.h"
#include "agent/mcp/oauth_loopback.h"
#include "agent/mcp/oauth_store.h"
#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent::mcp {

struct OAuthOptions {
  std::string server_url;  // the MCP endpoint: the protected resource
  std::string store_dir;   // TokenStoreDir(); empty: tokens are kept in memory only
  std::string client_name = "lousho";
  // A Client ID Metadata Document lousho is known by (an https URL); used where the
  // authorization server supports them, else lousho registers itself (RFC 7591).
  std::string client_metadata_url;
  // A client registered beforehand (the server's `oauth:`): used instead of either of the
  // above. Its secret, or the environment variable holding it, is never shown.
  config::McpOAuthClient pre_registered;
  std::string server_name;         // for messages; empty: the URL names the server
  long timeout_ms = 10000;         // each request to the authorization server
  long login_timeout_ms = 300000;  // the user's whole login
  std::string ca_cert_path;        // tests
  ProxySetting proxy;              // the agent's `proxy:`; unset: the environment's
  bool use_stored = true;          // false: start without the stored token (a new login)
};

// How a login reaches the user. `show` runs on its own thread while the redirect is awaited: it
// presents `url` (an editor's URL step, a printed line) and returns "" once `done` fires (the
// redirect came) or the user finished, or the redirected address the user pasted (no redirect
// reaches lousho over SSH). An error (the user declined, `stop` fired) ends the login.
// `device` presents a device code (the URL and the code to type); empty: no device flow.
struct LoginUi {
  std::function<Result<std::string>(const std::string& url, const CancelToken& done,
                                    const CancelToken& stop)>
      show;
  std::function<void(const std::string& url, const std::string& user_code)> device;
};

// A login begun: the address the user opens and what its redirect must match.
struct PendingLogin {
  std::string url;
  std::string state;
  std::string verifier;
  std::string scope;
  std::string resource;
  AuthServerMetadata as;
  StoredToken client;  // the registration (client id, secret, endpoints)
  std::unique_ptr<LoopbackListener> listener;
};

// One server's authorization. Thread-safe: the transport's request threads ask for the header
// while a login runs.
class ServerAuth : public HttpAuth {
 public:
  explicit ServerAuth(OAuthOptions options);

  // "Bearer <token>", refreshed first when it has expired; "" without a token.
  std::string Authorization() override;
  // A 401 or 403 and its challenge: true when the token was refreshed (send again).
  bool Unauthorized(int status, const std::string& www_authenticate) override;

  // True once the server refused us and no stored or refreshed token helps: a login is due.
  bool needs_login() const;
  bool has_token() const;

  // Discovery, registration and the authorization URL (with the loopback listener open).
  Result<PendingLogin> BeginLogin(const CancelToken& cancel);
  // Shows the URL, waits for the redirect (or a pasted address), checks it and exchanges the
  // code; the tokens are stored. Bounded by login_timeout_ms and `cancel`.
  Status FinishLogin(PendingLogin pending, const LoginUi& ui, const CancelToken& cancel);
  // The device flow (RFC 8628), where the authorization server offers it: `ui.device` shows the
  // code; the token endpoint is polled. kUnsupported-like error when not offered.
  Status DeviceLogin(const LoginUi& ui, const CancelToken& cancel);
  // Forgets the stored tokens; true when some were stored.
  Result<bool> Logout();

  const OAuthOptions& options() const { return options_; }

 private:
  struct Discovered {
    ProtectedResourceMetadata prm;
    AuthServerMetadata as;
    std::string resource;
  };
  Result<Discovered> Discover(const CancelToken& cancel);
  Result<StoredToken> Register(const AuthServerMetadata& as, const std::string& redirect_uri,
                               const CancelToken& cancel);
  Result<TokenResponse> TokenRequest(const StoredToken& client,
                                     std::vector<std::pair<std::string, std::string>> fields,
                                     const CancelToken& cancel);
  // The pre-registered client for `as` (its secret read now), authenticating as `as` allows.
  Result<StoredToken> PreRegistered(const AuthServerMetadata& as) const;
  // The secret of the pre-registered client: the spec's, or its environment variable's.
  Result<std::string> PreRegisteredSecret() const;
  bool IsPreRegistered(const StoredToken& client) const;
  // "MCP server 'name'" (or its URL) for messages.
  std::string Named() const;
  Status Keep(StoredToken client, const TokenResponse& tokens);
  bool RefreshLocked(const std::string& used_token);
  std::string LoginScope(const Discovered& d) const;

  OAuthOptions options_;
  TokenStore store_;
  mutable std::mutex mu_;
  StoredToken token_;
  std::string challenge_scope_;    // the scope the last challenge asked for
  std::string resource_metadata_;  // the challenge's resource_metadata URL
  bool needs_login_ = false;
  std::mutex refresh_mu_;  // one refresh at a time
};

}  // namespace lousho::agent::mcp

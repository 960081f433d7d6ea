// The tokens of HTTP MCP servers, kept beside the credentials of `lousho setup`: one file per
// server URL under <config>/lousho/mcp-auth/, private to its owner (0600).
#pragma once

#include <string>

#include "support/env.h"
#include "support/status.h"

namespace lousho::agent::mcp {

// What a login leaves for the next use: the client it registered and the tokens it got.
struct StoredToken {
  std::string server_url;  // the MCP endpoint it is for
  std::string issuer;
  std::string token_endpoint;
  std::string client_id;
  std::string client_secret;  // empty for a public client
  std::string auth_method;    // how the client authenticates at the token endpoint
  std::string resource;       // the RFC 8707 resource the tokens are bound to
  std::string access_token;
  std::string refresh_token;
  std::string scope;
  long long expires_at = 0;  // Unix seconds; 0: not said
};

// <config>/lousho/mcp-auth beside CredentialsPath; "" when no home is known.
std::string TokenStoreDir(const EnvLookup& getenv);

// Thread-compatible; several processes may share the folder (each save replaces one file in
// one step).
class TokenStore {
 public:
  explicit TokenStore(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // The file of `server_url`: a hash of the URL, so no URL character reaches the file system.
  std::string PathFor(const std::string& server_url) const;
  // The stored token of `server_url`; an empty one when there is none or the file is not ours
  // to read (a file that is not valid JSON is an error that never quotes its content).
  Result<StoredToken> Load(const std::string& server_url) const;
  Status Save(const StoredToken& token) const;
  // True when a token was removed.
  Result<bool> Forget(const std::string& server_url) const;

 private:
  std::string dir_;
};

}  // namespace lousho::agent::mcp

// The token files of HTTP MCP servers.
#include "agent/mcp/oauth_store.h"

#include <filesystem>

#include "config/credentials.h"
#include "support/files.h"
#include "support/json_util.h"
#include "support/sha256.h"

namespace lousho::agent::mcp {

std::string TokenStoreDir(const EnvLookup& getenv) {
  const std::string credentials = config::CredentialsPath(getenv);
  if (credentials.empty()) return {};
  return std::filesystem::path(credentials).parent_path().string() + "/mcp-auth";
}

std::string TokenStore::PathFor(const std::string& server_url) const {
  return dir_ + "/" + Sha256Hex(server_url).substr(0, 32) + ".json";
}

Result<StoredToken> TokenStore::Load(const std::string& server_url) const {
  StoredToken t;
  if (dir_.empty()) return t;
  const std::string path = PathFor(server_url);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return t;
  auto text = ReadDiskFile(path, 1 << 20);
  if (!text.ok()) return MakeError(ErrorCode::kConfigInvalid, text.error().message);
  auto json = ParseJson(*text);
  if (!json.ok() || !json->isObject())
    return MakeError(ErrorCode::kConfigInvalid,
                     path + ": not a JSON object (`lousho mcp logout` removes it)");
  // A hash collision, or a file copied from elsewhere: not this server's.
  if (StringOr(*json, "server_url") != server_url) return t;
  t.server_url = server_url;
  t.issuer = StringOr(*json, "issuer");
  t.token_endpoint = StringOr(*json, "token_endpoint");
  t.client_id = StringOr(*json, "client_id");
  t.client_secret = StringOr(*json, "client_secret");
  t.auth_method = StringOr(*json, "auth_method");
  t.resource = StringOr(*json, "resource");
  t.access_token = StringOr(*json, "access_token");
  t.refresh_token = StringOr(*json, "refresh_token");
  t.scope = StringOr(*json, "scope");
  t.expires_at = IntOr(*json, "expires_at", 0);
  return t;
}

Status TokenStore::Save(const StoredToken& t) const {
  if (dir_.empty())
    return MakeError(ErrorCode::kConfigNotFound,
                     "no place for MCP tokens: neither HOME nor XDG_CONFIG_HOME is set");
  Json::Value root(Json::objectValue);
  root["server_url"] = t.server_url;
  root["issuer"] = t.issuer;
  root["token_endpoint"] = t.token_endpoint;
  root["client_id"] = t.client_id;
  if (!t.client_secret.empty()) root["client_secret"] = t.client_secret;
  if (!t.auth_method.empty()) root["auth_method"] = t.auth_method;
  root["resource"] = t.resource;
  root["access_token"] = t.access_token;
  if (!t.refresh_token.empty()) root["refresh_token"] = t.refresh_token;
  if (!t.scope.empty()) root["scope"] = t.scope;
  if (t.expires_at > 0) root["expires_at"] = static_cast<Json::Int64>(t.expires_at);
  return WritePrivateFile(PathFor(t.server_url), WriteJsonPretty(root) + "\n");
}

Result<bool> TokenStore::Forget(const std::string& server_url) const {
  if (dir_.empty()) return false;
  std::error_code ec;
  const std::string path = PathFor(server_url);
  const bool removed = std::filesystem::remove(path, ec);
  if (ec)
    return MakeError(ErrorCode::kConfigInvalid, "cannot remove " + path + ": " + ec.message());
  return removed;
}

}  // namespace lousho::agent::mcp

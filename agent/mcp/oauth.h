// OAuth 2.1 for HTTP MCP servers, the parts without a network: PKCE (RFC 7636), the Bearer
// challenge (RFC 6750 / RFC 9728), protected-resource and authorization-server metadata
// (RFC 9728, RFC 8414, OpenID discovery), URLs and form bodies, token responses.
#pragma once

#include <json/json.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace lousho::agent::mcp {

// Base64 without padding, in the URL-safe alphabet (`url`) or the standard one.
std::string Base64Encode(std::string_view bytes, bool url);
// `n` random bytes from the system (getrandom), as base64url: states and PKCE verifiers.
Result<std::string> RandomUrlToken(size_t n);
// The S256 challenge of a PKCE verifier: base64url(SHA-256(verifier)).
std::string PkceS256(std::string_view verifier);

// A URL split into origin ("https://host:port" as written) and path-and-query ("/" at least).
struct UrlParts {
  std::string origin;
  std::string path;  // with the query, without the fragment
};
std::optional<UrlParts> SplitUrl(std::string_view url);
// application/x-www-form-urlencoded (and query) encoding and decoding.
std::string FormEncode(std::string_view s);
std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields);
std::map<std::string, std::string> ParseQuery(std::string_view query);
// `base` with `fields` added to its query.
std::string WithQuery(const std::string& base,
                      const std::vector<std::pair<std::string, std::string>>& fields);
// The canonical resource URI of an MCP endpoint (RFC 8707): lower-case scheme and host, no
// fragment, no trailing slash on an empty path.
std::string CanonicalResource(std::string_view url);

// A `WWW-Authenticate: Bearer ...` challenge; nullopt when the header holds no Bearer one.
struct BearerChallenge {
  std::map<std::string, std::string> params;  // lower-case names: realm, scope, error, ...
  std::string Param(const std::string& name) const;
};
std::optional<BearerChallenge> ParseBearerChallenge(std::string_view header);

// Where the protected-resource metadata of `resource_url` may be (RFC 9728 section 3.1): at the
// path-inserted well-known URL first, then at the origin's root.
std::vector<std::string> ProtectedResourceMetadataUrls(const std::string& resource_url);
// Where an issuer's metadata may be: RFC 8414 (path inserted), then OpenID discovery (path
// inserted, then appended), as the MCP authorization spec orders them.
std::vector<std::string> AuthServerMetadataUrls(const std::string& issuer);

struct ProtectedResourceMetadata {
  std::string resource;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};
// Errors when the document is no object or names no authorization server.
Result<ProtectedResourceMetadata> ParseProtectedResourceMetadata(const Json::Value& doc);

struct AuthServerMetadata {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;          // empty: no dynamic registration
  std::string device_authorization_endpoint;  // empty: no device flow
  std::vector<std::string> scopes_supported;
  std::vector<std::string> code_challenge_methods;
  std::vector<std::string> token_endpoint_auth_methods;
  bool client_id_metadata_documents = false;  // client_id_metadata_document_supported
  bool iss_parameter = false;                 // authorization_response_iss_parameter_supported
};
// Errors when an endpoint is missing, or the issuer is not `expected_issuer` (RFC 8414 3.3),
// or the server does not offer PKCE with S256.
Result<AuthServerMetadata> ParseAuthServerMetadata(const Json::Value& doc,
                                                   const std::string& expected_issuer);

// A token endpoint's answer (RFC 6749 5.1): errors on an `error` answer or no access token.
struct TokenResponse {
  std::string access_token;
  std::string refresh_token;  // may be empty
  long long expires_in = 0;   // seconds; 0 when not said
  std::string scope;
};
Result<TokenResponse> ParseTokenResponse(const Json::Value& doc);

// How a client with a secret authenticates at a token endpoint that lists `supported`
// (token_endpoint_auth_methods_supported; empty: the RFC 8414 default, client_secret_basic):
// client_secret_basic where offered, else client_secret_post; "none" without a secret. An error
// names what the server offers when it takes neither.
Result<std::string> ChooseTokenAuthMethod(const std::vector<std::string>& supported,
                                          bool has_secret);

// A request to a token endpoint with the client's authentication added (RFC 6749 2.3.1): for
// client_secret_basic an `Authorization: Basic` header over the form-encoded id and secret,
// else the id (and the secret, for client_secret_post or an unknown method with a secret) as
// fields.
struct ClientCredentials {
  std::string client_id;
  std::string client_secret;
  std::string auth_method;  // client_secret_basic, client_secret_post, none
};
void AuthenticateClient(const ClientCredentials& client,
                        std::vector<std::pair<std::string, std::string>>* headers,
                        std::vector<std::pair<std::string, std::string>>* fields);

// The scopes to ask for: the challenge's, else the resource's, else the server's, else none;
// with `held` (scopes granted before) added for incremental consent.
std::string ChooseScope(const std::string& challenged, const ProtectedResourceMetadata& prm,
                        const AuthServerMetadata& as, const std::string& held);

}  // namespace lousho::agent::mcp

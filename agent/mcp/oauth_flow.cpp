// One server's OAuth: discovery, registration, login, tokens.
#include "agent/mcp/oauth_flow.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "support/env.h"
#include "support/http/http_client.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent::mcp {
namespace {

constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
constexpr long long kExpirySlackS = 30;  // a token this close to its end is refreshed first

long long UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Fetched {
  int status = 0;
  std::string body;
  std::string error;  // the request failed on its way
};

// One request to an authorization server (any origin); redirects within it are followed.
Fetched FetchUrl(const std::string& method, const std::string& url,
                 std::vector<std::pair<std::string, std::string>> headers, std::string body,
                 const OAuthOptions& o, const CancelToken& cancel) {
  Fetched out;
  auto parts = SplitUrl(url);
  auto base = parts ? ParseBaseUrl(parts->origin)
                    : Result<BaseUrl>(MakeError(ErrorCode::kMcpServer, "bad URL"));
  if (!base.ok()) {
    out.error = "not a URL: " + url;
    return out;
  }
  HttpOptions ho;
  ho.connect_timeout_s = static_cast<int>(std::max(1L, o.timeout_ms / 1000));
  ho.idle_timeout_s = ho.connect_timeout_s;
  ho.ca_cert_path = o.ca_cert_path;
  ho.proxy = o.proxy;
  HttpPostRequest req;
  req.method = method;
  req.path = parts->path;
  req.headers = std::move(headers);
  req.headers.emplace_back("Accept", "application/json");
  // Registration sends JSON (RFC 7591), the token endpoints a form: a Content-Type given here
  // replaces the HTTP module's default (JSON).
  if (body.empty() || body[0] != '{')
    req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  req.body = std::move(body);
  HttpStreamResult res = HttpClient(*base, ho).PostStream(
      req,
      [&](std::string_view bytes, const MoreReady&) {
        out.body.append(bytes);
        return out.body.size() <= kMaxDocumentBytes;
      },
      cancel);
  out.status = res.status;
  if (res.status >= 300) out.body = res.error_body;
  if (res.status == 0 || (res.outcome != HttpOutcome::kCompleted && res.status < 300))
    out.error = res.transport_error.empty() ? "the request failed" : res.transport_error;
  return out;
}

// A JSON document at `url`; nullopt (and `why` set) when it is not there.
std::optional<Json::Value> FetchJson(const std::string& url, const OAuthOptions& o,
                                     const CancelToken& cancel, std::string* why) {
  Fetched f = FetchUrl("GET", url, {}, "", o, cancel);
  if (!f.error.empty() || f.status != 200) {
    *why = url + ": " + (f.error.empty() ? "HTTP " + std::to_string(f.status) : f.error);
    return std::nullopt;
  }
  auto doc = ParseJson(f.body);
  if (!doc.ok() || !doc->isObject()) {
    *why = url + ": not a JSON object";
    return std::nullopt;
  }
  return *doc;
}

// The token endpoint's answer, JSON whatever its status (errors are JSON too, RFC 6749 5.2).
Result<TokenResponse> TokenAnswer(const Fetched& f, const std::string& endpoint) {
  if (!f.error.empty()) return MakeError(ErrorCode::kMcpServer, endpoint + ": " + f.error);
  auto doc = ParseJson(f.body);
  if (!doc.ok())
    return MakeError(ErrorCode::kMcpServer,
                     endpoint + ": HTTP " + std::to_string(f.status) + " without a JSON answer");
  return ParseTokenResponse(*doc);
}

}  // namespace

ServerAuth::ServerAuth(OAuthOptions options)
    : options_(std::move(options)), store_(options_.store_dir) {
  if (!options_.use_stored) return;
  auto stored = store_.Load(options_.server_url);
  if (stored.ok()) {
    token_ = *stored;
  } else {
    log::Warn("MCP server " + options_.server_url + ": " + stored.error().message);
  }
}

std::string ServerAuth::Authorization() {
  std::string used;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (token_.access_token.empty()) return "";
    const bool expired = token_.expires_at > 0 && UnixNow() + kExpirySlackS >= token_.expires_at;
    if (!expired || token_.refresh_token.empty()) return "Bearer " + token_.access_token;
    used = token_.access_token;
  }
  RefreshLocked(used);
  std::lock_guard<std::mutex> lock(mu_);
  return token_.access_token.empty() ? "" : "Bearer " + token_.access_token;
}

bool ServerAuth::Unauthorized(int status, const std::string& www_authenticate) {
  auto challenge = ParseBearerChallenge(www_authenticate);
  std::string used;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (challenge) {
      if (std::string rm = challenge->Param("resource_metadata"); !rm.empty())
        resource_metadata_ = rm;
      challenge_scope_ = challenge->Param("scope");
    }
    // Too few scopes: only the user can grant more (incremental consent).
    if (status == 403) {
      needs_login_ = challenge && challenge->Param("error") == "insufficient_scope";
      return false;
    }
    used = token_.access_token;
    if (used.empty() || token_.refresh_token.empty()) {
      needs_login_ = true;
      return false;
    }
  }
  if (RefreshLocked(used)) return true;
  std::lock_guard<std::mutex> lock(mu_);
  needs_login_ = true;
  return false;
}

// Refreshes unless another thread already replaced `used_token`; true when a token other than
// `used_token` is now held.
bool ServerAuth::RefreshLocked(const std::string& used_token) {
  std::lock_guard<std::mutex> one(refresh_mu_);
  StoredToken t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (token_.access_token != used_token) return !token_.access_token.empty();
    t = token_;
  }
  if (t.refresh_token.empty() || t.token_endpoint.empty()) return false;
  auto fresh = TokenRequest(t,
                            {{"grant_type", "refresh_token"},
                             {"refresh_token", t.refresh_token},
                             {"resource", t.resource}},
                            CancelToken());
  if (!fresh.ok()) {
    log::Warn("MCP server " + options_.server_url +
              ": the token could not be refreshed: " + fresh.error().message);
    return false;
  }
  if (fresh->refresh_token.empty()) fresh->refresh_token = t.refresh_token;
  if (fresh->scope.empty()) fresh->scope = t.scope;
  return Keep(t, *fresh).ok();
}

bool ServerAuth::needs_login() const {
  std::lock_guard<std::mutex> lock(mu_);
  return needs_login_;
}

bool ServerAuth::has_token() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !token_.access_token.empty();
}

Status ServerAuth::Keep(StoredToken client, const TokenResponse& tokens) {
  client.server_url = options_.server_url;
  // The spec (or the environment) holds the pre-registered secret; the store does not.
  if (IsPreRegistered(client)) client.client_secret.clear();
  client.access_token = tokens.access_token;
  client.refresh_token = tokens.refresh_token;
  client.scope = tokens.scope.empty() ? client.scope : tokens.scope;
  client.expires_at = tokens.expires_in > 0 ? UnixNow() + tokens.expires_in : 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    token_ = client;
    needs_login_ = false;
  }
  if (options_.store_dir.empty()) return Status::Ok();
  Status saved = store_.Save(client);
  if (!saved.ok())
    log::Warn("MCP server " + options_.server_url +
              ": the token is not kept for later: " + saved.error().message);
  return saved;
}

Result<ServerAuth::Discovered> ServerAuth::Discover(const CancelToken& cancel) {
  std::vector<std::string> prm_urls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resource_metadata_.empty()) prm_urls.push_back(resource_metadata_);
  }
  for (const auto& u : ProtectedResourceMetadataUrls(options_.server_url)) prm_urls.push_back(u);
  std::string why;
  std::optional<Json::Value> prm_doc;
  for (const auto& u : prm_urls) {
    if ((prm_doc = FetchJson(u, options_, cancel, &why))) break;
  }
  if (!prm_doc)
    return MakeError(ErrorCode::kMcpServer, "no protected-resource metadata for " +
                                                options_.server_url + " (" + why + ")");
  auto prm = ParseProtectedResourceMetadata(*prm_doc);
  if (!prm.ok()) return prm.error();
  Discovered d;
  d.prm = *prm;
  // The resource the metadata names must be this server (RFC 9728 section 3.3).
  d.resource = CanonicalResource(options_.server_url);
  if (!prm->resource.empty() && CanonicalResource(prm->resource) != d.resource &&
      d.resource.rfind(CanonicalResource(prm->resource), 0) != 0)
    return MakeError(ErrorCode::kMcpServer, "the protected-resource metadata is for " +
                                                prm->resource + ", not " + options_.server_url);
  if (!prm->resource.empty()) d.resource = prm->resource;
  const std::string& issuer = prm->authorization_servers.front();
  for (const auto& u : AuthServerMetadataUrls(issuer)) {
    auto doc = FetchJson(u, options_, cancel, &why);
    if (!doc) continue;
    auto as = ParseAuthServerMetadata(*doc, issuer);
    if (!as.ok()) return as.error();
    d.as = *as;
    return d;
  }
  return MakeError(ErrorCode::kMcpServer,
                   "no metadata for the authorization server " + issuer + " (" + why + ")");
}

std::string ServerAuth::Named() const {
  return options_.server_name.empty() ? "MCP server " + options_.server_url
                                      : "MCP server '" + options_.server_name + "'";
}

bool ServerAuth::IsPreRegistered(const StoredToken& client) const {
  return !options_.pre_registered.client_id.empty() &&
         client.client_id == options_.pre_registered.client_id;
}

Result<std::string> ServerAuth::PreRegisteredSecret() const {
  const config::McpOAuthClient& c = options_.pre_registered;
  if (c.client_secret_env.empty()) return c.client_secret;
  auto secret = ProcessEnv(c.client_secret_env);
  if (!secret || secret->empty())
    return MakeError(ErrorCode::kMcpServer, Named() + ": the environment variable " +
                                                c.client_secret_env +
                                                " (oauth.clientSecretEnv) is not set");
  return *secret;
}

Result<StoredToken> ServerAuth::PreRegistered(const AuthServerMetadata& as) const {
  auto secret = PreRegisteredSecret();
  if (!secret.ok()) return secret.error();
  auto method = ChooseTokenAuthMethod(as.token_endpoint_auth_methods, !secret->empty());
  if (!method.ok())
    return MakeError(ErrorCode::kMcpServer, Named() +
                                                ": the pre-registered client cannot "
                                                "authenticate at " +
                                                as.token_endpoint + ": " + method.error().message);
  StoredToken client;
  client.issuer = as.issuer;
  client.token_endpoint = as.token_endpoint;
  client.client_id = options_.pre_registered.client_id;
  client.client_secret = *secret;
  client.auth_method = *method;
  return client;
}

Result<StoredToken> ServerAuth::Register(const AuthServerMetadata& as,
                                         const std::string& redirect_uri,
                                         const CancelToken& cancel) {
  // A client given beforehand: no registration, no metadata document.
  if (!options_.pre_registered.client_id.empty()) return PreRegistered(as);
  StoredToken client;
  client.issuer = as.issuer;
  client.token_endpoint = as.token_endpoint;
  if (as.client_id_metadata_documents && !options_.client_metadata_url.empty()) {
    client.client_id = options_.client_metadata_url;
    client.auth_method = "none";
    return client;
  }
  if (as.registration_endpoint.empty())
    return MakeError(ErrorCode::kMcpServer,
                     "the authorization server " + as.issuer +
                         " lets no client register itself and takes no client metadata document");
  Json::Value meta(Json::objectValue);
  meta["client_name"] = options_.client_name;
  // A program on the user's machine with a loopback redirect (SEP-837, OpenID registration).
  meta["application_type"] = "native";
  meta["redirect_uris"].append(redirect_uri);
  meta["grant_types"].append("authorization_code");
  meta["grant_types"].append("refresh_token");
  meta["response_types"].append("code");
  meta["token_endpoint_auth_method"] = "none";
  Fetched f = FetchUrl("POST", as.registration_endpoint, {}, WriteJson(meta), options_, cancel);
  auto doc = ParseJson(f.body);
  if (!f.error.empty() || f.status >= 300 || !doc.ok() || StringOr(*doc, "client_id").empty())
    return MakeError(ErrorCode::kMcpServer,
                     "the client registration at " + as.registration_endpoint + " failed (" +
                         (f.error.empty() ? "HTTP " + std::to_string(f.status) : f.error) + ")");
  client.client_id = StringOr(*doc, "client_id");
  client.client_secret = StringOr(*doc, "client_secret");
  client.auth_method = StringOr(*doc, "token_endpoint_auth_method",
                                client.client_secret.empty() ? "none" : "client_secret_basic");
  return client;
}

Result<TokenResponse> ServerAuth::TokenRequest(
    const StoredToken& client, std::vector<std::pair<std::string, std::string>> fields,
    const CancelToken& cancel) {
  ClientCredentials creds{client.client_id, client.client_secret, client.auth_method};
  // The pre-registered secret is not kept with the tokens: it is read again (the spec, the
  // environment) for each request.
  if (IsPreRegistered(client) && creds.client_secret.empty()) {
    auto secret = PreRegisteredSecret();
    if (!secret.ok()) return secret.error();
    creds.client_secret = *secret;
  }
  std::vector<std::pair<std::string, std::string>> headers;
  AuthenticateClient(creds, &headers, &fields);
  Fetched f = FetchUrl("POST", client.token_endpoint, std::move(headers), FormBody(fields),
                       options_, cancel);
  auto answer = TokenAnswer(f, client.token_endpoint);
  // A client the authorization server does not know, or a wrong secret (RFC 6749 5.2).
  if (!answer.ok() && answer.error().message.find("invalid_client") != std::string::npos)
    return MakeError(ErrorCode::kMcpServer,
                     Named() + ": the authorization server " + client.issuer +
                         " did not accept the client '" + client.client_id + "'" +
                         (IsPreRegistered(client) ? " (check oauth.clientId and its secret)" : "") +
                         ": " + answer.error().message);
  return answer;
}

std::string ServerAuth::LoginScope(const Discovered& d) const {
  std::lock_guard<std::mutex> lock(mu_);
  // The spec's scopes stand in for the servers' suggestions; a challenge still asks for more.
  if (!options_.pre_registered.scopes.empty()) {
    ProtectedResourceMetadata prm = d.prm;
    prm.scopes_supported = options_.pre_registered.scopes;
    return ChooseScope(challenge_scope_, prm, d.as, token_.scope);
  }
  return ChooseScope(challenge_scope_, d.prm, d.as, token_.scope);
}

Result<PendingLogin> ServerAuth::BeginLogin(const CancelToken& cancel) {
  auto d = Discover(cancel);
  if (!d.ok()) return d.error();
  auto listener = LoopbackListener::Open();
  if (!listener.ok()) return listener.error();
  auto client = Register(d->as, (*listener)->redirect_uri(), cancel);
  if (!client.ok()) return client.error();
  auto state = RandomUrlToken(24);
  auto verifier = RandomUrlToken(48);
  if (!state.ok() || !verifier.ok()) return state.ok() ? verifier.error() : state.error();
  PendingLogin p;
  p.state = *state;
  p.verifier = *verifier;
  p.scope = LoginScope(*d);
  p.resource = d->resource;
  p.as = d->as;
  p.client = *client;
  p.client.resource = d->resource;
  std::vector<std::pair<std::string, std::string>> q = {
      {"response_type", "code"},
      {"client_id", p.client.client_id},
      {"redirect_uri", (*listener)->redirect_uri()},
      {"code_challenge", PkceS256(p.verifier)},
      {"code_challenge_method", "S256"},
      {"state", p.state},
      {"resource", p.resource}};
  if (!p.scope.empty()) q.emplace_back("scope", p.scope);
  p.url = WithQuery(d->as.authorization_endpoint, q);
  p.listener = std::move(*listener);
  return p;
}

namespace {
// The redirect's answer checked (RFC 9207 `iss`, then an error): the code, or why not.
Result<std::string> CodeOf(const std::map<std::string, std::string>& query,
                           const AuthServerMetadata& as) {
  auto it = query.find("iss");
  if (it != query.end() && it->second != as.issuer)
    return MakeError(ErrorCode::kMcpServer, "the login answer came from issuer '" + it->second +
                                                "', not '" + as.issuer + "'; it was ignored");
  if (it == query.end() && as.iss_parameter)
    return MakeError(ErrorCode::kMcpServer, "the login answer does not name its issuer, which " +
                                                as.issuer + " promised to do; it was ignored");
  if (auto e = query.find("error"); e != query.end()) {
    auto desc = query.find("error_description");
    return MakeError(ErrorCode::kMcpServer,
                     "the login was refused: " + e->second +
                         (desc == query.end() ? std::string() : ": " + desc->second));
  }
  auto code = query.find("code");
  if (code == query.end() || code->second.empty())
    return MakeError(ErrorCode::kMcpServer, "the login answer holds no code");
  return code->second;
}
}  // namespace

Status ServerAuth::FinishLogin(PendingLogin p, const LoginUi& ui, const CancelToken& cancel) {
  CancelSource done;
  CancelSource give_up;
  LinkedCancelSource stop(cancel, give_up.token());
  CancelSource shown_failed;
  Result<std::string> shown = std::string();
  std::thread presenter([&] {
    shown = ui.show(p.url, done.token(), stop.token());
    // Declined, failed, or a pasted address: the listener waits no longer.
    if (!shown.ok() || !shown->empty()) shown_failed.Cancel();
  });
  LinkedCancelSource waiting(cancel, shown_failed.token());
  auto query = p.listener->Wait(p.state, options_.login_timeout_ms, waiting.token());
  if (query.ok()) {
    done.Cancel();
  } else {
    give_up.Cancel();
  }
  presenter.join();
  if (!query.ok() && shown.ok() && !shown->empty()) {
    const size_t q = shown->find('?');
    query = ParseQuery(q == std::string::npos ? std::string_view()
                                              : std::string_view(*shown).substr(q));
    if (query->count("state") == 0 || query->at("state") != p.state)
      return MakeError(ErrorCode::kMcpServer, "the pasted address is not this login's redirect");
  }
  if (!query.ok()) return shown.ok() ? query.error() : shown.error();
  auto code = CodeOf(*query, p.as);
  if (!code.ok()) return code.error();
  auto tokens = TokenRequest(p.client,
                             {{"grant_type", "authorization_code"},
                              {"code", *code},
                              {"redirect_uri", p.listener->redirect_uri()},
                              {"code_verifier", p.verifier},
                              {"resource", p.resource}},
                             cancel);
  if (!tokens.ok()) return tokens.error();
  if (tokens->scope.empty()) tokens->scope = p.scope;
  return Keep(p.client, *tokens);
}

Status ServerAuth::DeviceLogin(const LoginUi& ui, const CancelToken& cancel) {
  auto d = Discover(cancel);
  if (!d.ok()) return d.error();
  if (d->as.device_authorization_endpoint.empty() || !ui.device)
    return MakeError(ErrorCode::kMcpServer, "the authorization server offers no device code");
  auto client = Register(d->as, "http://127.0.0.1/callback", cancel);
  if (!client.ok()) return client.error();
  client->resource = d->resource;
  std::vector<std::pair<std::string, std::string>> fields = {{"resource", d->resource}};
  std::vector<std::pair<std::string, std::string>> headers;
  AuthenticateClient({client->client_id, client->client_secret, client->auth_method}, &headers,
                     &fields);
  const std::string scope = LoginScope(*d);
  if (!scope.empty()) fields.emplace_back("scope", scope);
  Fetched f = FetchUrl("POST", d->as.device_authorization_endpoint, std::move(headers),
                       FormBody(fields), options_, cancel);
  auto doc = ParseJson(f.body);
  if (!f.error.empty() || f.status != 200 || !doc.ok() || StringOr(*doc, "device_code").empty())
    return MakeError(ErrorCode::kMcpServer,
                     "the device authorization failed at " + d->as.device_authorization_endpoint);
  const std::string device_code = StringOr(*doc, "device_code");
  ui.device(StringOr(*doc, "verification_uri_complete", StringOr(*doc, "verification_uri")),
            StringOr(*doc, "user_code"));
  long interval_ms = static_cast<long>(IntOr(*doc, "interval", 5)) * 1000;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(std::min<long long>(
                         IntOr(*doc, "expires_in", 600) * 1000, options_.login_timeout_ms));
  while (std::chrono::steady_clock::now() < until) {
    if (cancel.WaitFor(interval_ms)) return MakeError(ErrorCode::kCancelled, "cancelled");
    auto tokens = TokenRequest(*client,
                               {{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                                {"device_code", device_code},
                                {"resource", d->resource}},
                               cancel);
    if (tokens.ok()) {
      if (tokens->scope.empty()) tokens->scope = scope;
      return Keep(*client, *tokens);
    }
    const std::string& why = tokens.error().message;
    if (why.find("slow_down") != std::string::npos) interval_ms += 5000;
    if (why.find("authorization_pending") == std::string::npos &&
        why.find("slow_down") == std::string::npos)
      return tokens.error();
  }
  return MakeError(ErrorCode::kTimeout, "the device code expired before the login finished");
}

Result<bool> ServerAuth::Logout() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    token_ = StoredToken();
  }
  return store_.Forget(options_.server_url);
}

}  // namespace lousho::agent::mcp

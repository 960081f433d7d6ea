// OAuth's pure parts: encodings, PKCE, challenges and metadata documents.
#include "agent/mcp/oauth.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <set>

#include "support/json_util.h"
#include "support/sha256.h"
#include "support/text.h"

namespace lousho::agent::mcp {
namespace {

constexpr std::string_view kHexDigits = "0123456789ABCDEF";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string FormDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> StringList(const Json::Value& doc, std::string_view key) {
  std::vector<std::string> out;
  const Json::Value& list = MemberOrNull(doc, key);
  if (!list.isArray()) return out;
  for (Json::ArrayIndex i = 0; i < list.size(); ++i)
    if (auto s = AsString(ElementOrNull(list, i)); s && !s->empty()) out.push_back(*s);
  return out;
}

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The path of a URL without its query and trailing slash ("" for the root).
std::string BarePath(const UrlParts& u) {
  std::string p = u.path.substr(0, u.path.find('?'));
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

// Splits `header` at the commas that separate auth-params, honouring quoted strings.
std::vector<std::string> SplitParams(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted && c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

std::string Base64Encode(std::string_view bytes, bool url) {
  const char* alphabet = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                             : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = byte(i) << 16;
    if (rest == 2) v |= byte(i + 1) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    if (rest == 2) out += alphabet[(v >> 6) & 63];
    if (!url) out.append(rest == 1 ? "==" : "=");
  }
  return out;
}

Result<std::string> RandomUrlToken(size_t n) {
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(bytes.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return MakeError(ErrorCode::kResourceExhausted, "no random bytes from the system");
    got += static_cast<size_t>(r);
  }
  return Base64Encode(bytes, true);
}

std::string PkceS256(std::string_view verifier) {
  const std::string hex = Sha256Hex(verifier);
  std::string raw;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    raw += static_cast<char>(HexValue(hex[i]) * 16 + HexValue(hex[i + 1]));
  return Base64Encode(raw, true);
}

std::optional<UrlParts> SplitUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  const size_t rest = url.find_first_of("/?#", sep + 3);
  UrlParts u;
  u.origin = std::string(url.substr(0, rest));
  if (u.origin.size() == sep + 3) return std::nullopt;
  std::string path = rest == std::string_view::npos ? "" : std::string(url.substr(rest));
  path = path.substr(0, path.find('#'));
  if (path.empty() || path[0] == '?') path.insert(0, "/");
  u.path = path;
  return u;
}

std::string FormEncode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHexDigits[c >> 4];
      out += kHexDigits[c & 15];
    }
  }
  return out;
}

std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += FormEncode(k) + "=" + FormEncode(v);
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  if (!query.empty() && query[0] == '?') query.remove_prefix(1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    std::string key = FormDecode(pair.substr(0, eq));
    if (!key.empty() && !out.count(key))
      out[key] = eq == std::string_view::npos ? "" : FormDecode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

std::string WithQuery(const std::string& base,
                      const std::vector<std::pair<std::string, std::string>>& fields) {
  return base + (base.find('?') == std::string::npos ? "?" : "&") + FormBody(fields);
}

std::string CanonicalResource(std::string_view url) {
  auto u = SplitUrl(url);
  if (!u) return std::string(url);
  std::string origin = AsciiLower(u->origin);
  std::string path = u->path;
  if (path == "/") path.clear();
  return origin + path;
}

std::string BearerChallenge::Param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::optional<BearerChallenge> ParseBearerChallenge(std::string_view header) {
  const std::string lower = AsciiLower(header);
  size_t at = lower.find("bearer");
  while (at != std::string::npos && at > 0 && lower[at - 1] != ' ' && lower[at - 1] != ',')
    at = lower.find("bearer", at + 1);
  if (at == std::string::npos) return std::nullopt;
  BearerChallenge c;
  for (const std::string& piece : SplitParams(header.substr(at + 6))) {
    const size_t eq = piece.find('=');
    if (eq == std::string::npos) continue;
    std::string name = AsciiLower(TrimSpace(piece.substr(0, eq)));
    // A name with a space in it starts the next scheme's challenge.
    if (name.empty() || name.find(' ') != std::string::npos) break;
    std::string value = TrimSpace(piece.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    c.params.emplace(std::move(name), std::move(value));
  }
  return c;
}

std::vector<std::string> ProtectedResourceMetadataUrls(const std::string& resource_url) {
  auto u = SplitUrl(resource_url);
  if (!u) return {};
  const std::string path = BarePath(*u);
  std::vector<std::string> out;
  if (!path.empty()) out.push_back(u->origin + "/.well-known/oauth-protected-resource" + path);
  out.push_back(u->origin + "/.well-known/oauth-protected-resource");
  return out;
}

std::vector<std::string> AuthServerMetadataUrls(const std::string& issuer) {
  auto u = SplitUrl(issuer);
  if (!u) return {};
  const std::string path = BarePath(*u);
  std::vector<std::string> out = {u->origin + "/.well-known/oauth-authorization-server" + path,
                                  u->origin + "/.well-known/openid-configuration" + path};
  if (!path.empty()) out.push_back(u->origin + path + "/.well-known/openid-configuration");
  return out;
}

Result<ProtectedResourceMetadata> ParseProtectedResourceMetadata(const Json::Value& doc) {
  if (!doc.isObject())
    return MakeError(ErrorCode::kMcpServer, "the protected-resource metadata is not an object");
  ProtectedResourceMetadata m;
  m.resource = StringOr(doc, "resource");
  m.authorization_servers = StringList(doc, "authorization_servers");
  m.scopes_supported = StringList(doc, "scopes_supported");
  if (m.authorization_servers.empty())
    return MakeError(ErrorCode::kMcpServer,
                     "the protected-resource metadata names no authorization server");
  return m;
}

Result<AuthServerMetadata> ParseAuthServerMetadata(const Json::Value& doc,
                                                   const std::string& expected_issuer) {
  if (!doc.isObject())
    return MakeError(ErrorCode::kMcpServer, "the authorization-server metadata is not an object");
  AuthServerMetadata m;
  m.issuer = StringOr(doc, "issuer");
  m.authorization_endpoint = StringOr(doc, "authorization_endpoint");
  m.token_endpoint = StringOr(doc, "token_endpoint");
  m.registration_endpoint = StringOr(doc, "registration_endpoint");
  m.device_authorization_endpoint = StringOr(doc, "device_authorization_endpoint");
  m.scopes_supported = StringList(doc, "scopes_supported");
  m.code_challenge_methods = StringList(doc, "code_challenge_methods_supported");
  m.token_endpoint_auth_methods = StringList(doc, "token_endpoint_auth_methods_supported");
  m.client_id_metadata_documents = BoolOr(doc, "client_id_metadata_document_supported", false);
  m.iss_parameter = BoolOr(doc, "authorization_response_iss_parameter_supported", false);
  auto trimmed = [](std::string s) {
    while (!s.empty() && s.back() == '/') s.pop_back();
    return s;
  };
  if (trimmed(m.issuer) != trimmed(expected_issuer))
    return MakeError(ErrorCode::kMcpServer, "the authorization server's metadata names issuer '" +
                                                m.issuer + "', not '" + expected_issuer + "'");
  if (m.authorization_endpoint.empty() || m.token_endpoint.empty())
    return MakeError(ErrorCode::kMcpServer,
                     "the authorization server's metadata lacks its authorization or token "
                     "endpoint");
  if (!Contains(m.code_challenge_methods, "S256"))
    return MakeError(ErrorCode::kMcpServer,
                     "the authorization server does not offer PKCE with S256, so lousho "
                     "cannot log in to it safely");
  return m;
}

Result<TokenResponse> ParseTokenResponse(const Json::Value& doc) {
  if (!doc.isObject())
    return MakeError(ErrorCode::kMcpServer, "the token endpoint's answer is not a JSON object");
  if (std::string err = StringOr(doc, "error"); !err.empty()) {
    std::string desc = StringOr(doc, "error_description");
    return MakeError(ErrorCode::kMcpServer, "the authorization server refused: " + err +
                                                (desc.empty() ? "" : ": " + desc));
  }
  TokenResponse t;
  t.access_token = StringOr(doc, "access_token");
  t.refresh_token = StringOr(doc, "refresh_token");
  t.expires_in = IntOr(doc, "expires_in", 0);
  t.scope = StringOr(doc, "scope");
  if (t.access_token.empty())
    return MakeError(ErrorCode::kMcpServer, "the token endpoint's answer holds no access token");
  return t;
}

Result<std::string> ChooseTokenAuthMethod(const std::vector<std::string>& supported,
                                          bool has_secret) {
  if (!has_secret) return std::string("none");
  auto offered = [&](const char* m) {
    return std::find(supported.begin(), supported.end(), m) != supported.end();
  };
  if (supported.empty() || offered("client_secret_basic"))
    return std::string("client_secret_basic");
  if (offered("client_secret_post")) return std::string("client_secret_post");
  std::string list;
  for (const auto& m : supported) list += (list.empty() ? "" : ", ") + m;
  return MakeError(ErrorCode::kMcpServer,
                   "the token endpoint takes neither client_secret_basic nor client_secret_post "
                   "(it takes " +
                       list + ")");
}

void AuthenticateClient(const ClientCredentials& client,
                        std::vector<std::pair<std::string, std::string>>* headers,
                        std::vector<std::pair<std::string, std::string>>* fields) {
  if (client.auth_method == "client_secret_basic" && !client.client_secret.empty()) {
    headers->emplace_back("Authorization",
                          "Basic " + Base64Encode(FormEncode(client.client_id) + ":" +
                                                      FormEncode(client.client_secret),
                                                  false));
    return;
  }
  fields->emplace_back("client_id", client.client_id);
  if (!client.client_secret.empty()) fields->emplace_back("client_secret", client.client_secret);
}

std::string ChooseScope(const std::string& challenged, const ProtectedResourceMetadata& prm,
                        const AuthServerMetadata& as, const std::string& held) {
  std::vector<std::string> base;
  if (!challenged.empty()) {
    base = {challenged};
  } else if (!prm.scopes_supported.empty()) {
    base = prm.scopes_supported;
  } else {
    base = as.scopes_supported;
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string all = JoinStrings(base, " ") + " " + held;
  size_t i = 0;
  while (i < all.size()) {
    size_t end = all.find(' ', i);
    if (end == std::string::npos) end = all.size();
    std::string s = all.substr(i, end - i);
    if (!s.empty() && seen.insert(s).second) out.push_back(s);
    i = end + 1;
  }
  return JoinStrings(out, " ");
}

}  // namespace lousho::agent::mcp

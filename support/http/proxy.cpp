// The proxy choice of every HTTP request.
#include "support/http/proxy.h"

#include <algorithm>
#include <cctype>

#include "support/text.h"

namespace lousho::agent {

namespace {

std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The first set, non-empty variable of `names`.
std::string FirstSet(const EnvLookup& getenv, std::initializer_list<const char*> names,
                     std::string* which) {
  if (!getenv) return {};
  for (const char* name : names) {
    auto v = getenv(name);
    if (v && !TrimSpace(*v).empty()) {
      *which = name;
      return TrimSpace(*v);
    }
  }
  return {};
}

bool LoopbackHost(std::string_view host) {
  const std::string h = AsciiLower(host);
  return h == "localhost" || h.ends_with(".localhost") || h.starts_with("127.") || h == "::1" ||
         h == "[::1]";
}

// One NO_PROXY entry against the host (lower case, no brackets) and port.
bool NoProxyEntryMatches(std::string entry, const std::string& host, int port) {
  if (entry == "*") return true;
  // A port after the last colon of a name or IPv4 address, or after "]" of an IPv6 one.
  const size_t colon = entry.rfind(':');
  const bool v6 = entry.starts_with('[') || std::count(entry.begin(), entry.end(), ':') > 1;
  if (colon != std::string::npos && (!v6 || entry.find(']') < colon)) {
    if (entry.substr(colon + 1) != std::to_string(port)) return false;
    entry.resize(colon);
  }
  if (entry.starts_with('[') && entry.ends_with(']')) entry = entry.substr(1, entry.size() - 2);
  if (entry.starts_with("*.")) entry.erase(0, 1);
  if (entry.starts_with('.')) entry.erase(0, 1);
  if (entry.empty()) return false;
  return host == entry || (host.size() > entry.size() && host.ends_with(entry) &&
                           host[host.size() - entry.size() - 1] == '.');
}

}  // namespace

Result<ProxyServer> ParseProxyUrl(std::string_view url, std::string_view where) {
  std::string_view rest = url;
  auto bad = [&](const std::string& why) -> Error {
    return MakeError(ErrorCode::kProviderConfig, std::string(where) + ": " + why + " (expected " +
                                                     "http://[user:password@]host:port)");
  };
  if (const size_t s = rest.find("://"); s != std::string_view::npos) {
    const std::string scheme = AsciiLower(rest.substr(0, s));
    if (scheme != "http")
      return bad("a " + scheme +
                 ":// proxy is not supported, only http:// (HTTPS is tunnelled "
                 "through it with CONNECT)");
    rest.remove_prefix(s + 3);
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  ProxyServer p;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    p.user = PercentDecoded(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) p.password = PercentDecoded(userinfo.substr(colon + 1));
    rest.remove_prefix(at + 1);
  }
  std::string_view host = rest;
  std::string_view port;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return bad("an unclosed [ in the host");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return bad("no host");
  p.host = std::string(host);
  p.port = 1080;
  if (!port.empty()) {
    int n = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || n > 65535) return bad("a bad port '" + std::string(port) + "'");
      n = n * 10 + (c - '0');
    }
    if (n < 1 || n > 65535) return bad("a bad port '" + std::string(port) + "'");
    p.port = n;
  }
  return p;
}

bool NoProxyMatches(std::string_view no_proxy, std::string_view host, int port) {
  std::string h = AsciiLower(host);
  if (h.starts_with('[') && h.ends_with(']')) h = h.substr(1, h.size() - 2);
  std::string entry;
  for (size_t i = 0; i <= no_proxy.size(); ++i) {
    const char c = i < no_proxy.size() ? no_proxy[i] : ',';
    if (c != ',' && c != ' ' && c != '\t') {
      entry += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (!entry.empty() && NoProxyEntryMatches(entry, h, port)) return true;
    entry.clear();
  }
  return false;
}

Result<std::optional<ProxyServer>> ProxyFor(std::string_view scheme, std::string_view host,
                                            int port, const ProxySetting& configured,
                                            const EnvLookup& getenv) {
  if (configured.set) {
    const std::string setting = TrimSpace(scheme == "https" ? configured.https : configured.http);
    if (setting.empty() || setting == "direct" || setting == "none" || LoopbackHost(host) ||
        NoProxyMatches(configured.no_proxy, host, port))
      return std::optional<ProxyServer>();
    const std::string where = "the proxy setting (" + std::string(scheme) + ")";
    auto p = ParseProxyUrl(setting, where);
    if (!p.ok()) return p.error();
    p->source = where;
    return std::optional<ProxyServer>(*p);
  }
  std::string which;
  const std::string url =
      scheme == "https"
          ? FirstSet(getenv, {"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"}, &which)
          : FirstSet(getenv, {"http_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"}, &which);
  if (url.empty() || LoopbackHost(host)) return std::optional<ProxyServer>();
  std::string ignored;
  if (NoProxyMatches(FirstSet(getenv, {"NO_PROXY", "no_proxy"}, &ignored), host, port))
    return std::optional<ProxyServer>();
  auto p = ParseProxyUrl(url, which);
  if (!p.ok()) return p.error();
  p->source = which;
  return std::optional<ProxyServer>(*p);
}

}  // namespace lousho::agent

// Which HTTP proxy a request goes through: the one place every HTTP call (providers, MCP,
// fetch) decides it, from a configured proxy URL or the environment (HTTPS_PROXY, HTTP_PROXY,
// ALL_PROXY and NO_PROXY, upper or lower case, as curl reads them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "support/env.h"
#include "support/status.h"

namespace lousho::agent {

// A proxy to connect through: HTTPS targets are tunnelled with CONNECT, plain HTTP requests are
// sent to it in absolute form. user / password (percent-decoded from the URL) go as
// Proxy-Authorization: Basic.
struct ProxyServer {
  std::string host;
  int port = 0;
  std::string user;
  std::string password;
  std::string source;  // where it was set: "HTTPS_PROXY", "the proxy setting", ...
  // "http://host:port", never the credentials: what messages show.
  std::string Shown() const { return "http://" + host + ":" + std::to_string(port); }
};

// An agent spec's `proxy:` setting (docs/agent-spec.md). When set it replaces the environment's
// proxy variables (and NO_PROXY) for that agent's HTTP calls.
struct ProxySetting {
  bool set = false;      // false: the environment decides
  std::string https;     // the proxy of https:// targets: a URL, "direct"; empty: direct
  std::string http;      // the proxy of http:// targets, the same way
  std::string no_proxy;  // hosts reached directly, as NO_PROXY lists them (comma separated)
  // The string form: one proxy for both schemes.
  static ProxySetting Both(const std::string& url) { return {true, url, url, ""}; }
};

// Parses "http://[user[:password]@]host[:port][/]" (no scheme means http; the port defaults to
// 1080, as curl's does). Other schemes (https, socks) are errors naming the variable or setting.
Result<ProxyServer> ParseProxyUrl(std::string_view url, std::string_view where);

// Whether NO_PROXY's list (comma or space separated: "*", host names, ".domain" or "domain"
// matching the domain and its sub-domains, IP addresses, each optionally with ":port") names
// `host`:`port`.
bool NoProxyMatches(std::string_view no_proxy, std::string_view host, int port);

// The proxy for a request to scheme://host:port. `configured` (HttpOptions::proxy) wins when set:
// its URL for the scheme, unless that is empty, "direct" or "none" or its no_proxy names the
// host. Else the environment's, unless NO_PROXY names the host. Loopback hosts (localhost,
// 127.0.0.0/8, ::1) never go through a proxy: local model and MCP servers stay reachable when a
// company proxy is set. nullopt: connect directly.
Result<std::optional<ProxyServer>> ProxyFor(std::string_view scheme, std::string_view host,
                                            int port, const ProxySetting& configured,
                                            const EnvLookup& getenv);

}  // namespace lousho::agent

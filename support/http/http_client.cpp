// Base URLs, and the HTTP client that runs in the lazily loaded transport module.
#include "support/http/http_client.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <mutex>
#include <optional>

#include "support/env.h"
#include "support/http/http_module/http_module.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::agent {

namespace {

// The host and port of a URL's authority ("host", "host:port", "[v6]", "[v6]:port"); an error,
// or null.
const char* SplitHostPort(std::string_view authority, std::string_view* host,
                          std::string_view* port) {
  *host = authority;
  if (!authority.empty() && authority[0] == '[') {  // IPv6 literal
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unclosed IPv6 address";
    *host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return "bad port";
      *port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    *host = authority.substr(0, colon);
    *port = authority.substr(colon + 1);
  }
  return host->empty() ? "missing host" : nullptr;
}

// The port a URL names (1-65535), or its scheme's default when it names none; 0 when bad.
int PortNumber(std::string_view port, const std::string& scheme) {
  if (port.empty()) return scheme == "https" ? 443 : 80;
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  const int n = std::stoi(std::string(port));
  return n <= 65535 ? n : 0;
}

// Query and fragment make no sense on a base URL; the path only, without trailing slashes.
std::string BasePath(std::string_view path) {
  size_t q = path.find_first_of("?#");
  if (q != std::string_view::npos) path = path.substr(0, q);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

}  // namespace

Result<BaseUrl> ParseBaseUrl(std::string_view url) {
  auto fail = [&](const std::string& why) {
    return MakeError(kProviderConfig, "invalid base URL '" + std::string(url) + "': " + why);
  };
  BaseUrl out;
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return fail("expected http:// or https://");
  const std::string scheme = AsciiLower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") return fail("expected http:// or https://");
  out.scheme = scheme;
  std::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) return fail("credentials in URL");
  std::string_view host;
  std::string_view port;
  if (const char* bad = SplitHostPort(authority, &host, &port)) return fail(bad);
  out.host = std::string(host);
  out.port = PortNumber(port, scheme);
  if (out.port <= 0) return fail("bad port");
  out.path_prefix = BasePath(path);
  return out;
}

namespace {

std::string ExeDir() {
  const std::string path = ExecutablePath();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The transport lives in its own shared module so that a process that never talks HTTP (the
// offline model, most of start-up) does not load httplib, OpenSSL, zlib and brotli: they cost
// about two thirds of start-up time and memory. Loaded once, on first use, and never unloaded.
struct TransportModule {
  PostStreamFn post = nullptr;
  std::string error;
};

const TransportModule& Transport() {
  static const TransportModule* module = [] {
    auto* m = new TransportModule();
    std::vector<std::string> candidates;
    if (auto env = ProcessEnv("LOUSHO_HTTP_MODULE"); env && !env->empty())
      candidates.push_back(*env);
    const std::string dir = ExeDir();
    candidates.push_back(dir + "/" + kHttpModuleFile);
    candidates.push_back(dir + "/../lib/lousho/" + kHttpModuleFile);
    std::string tried;
    for (const auto& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = dlerror();
        tried += (tried.empty() ? "" : "; ") + std::string(why ? why : path);
        continue;
      }
      m->post = reinterpret_cast<PostStreamFn>(dlsym(handle, kHttpModuleEntry));
      if (m->post != nullptr) {
        log::Debug("HTTP transport loaded from " + path);
        return m;
      }
      tried += "; " + path + ": no entry point";
    }
    m->error = "cannot load the HTTP transport module (" + tried + ")";
    log::Error(m->error);
    return m;
  }();
  return *module;
}

}  // namespace

namespace {

bool Followable(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string HeaderValue(const HeaderMap& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// A Location as a message shows it: at most 200 bytes, no control characters.
std::string ShownLocation(const std::string& location) {
  std::string out;
  for (char c : location.substr(0, 200)) out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  return location.size() > 200 ? out + "..." : out;
}

}  // namespace

std::optional<std::string> SameOriginPath(const BaseUrl& base, const std::string& path,
                                          const std::string& location) {
  std::string target = location.substr(0, location.find('#'));
  if (target.rfind("//", 0) == 0) target = base.scheme + ":" + target;
  if (target.find("://") != std::string::npos && target.find("://") < target.find_first_of("/?")) {
    auto other = ParseBaseUrl(target);
    if (!other.ok() || other->scheme != base.scheme ||
        AsciiLower(other->host) != AsciiLower(base.host) || other->port != base.port)
      return std::nullopt;
    const size_t rest = target.find_first_of("/?", target.find("://") + 3);
    target = rest == std::string::npos ? "/" : target.substr(rest);
    return target[0] == '?' ? "/" + target : target;
  }
  if (!target.empty() && target[0] == '/') return target;
  // Relative to the request's folder (or its path, for a query alone).
  std::string dir = path.substr(0, path.find('?'));
  if (!target.empty() && target[0] == '?') return dir + target;
  dir = dir.substr(0, dir.rfind('/') + 1);
  return (dir.empty() ? "/" : dir) + target;
}

HttpStreamResult HttpClient::PostStream(const HttpPostRequest& request, const BodyCallback& on_body,
                                        const CancelToken& cancel) const {
  const TransportModule& t = Transport();
  HttpStreamResult result;
  if (t.post == nullptr) {
    result.outcome = HttpOutcome::kConnectFailed;
    result.transport_error = t.error;
    return result;
  }
  // The one place every request's proxy is decided.
  HttpOptions options = options_;
  auto via = ProxyFor(base_.scheme, base_.host, base_.port, options_.proxy, ProcessEnv);
  if (!via.ok()) {
    result.outcome = HttpOutcome::kConnectFailed;
    result.failure = HttpFailure::kProxy;
    result.transport_error = via.error().message;
    return result;
  }
  options.via = *via;
  t.post(base_, options, request, on_body, cancel, &result);
  // The request again at a redirect's target; copied only when there is one.
  std::optional<HttpPostRequest> again;
  for (int hops = 0; result.status >= 300 && result.status < 400; ++hops) {
    if (cancel.cancelled() || result.outcome == HttpOutcome::kCancelled) {
      result.outcome = HttpOutcome::kCancelled;
      return result;
    }
    const HttpPostRequest& sent = again ? *again : request;
    const std::string location = HeaderValue(result.headers, "location");
    const std::string what = "the server answered the " + sent.method + " of " + base_.Origin() +
                             sent.path + " with HTTP " + std::to_string(result.status);
    result.outcome = HttpOutcome::kRedirected;
    if (!Followable(result.status) || location.empty()) {
      result.transport_error = what + (location.empty() ? " and no Location" : "") +
                               ", a redirect lousho does not follow";
      return result;
    }
    const std::string shown = ShownLocation(location);
    std::optional<std::string> target = SameOriginPath(base_, sent.path, location);
    if (!target) {
      result.transport_error = what + " to " + shown +
                               ", another origin: lousho follows redirects only within " +
                               base_.Origin() + "; if that address is right, configure it instead";
      return result;
    }
    if (sent.method != "GET" && result.status != 307 && result.status != 308) {
      result.transport_error = what + " to " + shown + ", which would turn the " + sent.method +
                               " into a GET; configure that address instead";
      return result;
    }
    if (hops == kMaxRedirects) {
      result.transport_error = what + " to " + shown + " after " + std::to_string(hops) +
                               " redirects already; lousho stops there";
      return result;
    }
    log::Debug("HTTP " + std::to_string(result.status) + ": " + sent.path + " -> " + *target);
    if (!again) again = request;
    again->path = *target;
    result = HttpStreamResult();
    t.post(base_, options, *again, on_body, cancel, &result);
  }
  return result;
}

}  // namespace lousho::agent

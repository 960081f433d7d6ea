// Streaming HTTPS POST for the model providers. The transport itself (the only code that
// touches cpp-httplib) is a module loaded on first use: see http_module/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/cancel.h"
#include "support/http/provider_errors.h"
#include "support/http/proxy.h"
#include "support/status.h"

namespace lousho::agent {

// A base URL split the way httplib needs it: "https://host/v1" -> origin "https://host" (scheme,
// host and explicit port only) + path prefix "/v1" (no trailing slash).
struct BaseUrl {
  std::string scheme;  // "http" | "https"
  std::string host;
  int port = 0;
  std::string path_prefix;
  // "https://host:port", what httplib::Client accepts.
  std::string Origin() const { return scheme + "://" + host + ":" + std::to_string(port); }
};

// Splits a base URL; errors (LOUSHO_PROVIDER_CONFIG) on a missing scheme or host, or a bad port.
Result<BaseUrl> ParseBaseUrl(std::string_view url);

// The path (and query) on `base`'s origin that a redirect's Location names, resolved against the
// request's `path`; nullopt when it names another origin (scheme, host or port).
std::optional<std::string> SameOriginPath(const BaseUrl& base, const std::string& path,
                                          const std::string& location);

struct HttpOptions {
  int connect_timeout_s = 10;
  int idle_timeout_s = 120;  // longest gap between two reads of the response
  int write_timeout_s = 30;
  std::string ca_cert_path;  // empty: the system CA store (tests point this at their own cert)
  // The spec's proxy setting; unset: the environment's (see support/http/proxy.h).
  ProxySetting proxy;
  // What the request goes through, set by HttpClient from `proxy` and the environment.
  std::optional<ProxyServer> via;
};

struct HttpPostRequest {
  std::string path;  // full path including the base URL's prefix (and query, if any)
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // JSON (POST only)
  // POST (the providers, MCP messages), GET (an MCP event stream) or DELETE (an MCP session's
  // end). Only a POST sends a body and a Content-Type.
  std::string method = "POST";
};

// How one streaming POST ended.
enum class HttpOutcome {
  kCompleted,      // the response body ended normally
  kStopped,        // the body callback returned false (it saw what it needed, or was cancelled)
  kCancelled,      // the cancel token fired
  kConnectFailed,  // no connection (refused, DNS, TLS handshake/verification)
  kTimedOut,       // no byte for idle_timeout_s
  kBroken,         // the connection dropped mid-response, a malformed body, another failure
  kRedirected,     // a redirect that was not followed (see HttpClient::PostStream)
};

// Why a request got no answer, for the failure outcomes (transport_error says it in words, naming
// the host and what to do).
enum class HttpFailure {
  kNone,
  kDns,           // the host name does not resolve
  kRefused,       // refused or unreachable
  kTimedOut,      // no connection, or no data, in time
  kTls,           // the TLS handshake failed
  kCertificate,   // the server's certificate was not trusted, or the CA store could not be read
  kProxy,         // the proxy could not be reached (or is misconfigured)
  kProxyRefused,  // the proxy answered CONNECT with an error (407: credentials)
  kOther,
};

struct HttpStreamResult {
  HttpOutcome outcome = HttpOutcome::kCompleted;
  int status = 0;          // 0 when no response head arrived
  HeaderMap headers;       // lower-case names
  std::string error_body;  // the body when status >= 300 (capped; it never goes to on_body)
  // What failed, in words for the user, for the failure outcomes ("the connection closed after
  // 10 of the 200 bytes of the response body"); for kRedirected, which redirect and why not.
  std::string transport_error;
  HttpFailure failure = HttpFailure::kNone;
};

// Asked inside a body callback: true when the bytes that follow the piece being handled already
// hold a whole SSE event end and are in this process or queued on its socket (plain HTTP: a blank
// line among the queued bytes; TLS: a whole record queued), so the next pieces come without
// waiting for the network. False whenever that is not known. One non-blocking syscall or two.
using MoreReady = std::function<bool()>;
// Receives the body of a successful (status < 400) response as it arrives. Return false to stop.
using BodyCallback = std::function<bool(std::string_view bytes, const MoreReady& more_ready)>;

// Sends a POST and streams its response. Thread-compatible: each call opens its own connection,
// so one HttpClient may serve concurrent calls. TLS certificates are always verified.
// Redirects within the base URL's origin are followed, at most kMaxRedirects in a row: 307 and
// 308 with the same method and body, 301, 302 and 303 for a GET only (for a POST they would turn
// it into a GET). Any other 3xx ends the request as kRedirected, its transport_error naming the
// status, the Location and why it was not followed.
class HttpClient {
 public:
  static constexpr int kMaxRedirects = 5;
  HttpClient(BaseUrl base, HttpOptions options)
      : base_(std::move(base)), options_(std::move(options)) {}
  const BaseUrl& base() const { return base_; }

  // Blocks until the response ends, on_body returns false, or `cancel` fires (which wakes a
  // blocked read at once by shutting the socket down).
  HttpStreamResult PostStream(const HttpPostRequest& request, const BodyCallback& on_body,
                              const CancelToken& cancel) const;

 private:
  BaseUrl base_;
  HttpOptions options_;
};

}  // namespace lousho::agent

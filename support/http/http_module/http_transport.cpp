// The HTTP transport module: streaming HTTPS requests (POST for providers and MCP, GET and
// DELETE for MCP) on cpp-httplib 0.11 (Client::send with a
// content receiver). The only code that includes httplib; loaded on first use (http_client.cpp).
#include <httplib.h>
#include <netdb.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "support/env.h"
#include "support/http/chunked_body.h"
#include "support/http/http_module/http_module.h"
#include "support/text.h"

namespace lousho::agent {

namespace {

using Clock = std::chrono::steady_clock;

// See MoreReady: whether the bytes queued on the socket after what was read hold a whole event
// end (plain HTTP) or a whole TLS record (which OpenSSL decrypts without waiting). Peeks only.
bool QueuedEventReady(int fd, bool tls) {
  if (fd < 0) return false;
  if (tls) {
    unsigned char head[5];
    if (::recv(fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT) != 5) return false;
    const size_t record = 5 + ((static_cast<size_t>(head[3]) << 8) | head[4]);
    int queued = 0;
    return head[0] == 23 /* application data */ && ::ioctl(fd, FIONREAD, &queued) == 0 &&
           static_cast<size_t>(queued) >= record;
  }
  // An event is a few hundred bytes: a blank line is looked for in the first KiB only (none
  // there reads as "not ready", which only means no merging).
  char buf[1024];
  const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n < 2) return false;
  // A blank line in any of the SSE line ends. Chunked framing never forms one except in the
  // final chunk, after which the body ends anyway.
  const std::string_view queued(buf, static_cast<size_t>(n));
  if (queued.find("\n\n") != std::string_view::npos) return true;
  if (queued.find('\r') == std::string_view::npos) return false;
  return queued.find("\r\r") != std::string_view::npos ||
         queued.find("\r\n\r\n") != std::string_view::npos;
}
// What is known of a response's body as it is read, for the transport's own framing and for
// saying what went wrong.
struct BodyProgress {
  bool head = false;               // the status line and headers came
  bool chunked = false;            // Transfer-Encoding: chunked, decoded here
  std::optional<uint64_t> length;  // Content-Length, when the body is not chunked
  uint64_t received = 0;           // body bytes as they came off the connection
  ChunkedDecoder chunks;
  std::string decoded;               // scratch: one piece's data
  std::vector<size_t> decoded_ends;  // scratch: where each chunk's data ends in `decoded`
  bool stopped = false;              // the body callback returned false
};

// httplib decodes the chunked coding itself and reports a malformed chunk and a closed
// connection alike ("Read"). Taking Transfer-Encoding (and the Content-Length it overrides) out
// of the response as its head arrives makes httplib hand the raw body over until the connection
// ends; ChunkedDecoder then reads the framing and can say what was wrong. httplib reads the body
// by the headers of the same Response object the handler is given (a non-const one).
void TakeFraming(httplib::Response& r, BodyProgress* body) {
  // Answers that never have a body (httplib reads none for them either).
  if (r.status == 204 || r.status == 304 || (r.status >= 100 && r.status < 200)) return;
  if (AsciiLower(r.get_header_value("Transfer-Encoding")) == "chunked") {
    body->chunked = true;
    r.headers.erase("Transfer-Encoding");
    r.headers.erase("Content-Length");
    return;
  }
  if (!r.has_header("Content-Length")) return;
  const std::string v = r.get_header_value("Content-Length");
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (!v.empty() && end != nullptr && *end == '\0') body->length = n;
}

// One piece of the body's data: kept when an error or a redirect, else handed to `on_body`. False
// stops the read.
bool HandPiece(std::string_view piece, const BodyCallback& on_body, const MoreReady& more_ready,
               BodyProgress* body, HttpStreamResult* result) {
  if (result->status >= 300) {
    // Error and redirect bodies are short; cap them so a misbehaving proxy cannot bloat memory.
    if (result->error_body.size() < 64 * 1024UL) result->error_body.append(piece);
    return true;
  }
  // The body callback decodes; a failure there is the response's, not the connection's, so it
  // must not reach PostStreamImpl's catch (which reports a broken, retryable connection).
  bool go_on = false;
  try {
    go_on = on_body(piece, more_ready);
  } catch (const std::exception& e) {
    result->transport_error = std::string("the response could not be handled: ") + e.what();
  }
  body->stopped = !go_on;
  return go_on;
}

// One piece of the body as it came off the connection (see PostStreamImpl's content receiver):
// decoded when chunked and handed on chunk by chunk, as the server sent them (as httplib's own
// decoding did: a reader that merges what arrives together decides that by more_ready, not by
// how the chunks fell into reads). False stops the read: a malformed chunk, the callback's wish,
// or the end of a chunked body.
bool ReceiveBody(std::string_view raw, const BodyCallback& on_body, const MoreReady& more_ready,
                 BodyProgress* body, HttpStreamResult* result) {
  body->received += raw.size();
  if (!body->chunked) return raw.empty() || HandPiece(raw, on_body, more_ready, body, result);
  body->decoded.clear();
  body->decoded_ends.clear();
  if (!body->chunks.Feed(raw, &body->decoded, &body->decoded_ends)) return false;
  // A chunk cut by the read's end is handed on as far as it came.
  if (body->decoded_ends.empty() || body->decoded_ends.back() != body->decoded.size())
    body->decoded_ends.push_back(body->decoded.size());
  size_t from = 0;
  for (size_t end : body->decoded_ends) {
    if (end > from && !HandPiece(std::string_view(body->decoded).substr(from, end - from), on_body,
                                 more_ready, body, result))
      return false;
    from = end;
  }
  // A whole chunked body ends the read, whether or not the server closes the connection.
  return !body->chunks.done();
}

std::string ChunkedFailure(const ChunkedDecoder& chunks) {
  if (chunks.failed())
    return "the server's response body was malformed (chunked encoding: " + chunks.error() + ")";
  return "the connection closed before the response body was complete (chunked encoding: " +
         chunks.WhereCut() + ")";
}

HttpOutcome OutcomeOf(httplib::Error err, long long idle_ms, const HttpOptions& options) {
  switch (err) {
    case httplib::Error::Connection:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
    case httplib::Error::ConnectionTimeout:
      return HttpOutcome::kConnectFailed;
    case httplib::Error::Read:
      // httplib reports an idle timeout and a dropped connection alike; the clock tells them
      // apart (the read timeout is the only way to sit idle that long).
      return idle_ms + 150 >= options.idle_timeout_s * 1000LL ? HttpOutcome::kTimedOut
                                                              : HttpOutcome::kBroken;
    case httplib::Error::Success:
    case httplib::Error::Unknown:
    case httplib::Error::Write:
    case httplib::Error::ExceedRedirectCount:
    case httplib::Error::Canceled:
    case httplib::Error::UnsupportedMultipartBoundaryChars:
    case httplib::Error::Compression:
      return HttpOutcome::kBroken;
  }
  return HttpOutcome::kBroken;
}

// Why reading the response failed: httplib says only "Read".
std::string ReadFailure(HttpOutcome outcome, const BodyProgress& body, const HttpOptions& options) {
  if (outcome == HttpOutcome::kTimedOut)
    return "no data from the server for " + std::to_string(options.idle_timeout_s) + " s" +
           (body.head ? " while the response body was read" : ", and no response yet");
  if (!body.head)
    return "no HTTP response came: the connection closed before a whole response head, or the "
           "server's answer is not HTTP";
  if (body.length)
    return "the connection closed after " + std::to_string(body.received) + " of the " +
           std::to_string(*body.length) + " bytes of the response body";
  return "the connection broke while the response body was read, after " +
         std::to_string(body.received) + " bytes";
}

// Whether `host` resolves now (asked only after a connection failed, to tell DNS apart).
bool HostResolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  return rc == 0;
}

// The proxy a connection went through could not be reached.
std::string ProxyConnectFailure(const ProxyServer& p, const BaseUrl& base, HttpFailure* failure) {
  *failure = HttpFailure::kProxy;
  const std::string named = "the proxy " + p.Shown() + " (from " + p.source + ")";
  if (!HostResolves(p.host))
    return "cannot resolve the host name of " + named + ": check " + p.source;
  return "cannot connect to " + named + " on the way to " + base.host +
         ": check that the proxy runs and that " + p.source +
         " names it, or list the host in NO_PROXY to go directly";
}

// A connection that failed, in words naming the host, the cause and what to do.
std::string ConnectFailure(httplib::Error err, const BaseUrl& base, const HttpOptions& options,
                           HttpFailure* failure) {
  const std::string where = base.host + ":" + std::to_string(base.port);
  const bool to_proxy =
      err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout;
  if (options.via && to_proxy) return ProxyConnectFailure(*options.via, base, failure);
  switch (err) {
    case httplib::Error::Connection:
      if (!HostResolves(base.host)) {
        *failure = HttpFailure::kDns;
        return "cannot resolve the host name " + base.host +
               " (DNS): check the base URL and the network connection";
      }
      *failure = HttpFailure::kRefused;
      return "cannot connect to " + where +
             ": the connection was refused or the host is unreachable; check that the server "
             "runs and listens there (the base URL's host and port)";
    case httplib::Error::ConnectionTimeout:
      *failure = HttpFailure::kTimedOut;
      return "no connection to " + where + " within " + std::to_string(options.connect_timeout_s) +
             " s: check the network, a firewall, or set HTTPS_PROXY when a proxy is the way out";
    case httplib::Error::SSLServerVerification:
      *failure = HttpFailure::kCertificate;
      return "the TLS certificate of " + base.host +
             " is not trusted (verification failed): if a company proxy or firewall re-signs "
             "TLS, point SSL_CERT_FILE (a PEM bundle) or SSL_CERT_DIR at its CA certificates";
    case httplib::Error::SSLLoadingCerts:
      *failure = HttpFailure::kCertificate;
      return "the CA certificates to verify " + base.host +
             " could not be loaded: check SSL_CERT_FILE and SSL_CERT_DIR";
    default:
      break;
  }
  *failure = HttpFailure::kTls;
  if (options.via)
    return "the TLS connection to " + where + " through the proxy " + options.via->Shown() +
           " failed: the proxy may have refused the tunnel (CONNECT), or it intercepts TLS";
  return "the TLS handshake with " + where +
         " failed: check that the server speaks HTTPS on that port (http:// for a plain local "
         "server)";
}

// What failed, in words for the user: httplib names only the step ("Read", "Connection").
std::string Describe(httplib::Error err, HttpOutcome outcome, const BodyProgress& body,
                     const BaseUrl& base, const HttpOptions& options, HttpFailure* failure) {
  *failure = HttpFailure::kOther;
  switch (err) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return ConnectFailure(err, base, options, failure);
    case httplib::Error::BindIPAddress:
      return "the local address could not be bound";
    case httplib::Error::Read:
      if (outcome == HttpOutcome::kTimedOut) *failure = HttpFailure::kTimedOut;
      return ReadFailure(outcome, body, options);
    case httplib::Error::Write:
      return "the connection to " + base.host + " closed while the request was sent";
    case httplib::Error::Compression:
      return "the response body could not be decompressed";
    case httplib::Error::Success:
    case httplib::Error::Unknown:
    case httplib::Error::ExceedRedirectCount:
    case httplib::Error::Canceled:
    case httplib::Error::UnsupportedMultipartBoundaryChars:
      break;
  }
  return "the request to " + base.host + " failed (" + httplib::to_string(err) + ")";
}

// How a request that was not cancelled ended: `ok` and `err` are httplib's word, `status` the
// response's, `idle_ms` the time since the last byte.
void Settle(bool ok, httplib::Error err, int status, const BodyProgress& body, long long idle_ms,
            const BaseUrl& base, const HttpOptions& options, HttpStreamResult* result) {
  // A chunked body is whole at its last chunk (the read was stopped there, or the server closed
  // the connection after it); any other body when httplib says so.
  const bool whole = body.chunked ? body.chunks.done() : ok;
  if (body.stopped) {
    result->outcome = HttpOutcome::kStopped;
  } else if (options.via && !body.head && status >= 300) {
    // The proxy's own answer to CONNECT: the request never reached the server.
    result->outcome = HttpOutcome::kConnectFailed;
    result->failure = HttpFailure::kProxyRefused;
    result->transport_error =
        "the proxy " + options.via->Shown() + " (from " + options.via->source +
        ") refused the tunnel to " + base.host + " with HTTP " + std::to_string(status) +
        (status == 407 ? ": it wants credentials; give them in the proxy URL, "
                         "http://user:password@host:port"
                       : "");
  } else if (whole) {
    result->outcome = HttpOutcome::kCompleted;
    if (result->status == 0) result->status = status;
  } else if (body.chunked && (ok || body.chunks.failed())) {
    result->outcome = HttpOutcome::kBroken;
    result->transport_error = ChunkedFailure(body.chunks);
  } else {
    result->outcome = OutcomeOf(err, idle_ms, options);
    if (body.chunked && result->outcome == HttpOutcome::kBroken) {
      result->transport_error = ChunkedFailure(body.chunks);
    } else {
      result->transport_error =
          Describe(err, result->outcome, body, base, options, &result->failure);
    }
  }
}

#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
// The CA bundle to verify servers with, when OpenSSL's built-in default does not exist: a
// release build carries the OpenSSL of the build machine (Debian: /usr/lib/ssl), and other
// distributions keep their bundle elsewhere. Empty: OpenSSL's defaults (which also honour
// SSL_CERT_FILE and SSL_CERT_DIR). Looked up once.
const std::string& FallbackCaBundle() {
  static const std::string* bundle = [] {
    auto exists = [](const char* p) { return p != nullptr && ::access(p, R_OK) == 0; };
    if (ProcessEnv("SSL_CERT_FILE") || ProcessEnv("SSL_CERT_DIR") ||
        exists(X509_get_default_cert_file()))
      return new std::string();
    for (const char* p : {"/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch, Gentoo
                          "/etc/pki/tls/certs/ca-bundle.crt",    // Fedora, RHEL
                          "/etc/ssl/ca-bundle.pem",              // openSUSE
                          "/etc/ssl/cert.pem",                   // Alpine, macOS, BSDs
                          "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"}) {
      if (exists(p)) return new std::string(p);
    }
    return new std::string();
  }();
  return *bundle;
}
#endif

}  // namespace

HttpStreamResult PostStreamImpl(const BaseUrl& base, const HttpOptions& options,
                                const HttpPostRequest& request, const BodyCallback& on_body,
                                const CancelToken& cancel) {
  HttpStreamResult result;
  if (cancel.cancelled()) {
    result.outcome = HttpOutcome::kCancelled;
    return result;
  }
  try {
    httplib::Client cli(base.Origin());
    cli.set_connection_timeout(options.connect_timeout_s, 0);
    cli.set_read_timeout(options.idle_timeout_s, 0);
    cli.set_write_timeout(options.write_timeout_s, 0);
    cli.set_keep_alive(false);
    // SSE must arrive as it is produced; a compressed body could be held back by the server.
    cli.set_decompress(false);
    if (options.via) {
      cli.set_proxy(options.via->host, options.via->port);
      if (!options.via->user.empty())
        cli.set_proxy_basic_auth(options.via->user, options.via->password);
    }
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    cli.enable_server_certificate_verification(true);
    if (!options.ca_cert_path.empty()) {
      cli.set_ca_cert_path(options.ca_cert_path);
    } else if (const std::string& bundle = FallbackCaBundle(); !bundle.empty()) {
      cli.set_ca_cert_path(bundle);
    }
#endif
    // A cancel that lands while the socket is being created would otherwise be missed by
    // stop() (nothing in flight yet): shut the new socket down so connect fails at once.
    int sock_fd = -1;
    cli.set_socket_options([&cancel, &sock_fd](socket_t sock) {
      sock_fd = sock;
      if (cancel.cancelled()) ::shutdown(sock, SHUT_RDWR);
    });
    const bool tls = base.scheme == "https";
    const MoreReady more_ready = [&sock_fd, tls] { return QueuedEventReady(sock_fd, tls); };
    // CancelSource::Cancel runs callbacks outside its lock, so one may still be running after
    // the callback is removed; the shared guard keeps it from touching a destroyed client.
    struct StopGuard {
      std::mutex mu;
      httplib::Client* cli = nullptr;
    };
    auto guard = std::make_shared<StopGuard>();
    guard->cli = &cli;
    ScopedCancelCallback wake(cancel, [guard] {
      std::lock_guard<std::mutex> lock(guard->mu);
      if (guard->cli != nullptr) guard->cli->stop();
    });
    struct Detach {
      std::shared_ptr<StopGuard> g;
      ~Detach() {
        std::lock_guard<std::mutex> lock(g->mu);
        g->cli = nullptr;
      }
    } detach{guard};

    std::atomic<long long> last_activity_ns{Clock::now().time_since_epoch().count()};
    auto touch = [&] { last_activity_ns = Clock::now().time_since_epoch().count(); };

    httplib::Request req;
    req.method = request.method;
    req.path = request.path;
    bool typed = false;  // a Content-Type of the caller's (an OAuth form) replaces JSON's
    for (const auto& [k, v] : request.headers) {
      typed = typed || AsciiLower(k) == "content-type";
      req.headers.emplace(k, v);
    }
    req.headers.emplace("Accept-Encoding", "identity");
    if (request.method == "POST") {
      if (!typed) req.headers.emplace("Content-Type", "application/json");
      req.body = request.body;
    }
    BodyProgress body;
    req.response_handler = [&](const httplib::Response& r) {
      touch();
      body.head = true;
      result.status = r.status;
      for (const auto& [k, v] : r.headers) result.headers.emplace(AsciiLower(k), v);
      TakeFraming(const_cast<httplib::Response&>(r), &body);
      return !cancel.cancelled();
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      touch();
      return !cancel.cancelled() &&
             ReceiveBody(std::string_view(data, n), on_body, more_ready, &body, &result);
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool ok = cli.send(req, res, err);
    if (cancel.cancelled()) {
      result.outcome = HttpOutcome::kCancelled;
    } else {
      const long long idle_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(
              Clock::now().time_since_epoch() - Clock::duration(last_activity_ns.load()))
              .count();
      Settle(ok, err, res.status, body, idle_ms, base, options, &result);
    }
  } catch (const std::exception& e) {
    // httplib and the standard library may throw (bad_alloc, regex errors); keep it here.
    result.outcome = HttpOutcome::kBroken;
    result.transport_error = e.what();
  }
  return result;
}

}  // namespace lousho::agent

extern "C" __attribute__((visibility("default"))) void lousho_http_post_stream(
    const lousho::agent::BaseUrl& base, const lousho::agent::HttpOptions& options,
    const lousho::agent::HttpPostRequest& request, const lousho::agent::BodyCallback& on_body,
    const lousho::CancelToken& cancel, lousho::agent::HttpStreamResult* out) {
  *out = lousho::agent::PostStreamImpl(base, options, request, on_body, cancel);
}

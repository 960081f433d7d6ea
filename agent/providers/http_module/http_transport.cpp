// The HTTP transport module: streaming HTTPS requests (POST for providers and MCP, GET and
// DELETE for MCP) on cpp-httplib 0.11 (Client::send with a
// content receiver). The only code that includes httplib; loaded on first use (http_client.cpp).
#include <httplib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>

#include "agent/providers/http_module/http_module.h"
#include "support/env.h"
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
    bool stopped_by_callback = false;

    httplib::Request req;
    req.method = request.method;
    req.path = request.path;
    for (const auto& [k, v] : request.headers) req.headers.emplace(k, v);
    req.headers.emplace("Accept-Encoding", "identity");
    if (request.method == "POST") {
      req.headers.emplace("Content-Type", "application/json");
      req.body = request.body;
    }
    req.response_handler = [&](const httplib::Response& r) {
      touch();
      result.status = r.status;
      for (const auto& [k, v] : r.headers) result.headers.emplace(AsciiLower(k), v);
      return !cancel.cancelled();
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      touch();
      if (cancel.cancelled()) return false;
      if (result.status >= 400) {
        // Error bodies are short JSON; cap them so a misbehaving proxy cannot bloat memory.
        if (result.error_body.size() < 64 * 1024UL) result.error_body.append(data, n);
        return true;
      }
      // The body callback decodes; a failure there is the response's, not the connection's, so
      // it must not reach the catch below (which reports a broken, retryable connection).
      bool go_on = false;
      try {
        go_on = on_body(std::string_view(data, n), more_ready);
      } catch (const std::exception& e) {
        result.transport_error = std::string("the response could not be handled: ") + e.what();
      }
      if (!go_on) {
        stopped_by_callback = true;
        return false;
      }
      return true;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    bool ok = cli.send(req, res, err);
    if (cancel.cancelled()) {
      result.outcome = HttpOutcome::kCancelled;
    } else if (stopped_by_callback) {
      result.outcome = HttpOutcome::kStopped;
    } else if (ok) {
      result.outcome = HttpOutcome::kCompleted;
      if (result.status == 0) result.status = res.status;
    } else {
      result.transport_error = httplib::to_string(err);
      long long idle_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(
              Clock::now().time_since_epoch() - Clock::duration(last_activity_ns.load()))
              .count();
      switch (err) {
        case httplib::Error::Connection:
        case httplib::Error::BindIPAddress:
        case httplib::Error::SSLConnection:
        case httplib::Error::SSLLoadingCerts:
        case httplib::Error::SSLServerVerification:
        case httplib::Error::ConnectionTimeout:
          result.outcome = HttpOutcome::kConnectFailed;
          break;
        case httplib::Error::Read:
          // httplib reports an idle timeout and a dropped connection alike; the clock tells
          // them apart (the read timeout is the only way to sit idle that long).
          result.outcome = idle_ms + 150 >= options.idle_timeout_s * 1000LL ? HttpOutcome::kTimedOut
                                                                            : HttpOutcome::kBroken;
          break;
        case httplib::Error::Success:
        case httplib::Error::Unknown:
        case httplib::Error::Write:
        case httplib::Error::ExceedRedirectCount:
        case httplib::Error::Canceled:
        case httplib::Error::UnsupportedMultipartBoundaryChars:
        case httplib::Error::Compression:
          result.outcome = HttpOutcome::kBroken;
          break;
      }
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

// A one-purpose HTTP listener on 127.0.0.1: reads a request head, answers with a small page.
#include "agent/mcp/oauth_loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "agent/mcp/oauth.h"

namespace lousho::agent::mcp {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxHead = size_t{16} * 1024;
constexpr long kSliceMs = 100;  // how often a wait looks at its cancel token

long LoopbackMsLeft(Clock::time_point until) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<long>(ms);
}

// Waits for `fd` to become readable within the deadline, looking at `cancel` every slice.
// 1 readable, 0 timed out, -1 cancelled.
int AwaitReadable(int fd, Clock::time_point until, const CancelToken& cancel) {
  for (;;) {
    if (cancel.cancelled()) return -1;
    const long left = LoopbackMsLeft(until);
    if (left == 0) return 0;
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min(left, kSliceMs)));
    if (r > 0) return 1;
  }
}

// The request head of a connection (at most kMaxHead bytes, within the deadline).
std::string ReadHead(int conn, Clock::time_point until, const CancelToken& cancel) {
  std::string head;
  char buf[2048];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxHead) {
    if (AwaitReadable(conn, until, cancel) != 1) break;
    ssize_t n = recv(conn, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  return head;
}

void Answer(int conn, int status, const std::string& text) {
  const std::string body =
      "<!doctype html><meta charset=utf-8><title>lousho</title><p>" + text + "</p>\n";
  std::string reply = "HTTP/1.1 " + std::to_string(status) +
                      (status == 200 ? " OK" : " Bad Request") +
                      "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  size_t sent = 0;
  while (sent < reply.size()) {
    ssize_t n = send(conn, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// The target of "GET <target> HTTP/1.1", or "" for anything else.
std::string GetTarget(const std::string& head) {
  if (head.rfind("GET ", 0) != 0) return {};
  size_t end = head.find(' ', 4);
  return end == std::string::npos ? std::string() : head.substr(4, end - 4);
}

}  // namespace

LoopbackListener::LoopbackListener(int fd, int port)
    : fd_(fd), redirect_uri_("http://127.0.0.1:" + std::to_string(port) + "/callback") {}

LoopbackListener::~LoopbackListener() { close(fd_); }

Result<std::unique_ptr<LoopbackListener>> LoopbackListener::Open() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(ErrorCode::kMcpServer, "no socket for the login redirect");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return MakeError(ErrorCode::kMcpServer, "cannot listen on 127.0.0.1 for the login redirect");
  }
  return std::unique_ptr<LoopbackListener>(new LoopbackListener(fd, ntohs(addr.sin_port)));
}

Result<std::map<std::string, std::string>> LoopbackListener::Wait(const std::string& state,
                                                                  long timeout_ms,
                                                                  const CancelToken& cancel) {
  const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int ready = AwaitReadable(fd_, until, cancel);
    if (ready < 0) return MakeError(ErrorCode::kCancelled, "the login was cancelled");
    if (ready == 0)
      return MakeError(ErrorCode::kTimeout, "the login did not finish within " +
                                                std::to_string(timeout_ms / 1000) + " s");
    int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    // A browser that connects and says nothing gets a few seconds, not the whole wait.
    const auto head_until = std::min(until, Clock::now() + std::chrono::seconds(10));
    const std::string target = GetTarget(ReadHead(conn, head_until, cancel));
    const size_t q = target.find('?');
    const std::map<std::string, std::string> query = ParseQuery(
        q == std::string::npos ? std::string_view() : std::string_view(target).substr(q));
    const bool ours =
        target.substr(0, q) == "/callback" && query.count("state") && query.at("state") == state;
    if (!ours) {
      Answer(conn, 400, "This is not the login lousho is waiting for.");
      close(conn);
      continue;
    }
    Answer(conn, 200,
           query.count("error") ? "The login was refused; you can close this page."
                                : "You are logged in; you can close this page and go back.");
    close(conn);
    return query;
  }
}

}  // namespace lousho::agent::mcp

// A loopback server that answers with raw bytes, for responses httplib's server cannot send
// (malformed chunked bodies, bodies cut short, answers that are not HTTP).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "support/http/http_client.h"

namespace lousho::agent::testing {

// A server on 127.0.0.1 that answers every connection with the same raw bytes, whatever they
// are: read the request (head and Content-Length body), write `answer`, then close, or keep
// the connection open until the client closes it.
class RawServer {
 public:
  RawServer(std::string answer, bool keep_open) : answer_(std::move(answer)), keep_(keep_open) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  HttpClient Client() const {
    BaseUrl base;
    base.scheme = "http";
    base.host = "127.0.0.1";
    base.port = port_;
    HttpOptions o;
    o.connect_timeout_s = 5;
    o.idle_timeout_s = 30;
    return HttpClient(base, o);
  }

 private:
  void Serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      size_t need = std::string::npos;
      while (need == std::string::npos || got.size() < need) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
        size_t end = got.find("\r\n\r\n");
        if (end != std::string::npos && need == std::string::npos) {
          size_t cl = got.find("Content-Length: ");
          need = end + 4 + (cl == std::string::npos ? 0 : std::stoul(got.substr(cl + 16)));
        }
      }
      (void)!::write(c, answer_.data(), answer_.size());
      // The client ends a kept connection by closing it: read until then.
      while (keep_ && ::read(c, buf, sizeof buf) > 0) {
      }
      ::close(c);
    }
  }

  std::string answer_;
  bool keep_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace lousho::agent::testing

// Tests of the proxy choice (support/http/proxy.h) and of requests through a small forward proxy
// on 127.0.0.1 written here: plain HTTP in absolute form, HTTPS tunnelled with CONNECT (with the
// proxy's credentials), and the errors that name the proxy.
#include "support/http/proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/providers/openai_chat.h"
#include "config/model_catalog.h"
#include "support/http/http_client.h"
#include "tests/providers/loopback_server.h"

namespace lousho::agent {
namespace {

EnvLookup Env(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProxyChoiceTest, ParsesUrlsWithCredentialsAndDefaults) {
  auto p = ParseProxyUrl("http://us%40er:p%3Ass@proxy.corp:3128/", "HTTPS_PROXY");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->host, "proxy.corp");
  EXPECT_EQ(p->port, 3128);
  EXPECT_EQ(p->user, "us@er");
  EXPECT_EQ(p->password, "p:ss");
  EXPECT_EQ(p->Shown(), "http://proxy.corp:3128");
  auto bare = ParseProxyUrl("proxy.corp", "x");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 1080);
  auto socks = ParseProxyUrl("socks5://proxy:1080", "ALL_PROXY");
  ASSERT_FALSE(socks.ok());
  EXPECT_NE(socks.error().message.find("ALL_PROXY"), std::string::npos);
  EXPECT_FALSE(ParseProxyUrl("http://proxy:99999", "x").ok());
  EXPECT_FALSE(ParseProxyUrl("http://:80", "x").ok());
}

TEST(ProxyChoiceTest, NoProxyEntries) {
  EXPECT_TRUE(NoProxyMatches("example.com", "example.com", 443));
  EXPECT_TRUE(NoProxyMatches("example.com", "api.example.com", 443));
  EXPECT_TRUE(NoProxyMatches(".example.com", "api.example.com", 443));
  EXPECT_FALSE(NoProxyMatches("example.com", "badexample.com", 443));
  EXPECT_TRUE(NoProxyMatches("a.org, example.com:8443", "example.com", 8443));
  EXPECT_FALSE(NoProxyMatches("example.com:8443", "example.com", 443));
  EXPECT_TRUE(NoProxyMatches("*", "anything", 1));
  EXPECT_TRUE(NoProxyMatches("10.0.0.5", "10.0.0.5", 80));
  EXPECT_TRUE(NoProxyMatches("[::2]:80", "[::2]", 80));
  EXPECT_FALSE(NoProxyMatches("", "example.com", 443));
}

TEST(ProxyChoiceTest, SchemeVariablesNoProxyLoopbackAndTheSpecSetting) {
  auto env = Env({{"HTTPS_PROXY", "http://secure:1"},
                  {"http_proxy", "http://plain:2"},
                  {"NO_PROXY", "internal.corp"}});
  auto https = ProxyFor("https", "api.openai.com", 443, ProxySetting(), env);
  ASSERT_TRUE(https.ok() && https->has_value());
  EXPECT_EQ((*https)->host, "secure");
  EXPECT_EQ((*https)->source, "HTTPS_PROXY");
  auto http = ProxyFor("http", "model.lan", 80, ProxySetting(), env);
  ASSERT_TRUE(http.ok() && http->has_value());
  EXPECT_EQ((*http)->host, "plain");
  auto skipped = ProxyFor("https", "git.internal.corp", 443, ProxySetting(), env);
  ASSERT_TRUE(skipped.ok());
  EXPECT_FALSE(skipped->has_value());
  for (const char* host : {"127.0.0.1", "localhost", "::1"}) {
    auto local = ProxyFor("http", host, 11434, ProxySetting(), env);
    ASSERT_TRUE(local.ok());
    EXPECT_FALSE(local->has_value()) << host;
  }
  auto spec = ProxyFor("https", "api.openai.com", 443, ProxySetting::Both("http://spec:3"), env);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  EXPECT_EQ((*spec)->host, "spec");
  EXPECT_EQ((*spec)->source, "the proxy setting (https)");
  auto direct = ProxyFor("https", "api.openai.com", 443, ProxySetting::Both("direct"), env);
  ASSERT_TRUE(direct.ok());
  EXPECT_FALSE(direct->has_value());
  auto bad = ProxyFor("https", "x", 443, ProxySetting(), Env({{"HTTPS_PROXY", "https://p:1"}}));
  EXPECT_FALSE(bad.ok());
  auto none = ProxyFor("https", "x", 443, ProxySetting(), Env({}));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ProxyChoiceTest, TheSpecSettingReplacesTheEnvironmentPerScheme) {
  auto env = Env({{"HTTPS_PROXY", "http://env:1"},
                  {"HTTP_PROXY", "http://env:2"},
                  {"NO_PROXY", "api.openai.com"}});
  ProxySetting spec;
  spec.set = true;
  spec.https = "http://user:pw@secure.spec:8443";
  spec.no_proxy = "git.corp, .lan";
  // https through the spec's proxy, even to a host the environment's NO_PROXY names.
  auto https = ProxyFor("https", "api.openai.com", 443, spec, env);
  ASSERT_TRUE(https.ok() && https->has_value());
  EXPECT_EQ((*https)->host, "secure.spec");
  EXPECT_EQ((*https)->port, 8443);
  EXPECT_EQ((*https)->user, "user");
  EXPECT_EQ((*https)->Shown(), "http://secure.spec:8443");  // never the credentials
  EXPECT_EQ((*https)->source, "the proxy setting (https)");
  // No http URL in the setting: plain HTTP goes direct, whatever HTTP_PROXY says.
  auto http = ProxyFor("http", "model.example", 80, spec, env);
  ASSERT_TRUE(http.ok());
  EXPECT_FALSE(http->has_value());
  // Its noProxy, not the environment's, and loopback, go direct.
  for (const char* host : {"git.corp", "box.lan", "127.0.0.1", "localhost"}) {
    auto direct = ProxyFor("https", host, 443, spec, env);
    ASSERT_TRUE(direct.ok());
    EXPECT_FALSE(direct->has_value()) << host;
  }
  // A bad URL in the setting is an error naming the setting.
  spec.https = "socks5://p:1";
  auto bad = ProxyFor("https", "x.example", 443, spec, env);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("the proxy setting (https)"), std::string::npos);
  // The string form: both schemes.
  auto both = ProxySetting::Both("http://one:3");
  for (const char* scheme : {"http", "https"}) {
    auto p = ProxyFor(scheme, "x.example", 80, both, Env({}));
    ASSERT_TRUE(p.ok() && p->has_value()) << scheme;
    EXPECT_EQ((*p)->host, "one");
  }
}

// A forward proxy on 127.0.0.1: every target host is this machine (so names that do not resolve
// are reachable only through it). CONNECT is answered per `connect_status` (200 tunnels); an
// absolute-form request is sent on in origin form. It keeps each request's head.
class TestProxy {
 public:
  explicit TestProxy(int connect_status) : connect_status_(connect_status) {
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
  ~TestProxy() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<std::string> heads() {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }

 private:
  static int ConnectLocal(int port) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(s);
      return -1;
    }
    return s;
  }
  // Copies bytes both ways until either side closes.
  static void Pipe(int a, int b) {
    char buf[8192];
    for (;;) {
      pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (::poll(fds, 2, -1) <= 0) return;
      for (int i = 0; i < 2; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) return;
        if (::write(i == 0 ? b : a, buf, static_cast<size_t>(n)) != n) return;
      }
    }
  }
  static int PortOf(const std::string& authority) {
    return std::stoi(authority.substr(authority.rfind(':') + 1));
  }
  void Handle(int c) {
    std::string head;
    char ch = 0;
    while (head.find("\r\n\r\n") == std::string::npos && ::read(c, &ch, 1) == 1) head += ch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      heads_.push_back(head);
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    const std::string target =
        line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
    if (line.starts_with("CONNECT ")) {
      const std::string answer = "HTTP/1.1 " + std::to_string(connect_status_) + " Proxy\r\n" +
                                 "Content-Length: 0\r\n\r\n";
      (void)!::write(c, answer.data(), answer.size());
      if (connect_status_ != 200) return;
      const int up = ConnectLocal(PortOf(target));
      if (up >= 0) Pipe(c, up);
      if (up >= 0) ::close(up);
      return;
    }
    // "POST http://host:port/path HTTP/1.1": on in origin form.
    const size_t path_at = target.find('/', target.find("://") + 3);
    const std::string authority =
        target.substr(target.find("://") + 3, path_at - target.find("://") - 3);
    const int up = ConnectLocal(PortOf(authority));
    if (up < 0) return;
    const std::string rest = head.substr(line.size());
    const std::string sent = line.substr(0, line.find(' ') + 1) + target.substr(path_at) +
                             line.substr(line.rfind(' ')) + rest;
    (void)!::write(up, sent.data(), sent.size());
    Pipe(c, up);
    ::close(up);
  }
  void Serve() {
    std::vector<std::thread> handlers;
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) break;
      handlers.emplace_back([this, c] {
        Handle(c);
        ::close(c);
      });
    }
    for (auto& t : handlers) t.join();
  }

  int connect_status_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> heads_;
};

using testing::LoopbackServer;
using testing::Step;

std::string ChatAnswer() {
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"via proxy\"},"
         "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
}

ModelRequest Hello(std::vector<Message>* history) {
  history->resize(1);
  (*history)[0].content = {ContentBlock::Text("hi")};
  ModelRequest req;
  req.model = "m";
  req.messages = *history;
  return req;
}

// An OpenAI-chat provider at `base_url` going through `proxy`.
std::unique_ptr<Provider> ChatVia(const std::string& base_url, const std::string& proxy,
                                  int retries) {
  HttpProviderConfig c;
  c.settings.name = "behind";
  c.settings.api = "openai-chat";
  c.settings.max_retries = retries;
  c.settings.retry_base_ms = 1;
  c.model = config::UnknownModelInfo("m");
  c.base = *ParseBaseUrl(base_url);
  c.proxy = ProxySetting::Both(proxy);
  return std::make_unique<OpenAiChatProvider>(std::move(c));
}

// A provider whose host exists only behind the proxy.
TEST(ProxyHttpTest, AProviderReachesItsServerThroughTheProxy) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, {Step::Write(ChatAnswer())});
  });
  TestProxy proxy(200);
  auto p = ChatVia("http://model.invalid:" + std::to_string(server.port()) + "/v1",
                   "http://user:secret@127.0.0.1:" + std::to_string(proxy.port()), 0);
  std::vector<Message> history;
  auto r = p->Stream(Hello(&history), [](const StreamDelta&) { return true; }, CancelToken(), {});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->message.TextContent(), "via proxy");
  const auto heads = proxy.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_TRUE(heads[0].starts_with("POST http://model.invalid:" + std::to_string(server.port()) +
                                   "/v1/chat/completions HTTP/1.1"))
      << heads[0];
  // "user:secret" in base64.
  EXPECT_NE(heads[0].find("Proxy-Authorization: Basic dXNlcjpzZWNyZXQ="), std::string::npos);
}

TEST(ProxyHttpTest, HttpsIsTunnelledWithConnectAndARefusalNamesTheProxyWithoutRetries) {
  TestProxy proxy(407);
  auto p = ChatVia("https://api.example.invalid/v1",
                   "http://user:secret@127.0.0.1:" + std::to_string(proxy.port()), 3);
  std::vector<Message> history;
  auto r = p->Stream(Hello(&history), [](const StreamDelta&) { return true; }, CancelToken(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("refused the tunnel to api.example.invalid with HTTP 407"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("http://user:password@host:port"), std::string::npos);
  EXPECT_EQ(r.error().message.find("secret"), std::string::npos);
  const auto heads = proxy.heads();
  ASSERT_EQ(heads.size(), 1u) << "a refusal is not retried";
  EXPECT_TRUE(heads[0].starts_with("CONNECT api.example.invalid:443 HTTP/1.1")) << heads[0];
  EXPECT_NE(heads[0].find("Proxy-Authorization: Basic dXNlcjpzZWNyZXQ="), std::string::npos);
}

TEST(ProxyHttpTest, AProxyThatIsNotThereIsNamed) {
  int free_port = 0;
  {
    TestProxy gone(200);
    free_port = gone.port();
  }
  BaseUrl base;
  base.scheme = "http";
  base.host = "model.invalid";
  base.port = 80;
  HttpOptions o;
  o.connect_timeout_s = 5;
  o.proxy = ProxySetting::Both("http://127.0.0.1:" + std::to_string(free_port));
  HttpPostRequest req;
  req.path = "/";
  auto r = HttpClient(base, o).PostStream(
      req, [](std::string_view, const MoreReady&) { return true; }, CancelToken());
  EXPECT_EQ(r.outcome, HttpOutcome::kConnectFailed);
  EXPECT_EQ(r.failure, HttpFailure::kProxy);
  EXPECT_NE(r.transport_error.find("cannot connect to the proxy http://127.0.0.1:"),
            std::string::npos)
      << r.transport_error;
  EXPECT_NE(r.transport_error.find("the proxy setting"), std::string::npos);
}

}  // namespace
}  // namespace lousho::agent

// Loopback tests of what HttpClient says when a response goes wrong (a malformed or cut body, no
// response at all) and of the redirects it follows or refuses.
#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/http/http_client.h"
#include "tests/providers/raw_server.h"

namespace lousho::agent {
namespace {

using testing::RawServer;

struct Got {
  HttpStreamResult result;
  std::string body;
};

Got Post(const HttpClient& client, const std::string& path = "/mcp") {
  HttpPostRequest req;
  req.path = path;
  req.body = R"({"jsonrpc":"2.0","id":1,"method":"initialize"})";
  Got g;
  g.result = client.PostStream(
      req,
      [&](std::string_view bytes, const MoreReady&) {
        g.body.append(bytes);
        return true;
      },
      CancelToken());
  return g;
}

const char kChunkedHead[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST(HttpClientErrorsTest, MalformedChunkedBodySaysSo) {
  RawServer server(std::string(kChunkedHead) + "zzzz\r\nnot hex\r\n", false);
  Got g = Post(server.Client());
  EXPECT_EQ(g.result.outcome, HttpOutcome::kBroken);
  EXPECT_EQ(g.result.transport_error,
            "the server's response body was malformed (chunked encoding: the chunk size line "
            "'zzzz' is not a hexadecimal size)");
}

TEST(HttpClientErrorsTest, ChunkedBodyCutShortSaysWhere) {
  RawServer server(std::string(kChunkedHead) + "5\r\n{\"a\"", false);
  Got g = Post(server.Client());
  EXPECT_EQ(g.result.outcome, HttpOutcome::kBroken);
  EXPECT_EQ(g.result.transport_error,
            "the connection closed before the response body was complete (chunked encoding: "
            "inside chunk 1, 4 of its 5 bytes read)");
  EXPECT_EQ(g.body, "{\"a\"") << "what came is handed over";
}

TEST(HttpClientErrorsTest, WholeChunkedBodyEndsAtItsLastChunkOnAKeptConnection) {
  // A server that keeps the connection open after the body (against Connection: close): the
  // body is whole at its last chunk, so the request ends there, not at the idle timeout.
  RawServer server(std::string(kChunkedHead) + "2\r\n{}\r\n0\r\n\r\n", true);
  Got g = Post(server.Client());
  EXPECT_EQ(g.result.outcome, HttpOutcome::kCompleted) << g.result.transport_error;
  EXPECT_EQ(g.result.status, 200);
  EXPECT_EQ(g.body, "{}");
}

TEST(HttpClientErrorsTest, BodyShorterThanItsLengthSaysHowMuchCame) {
  RawServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
      "{\"jsonrpc\"",
      false);
  Got g = Post(server.Client());
  EXPECT_EQ(g.result.outcome, HttpOutcome::kBroken);
  EXPECT_EQ(g.result.transport_error,
            "the connection closed after 10 of the 100 bytes of the response body");
}

TEST(HttpClientErrorsTest, NoResponseSaysSo) {
  for (const char* answer : {"", "SSH-2.0-OpenSSH_9.2\r\n"}) {
    RawServer server(answer, false);
    Got g = Post(server.Client());
    EXPECT_EQ(g.result.outcome, HttpOutcome::kBroken) << answer;
    EXPECT_EQ(g.result.status, 0);
    EXPECT_EQ(g.result.transport_error,
              "no HTTP response came: the connection closed before a whole response head, or "
              "the server's answer is not HTTP");
  }
}

TEST(HttpClientErrorsTest, SameOriginPathResolvesLocations) {
  auto base = ParseBaseUrl("http://Example.com:8080/v1");
  ASSERT_TRUE(base.ok());
  auto resolve = [&](const std::string& path, const std::string& location) {
    return SameOriginPath(*base, path, location).value_or("(another origin)");
  };
  EXPECT_EQ(resolve("/mcp", "/mcp/"), "/mcp/");
  EXPECT_EQ(resolve("/mcp", "http://example.com:8080/mcp/?a=1#top"), "/mcp/?a=1");
  EXPECT_EQ(resolve("/mcp", "HTTP://EXAMPLE.COM:8080"), "/");
  EXPECT_EQ(resolve("/mcp", "//example.com:8080/x"), "/x");
  EXPECT_EQ(resolve("/a/b?q=1", "c"), "/a/c");
  EXPECT_EQ(resolve("/a/b?q=1", "?q=2"), "/a/b?q=2");
  EXPECT_EQ(resolve("/a", "x?u=http://other/"), "/x?u=http://other/");
  for (const char* other :
       {"http://example.com/mcp", "https://example.com:8080/mcp", "http://example.org:8080/mcp",
        "//evil.test/mcp", "http://user@example.com:8080/mcp"})
    EXPECT_EQ(resolve("/mcp", other), "(another origin)") << other;
}

// An httplib server whose /to/<status>/<where> paths redirect: "<where>" is a path on the same
// server, or "other" (another port of the same host), or "loop" (to itself).
class RedirectServer {
 public:
  RedirectServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        seen_.push_back(req.method + " " + req.path + " " + req.body);
      }
      if (req.path.rfind("/to/", 0) == 0) {
        const std::string status = req.path.substr(4, 3);
        const std::string where = req.path.substr(8);
        res.status = std::stoi(status);
        if (where == "other") {
          res.set_header("Location", "http://127.0.0.1:" + std::to_string(port_ + 1) + "/final");
        } else if (where == "loop") {
          res.set_header("Location", req.path);
        } else {
          res.set_header("Location", "http://127.0.0.1:" + std::to_string(port_) + "/" + where);
        }
        res.set_content("redirecting", "text/plain");
        return;
      }
      res.set_content("{\"at\":\"" + req.path + "\"}", "application/json");
    };
    svr_.Post(".*", handler);
    svr_.Get(".*", handler);
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~RedirectServer() {
    svr_.stop();
    thread_.join();
  }
  HttpClient Client() const {
    return HttpClient(*ParseBaseUrl("http://127.0.0.1:" + std::to_string(port_)), HttpOptions());
  }
  std::string Origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(HttpClientRedirectTest, SameOriginRedirectsKeepMethodAndBody) {
  RedirectServer server;
  for (const char* status : {"307", "308"}) {
    Got g = Post(server.Client(), std::string("/to/") + status + "/mcp/");
    EXPECT_EQ(g.result.outcome, HttpOutcome::kCompleted) << g.result.transport_error;
    EXPECT_EQ(g.result.status, 200);
    EXPECT_EQ(g.body, R"({"at":"/mcp/"})") << "the redirect's own body is not handed over";
  }
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"initialize"})";
  EXPECT_EQ(server.seen(),
            (std::vector<std::string>{"POST /to/307/mcp/ " + body, "POST /mcp/ " + body,
                                      "POST /to/308/mcp/ " + body, "POST /mcp/ " + body}));
}

TEST(HttpClientRedirectTest, AGetFollowsEveryRedirectStatus) {
  RedirectServer server;
  for (const char* status : {"301", "302", "303", "307", "308"}) {
    HttpPostRequest req;
    req.method = "GET";
    req.path = std::string("/to/") + status + "/events";
    std::string body;
    HttpStreamResult r = server.Client().PostStream(
        req,
        [&](std::string_view b, const MoreReady&) {
          body.append(b);
          return true;
        },
        CancelToken());
    EXPECT_EQ(r.outcome, HttpOutcome::kCompleted) << status << ": " << r.transport_error;
    EXPECT_EQ(body, R"({"at":"/events"})") << status;
  }
}

TEST(HttpClientRedirectTest, RedirectsNotFollowedSayWhichAndWhy) {
  RedirectServer server;
  const std::string o = server.Origin();
  struct Case {
    std::string path, error;
  };
  const Case cases[] = {
      {"/to/307/other", "the server answered the POST of " + o +
                            "/to/307/other with HTTP 307 to http://127.0.0.1:" +
                            std::to_string(std::stoi(o.substr(o.rfind(':') + 1)) + 1) +
                            "/final, another origin: lousho follows redirects only within " + o +
                            "; if that address is right, configure it instead"},
      {"/to/302/mcp/", "the server answered the POST of " + o + "/to/302/mcp/ with HTTP 302 to " +
                           o +
                           "/mcp/, which would turn the POST into a GET; configure that "
                           "address instead"},
      {"/to/307/loop", "the server answered the POST of " + o + "/to/307/loop with HTTP 307 to " +
                           "/to/307/loop after 5 redirects already; lousho stops there"},
      {"/to/300/x", "the server answered the POST of " + o +
                        "/to/300/x with HTTP 300, a redirect lousho does not follow"},
  };
  for (const auto& c : cases) {
    Got g = Post(server.Client(), c.path);
    EXPECT_EQ(g.result.outcome, HttpOutcome::kRedirected) << c.path;
    EXPECT_EQ(g.result.transport_error, c.error);
    EXPECT_EQ(g.body, "") << "a redirect's body is never taken for the answer";
  }
}

}  // namespace
}  // namespace lousho::agent

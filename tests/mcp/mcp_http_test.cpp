// Tests of MCP's HTTP transports against an in-test HTTP server on loopback: streamable HTTP
// (session id, version and configured headers, JSON and event-stream answers, DELETE on close,
// a forgotten session) and the legacy SSE transport.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/mcp/client.h"
#include "support/json_util.h"
#include "tests/providers/raw_server.h"

namespace lousho::agent::mcp {
namespace {

struct Seen {
  std::string method;  // HTTP method
  std::string rpc;     // JSON-RPC method of a POST
  std::string session, version, auth, accept;
  std::string mcp_method, mcp_name;  // the standard headers of the stateless revision
};

class McpHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    svr_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      auto msg = ParseJson(req.body);
      Record(req, msg.ok() ? StringOr(*msg, "method") : "?");
      const std::string method = msg.ok() ? StringOr(*msg, "method") : "";
      if (forget_ && req.get_header_value("Mcp-Session-Id") == "s-1") {
        res.status = 404;
        return;
      }
      if (!msg->isMember("id")) {
        res.status = 202;
        return;
      }
      Json::Value reply(Json::objectValue);
      reply["jsonrpc"] = "2.0";
      reply["id"] = (*msg)["id"];
      // A session id the stateless revision must not echo.
      if (stateless_) res.set_header("Mcp-Session-Id", "not-a-session");
      if (method == "server/discover" && stateless_) {
        reply["result"]["supportedVersions"][0] = "2026-07-28";
        reply["result"]["capabilities"]["tools"] = Json::Value(Json::objectValue);
        reply["result"]["serverInfo"]["name"] = "stateless";
        reply["result"]["resultType"] = "complete";
        reply["result"]["ttlMs"] = 0;
        reply["result"]["cacheScope"] = "public";
        res.set_content(WriteJson(reply), "application/json");
        return;
      }
      if (method == "initialize") {
        reply["result"]["protocolVersion"] = "2025-06-18";
        reply["result"]["serverInfo"]["name"] = "loop";
        std::lock_guard<std::mutex> lock(mu_);
        res.set_header("Mcp-Session-Id", "s-" + std::to_string(++sessions_));
        res.set_content(WriteJson(reply), "application/json");
        return;
      }
      if (method == "tools/call") {
        // An event stream: a progress note, then the answer.
        Json::Value p(Json::objectValue);
        p["jsonrpc"] = "2.0";
        p["method"] = "notifications/progress";
        p["params"]["progressToken"] = (*msg)["params"]["_meta"]["progressToken"];
        p["params"]["progress"] = 1;
        p["params"]["total"] = 2;
        reply["result"]["content"][0]["type"] = "text";
        reply["result"]["content"][0]["text"] = "called";
        std::string body = "event: message\ndata: " + WriteJson(p) +
                           "\n\nevent: message\ndata: " + WriteJson(reply) + "\n\n";
        res.set_content(body, "text/event-stream");
        return;
      }
      reply["result"]["tools"] = Json::Value(Json::arrayValue);
      res.set_content(WriteJson(reply), "application/json");
    });
    svr_.Get("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record(req, "");
      res.status = 405;
    });
    svr_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record(req, "");
      res.status = 200;
    });
    // Redirects: /moved to /mcp on this origin (as Starlette sends /mcp to /mcp/), /elsewhere
    // to /mcp on another origin (the same server named differently).
    auto moved = [this](const httplib::Request&, httplib::Response& res) {
      res.status = 307;
      res.set_header("Location", "http://127.0.0.1:" + std::to_string(port_) + "/mcp");
    };
    svr_.Post("/moved", moved);
    svr_.Get("/moved", moved);
    svr_.Delete("/moved", moved);
    svr_.Post("/elsewhere", [this](const httplib::Request&, httplib::Response& res) {
      res.status = 307;
      res.set_header("Location", "http://localhost:" + std::to_string(port_) + "/mcp");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    svr_.stop();
    thread_.join();
  }
  void Record(const httplib::Request& req, const std::string& rpc) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(Seen{req.method, rpc, req.get_header_value("Mcp-Session-Id"),
                         req.get_header_value("MCP-Protocol-Version"),
                         req.get_header_value("Authorization"), req.get_header_value("Accept"),
                         req.get_header_value("Mcp-Method"), req.get_header_value("Mcp-Name")});
    cv_.notify_all();
  }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  bool WaitSeen(const std::function<bool(const Seen&)>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const auto& s : seen_)
        if (pred(s)) return true;
      return false;
    });
  }
  std::unique_ptr<Client> Make(const std::string& path = "/mcp", long connect_timeout_ms = 5000) {
    config::McpServerSpec spec;
    spec.name = "loop";
    spec.transport = config::McpTransport::kHttp;
    spec.url = "http://127.0.0.1:" + std::to_string(port_) + path;
    spec.headers = {{"Authorization", "Bearer sekrit"}};
    ClientOptions o;
    o.connect_timeout_ms = connect_timeout_ms;
    return std::make_unique<Client>(spec, o);
  }

  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
  int sessions_ = 0;
  std::atomic<bool> forget_{false};
  std::atomic<bool> stateless_{false};
};

TEST_F(McpHttpTest, StreamableHttpSessionHeadersAndAnswers) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(client->protocol_version(), "2025-06-18");
  std::vector<std::string> progress;
  auto res = client->CallTool(
      "t", Json::Value(Json::objectValue),
      [&](const Progress& p) { progress.push_back(std::to_string(static_cast<int>(p.progress))); },
      CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ((*res)["content"][0]["text"].asString(), "called");
  EXPECT_EQ(progress, std::vector<std::string>{"1"});
  // Both are sent without waiting for an answer; Close would cut them short.
  ASSERT_TRUE(WaitSeen([](const Seen& s) { return s.rpc == "notifications/initialized"; }));
  ASSERT_TRUE(WaitSeen([](const Seen& s) { return s.method == "GET"; }));
  client->Close();
  ASSERT_TRUE(WaitSeen([](const Seen& s) { return s.method == "DELETE"; }));
  for (const auto& s : seen()) {
    EXPECT_EQ(s.auth, "Bearer sekrit") << s.method << " " << s.rpc;
    if (s.method == "POST") {
      EXPECT_EQ(s.accept, "application/json, text/event-stream");
    }
    if (s.rpc == "server/discover") {
      // Tried first; this server does not speak the stateless revision.
      EXPECT_EQ(s.session, "");
      EXPECT_EQ(s.version, "2026-07-28");
    } else if (s.rpc == "initialize") {
      EXPECT_EQ(s.session, "");
      EXPECT_EQ(s.version, "");
      EXPECT_EQ(s.mcp_method, "") << "the 2025 revision names no method in a header";
    } else {
      EXPECT_EQ(s.session, "s-1") << s.method << " " << s.rpc;
      EXPECT_EQ(s.version, "2025-06-18") << s.method << " " << s.rpc;
    }
  }
}

// A server of the stateless revision: discovered, never initialized, no session kept or ended,
// every request named in Mcp-Method (and Mcp-Name for a tool call) beside its version.
TEST_F(McpHttpTest, StatelessRevisionSendsTheStandardHeadersAndNoSession) {
  stateless_ = true;
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(client->protocol_version(), "2026-07-28");
  EXPECT_EQ(client->server_info()["name"].asString(), "stateless");
  auto res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  client->Close();
  int calls = 0;
  for (const auto& s : seen()) {
    EXPECT_EQ(s.method, "POST") << "no event stream to listen to, no session to end";
    EXPECT_NE(s.rpc, "initialize");
    EXPECT_EQ(s.session, "") << s.rpc;
    EXPECT_EQ(s.version, "2026-07-28") << s.rpc;
    EXPECT_EQ(s.mcp_method, s.rpc);
    EXPECT_EQ(s.mcp_name, s.rpc == "tools/call" ? "t" : "") << s.rpc;
    calls += s.rpc == "tools/call" ? 1 : 0;
  }
  EXPECT_EQ(calls, 1);
}

TEST_F(McpHttpTest, AForgottenSessionStartsANewOne) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  forget_ = true;  // the server now answers 404 to session s-1
  auto res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  EXPECT_FALSE(res.ok());
  res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(client->restarts(), 1);
  bool second = false;
  for (const auto& s : seen()) second = second || (s.rpc == "tools/call" && s.session == "s-2");
  EXPECT_TRUE(second);
}

// A server at /moved answers 307 to /mcp on the same origin: every request follows it, with
// its method, body and headers.
TEST_F(McpHttpTest, ARedirectOnTheSameOriginIsFollowed) {
  auto client = Make("/moved");
  Status st = client->Connect(CancelToken());
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(client->protocol_version(), "2025-06-18");
  auto tools = client->ListTools(CancelToken());
  ASSERT_TRUE(tools.ok()) << tools.error().message;
  auto res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ((*res)["content"][0]["text"].asString(), "called");
  client->Close();
  ASSERT_TRUE(WaitSeen([](const Seen& s) { return s.method == "DELETE"; }));
  for (const auto& s : seen()) {
    EXPECT_EQ(s.auth, "Bearer sekrit") << s.method << " " << s.rpc;
    // server/discover comes before any session (this server does not speak 2026-07-28).
    if (s.rpc != "initialize" && s.rpc != "server/discover") {
      EXPECT_EQ(s.session, "s-1") << s.method << " " << s.rpc;
    }
  }
}

// A redirect to another origin is not followed: the start fails at once (not at its timeout)
// and says what the server answered.
TEST_F(McpHttpTest, ARedirectToAnotherOriginFailsTheStartSayingWhere) {
  auto client = Make("/elsewhere", 20000);
  Status st = client->Connect(CancelToken());
  ASSERT_FALSE(st.ok());
  const std::string origin = "http://127.0.0.1:" + std::to_string(port_);
  EXPECT_EQ(st.error().message,
            "MCP server 'loop' gave no usable answer to initialize: the server answered the POST "
            "of " +
                origin + "/elsewhere with HTTP 307 to http://localhost:" + std::to_string(port_) +
                "/mcp, another origin: lousho follows redirects only within " + origin +
                "; if that address is right, configure it instead");
  EXPECT_EQ(st.error().code, ErrorCode::kMcpServer);
}

// A chunked answer whose framing is garbage is reported as such, not as "Read".
TEST(McpHttpErrorsTest, AMalformedChunkedAnswerSaysSo) {
  testing::RawServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "zzzz\r\nnot hex\r\n",
      false);
  config::McpServerSpec spec;
  spec.name = "raw";
  spec.transport = config::McpTransport::kHttp;
  spec.url = server.url("/mcp");
  ClientOptions o;
  o.connect_timeout_ms = 20000;
  Client client(spec, o);
  Status st = client.Connect(CancelToken());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "MCP server 'raw' gave no usable answer to initialize: the server's response body was "
            "malformed (chunked encoding: the chunk size line 'zzzz' is not a hexadecimal size)");
}

TEST_F(McpHttpTest, UnreachableServerFailsTheStartQuickly) {
  config::McpServerSpec spec;
  spec.name = "nowhere";
  spec.transport = config::McpTransport::kHttp;
  svr_.stop();  // nothing listens on the port any more
  spec.url = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
  ClientOptions o;
  o.connect_timeout_ms = 5000;
  Client client(spec, o);
  Status st = client.Connect(CancelToken());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kMcpServer) << st.error().message;
}

TEST_F(McpHttpTest, LegacyStartWithACancelledTokenEndsAtOnce) {
  config::McpServerSpec spec;
  spec.name = "legacy";
  spec.transport = config::McpTransport::kSse;
  spec.url = "http://127.0.0.1:" + std::to_string(port_) + "/never-sends-an-endpoint";
  ClientOptions o;
  o.connect_timeout_ms = 60000;
  Client client(spec, o);
  CancelSource cancel;
  cancel.Cancel();
  Status st = client.Connect(cancel.token());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kCancelled) << st.error().message;
}

// The legacy transport: a GET event stream names the endpoint; answers come on the stream.
TEST(McpSseTest, EndpointEventThenMessagesOnTheStream) {
  httplib::Server svr;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> outbox;
  bool stop = false;
  std::string auth_on_post;
  svr.Get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      static thread_local bool sent_endpoint = false;
      if (!sent_endpoint) {
        sent_endpoint = true;
        std::string e = "event: endpoint\ndata: /messages?sessionId=abc\n\n";
        sink.write(e.data(), e.size());
      }
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return !outbox.empty() || stop; });
      while (!outbox.empty()) {
        std::string e = "event: message\ndata: " + outbox.front() + "\n\n";
        outbox.pop_front();
        sink.write(e.data(), e.size());
      }
      return !stop;
    });
  });
  svr.Post("/messages", [&](const httplib::Request& req, httplib::Response& res) {
    auto msg = ParseJson(req.body);
    ASSERT_TRUE(msg.ok());
    EXPECT_EQ(req.get_param_value("sessionId"), "abc");
    std::lock_guard<std::mutex> lock(mu);
    auth_on_post = req.get_header_value("X-Key");
    res.status = 202;
    if (!msg->isMember("id")) return;
    Json::Value reply(Json::objectValue);
    reply["jsonrpc"] = "2.0";
    reply["id"] = (*msg)["id"];
    if (StringOr(*msg, "method") == "initialize") {
      reply["result"]["protocolVersion"] = "2025-03-26";
    } else {
      reply["result"]["content"][0]["type"] = "text";
      reply["result"]["content"][0]["text"] = "via sse";
    }
    outbox.push_back(WriteJson(reply));
    cv.notify_all();
  });
  int port = svr.bind_to_any_port("127.0.0.1");
  std::thread th([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    config::McpServerSpec spec;
    spec.name = "legacy";
    spec.transport = config::McpTransport::kSse;
    spec.url = "http://127.0.0.1:" + std::to_string(port) + "/sse";
    spec.headers = {{"X-Key", "k"}};
    ClientOptions o;
    o.connect_timeout_ms = 5000;
    Client client(spec, o);
    ASSERT_TRUE(client.Connect(CancelToken()).ok());
    EXPECT_EQ(client.protocol_version(), "2025-03-26");
    auto res = client.CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_EQ((*res)["content"][0]["text"].asString(), "via sse");
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(auth_on_post, "k");
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  svr.stop();
  th.join();
}

}  // namespace
}  // namespace lousho::agent::mcp

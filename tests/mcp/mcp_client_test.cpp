// Tests of the MCP client against an in-process fake server: every message type of the
// handshake, listing, calls, progress, cancellation, server requests and restarts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "agent/mcp/client.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

// A fake MCP server on its own thread. The client's transport hands it every line; it answers
// through `Send`. Methods without a handler get no answer (a server that hangs).
class FakeServer {
 public:
  using Handler = std::function<void(FakeServer&, const Json::Value& msg)>;

  // The transport the client gets; one per connection.
  class Transport : public McpLineTransport {
   public:
    explicit Transport(FakeServer* s) : s_(s) {}
    ReadStatus ReadLine(std::string* line, size_t* size) override {
      std::unique_lock<std::mutex> lock(s_->mu_);
      s_->cv_.wait(lock, [&] { return !s_->to_client_.empty() || s_->ended_; });
      if (s_->to_client_.empty()) return ReadStatus::kEof;
      *line = s_->to_client_.front();
      s_->to_client_.pop_front();
      if (size) *size = line->size();
      return ReadStatus::kLine;
    }
    void WriteLine(std::string line) override {
      auto msg = ParseJson(line);
      ASSERT_TRUE(msg.ok());
      std::lock_guard<std::mutex> lock(s_->mu_);
      if (s_->ended_) return;
      s_->received_.push_back(*msg);
      s_->inbox_.push_back(*msg);
      s_->cv_.notify_all();
    }
    void Close() override { s_->End(); }

   private:
    FakeServer* s_;
  };

  FakeServer() {
    On("initialize", [](FakeServer& s, const Json::Value& m) {
      Json::Value r(Json::objectValue);
      r["protocolVersion"] = s.version;
      r["capabilities"]["tools"]["listChanged"] = true;
      if (s.lists_change) {
        r["capabilities"]["prompts"]["listChanged"] = true;
        r["capabilities"]["resources"]["listChanged"] = true;
      }
      r["serverInfo"]["name"] = "fake";
      r["serverInfo"]["version"] = "1";
      s.Reply(m, r);
    });
    // A 2025 server knows no server/discover; a stateless one answers it.
    On("server/discover", [](FakeServer& s, const Json::Value& m) {
      if (!s.stateless) {
        Json::Value e(Json::objectValue);
        e["jsonrpc"] = "2.0";
        e["id"] = m["id"];
        e["error"]["code"] = -32601;
        e["error"]["message"] = "Method not found";
        s.Send(e);
        return;
      }
      Json::Value r(Json::objectValue);
      r["supportedVersions"][0] = "2026-07-28";
      r["capabilities"]["tools"] = Json::Value(Json::objectValue);
      if (s.list_changed) r["capabilities"]["tools"]["listChanged"] = true;
      if (s.lists_change) {
        r["capabilities"]["prompts"]["listChanged"] = true;
        r["capabilities"]["resources"]["listChanged"] = true;
      }
      r["serverInfo"]["name"] = "fake26";
      r["resultType"] = "complete";
      s.Reply(m, r);
    });
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ended_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }

  void On(const std::string& method, Handler h) {
    std::lock_guard<std::mutex> lock(mu_);
    handlers_[method] = std::move(h);
  }
  void Send(const Json::Value& msg) {
    std::lock_guard<std::mutex> lock(mu_);
    to_client_.push_back(WriteJson(msg));
    cv_.notify_all();
  }
  void Reply(const Json::Value& request, const Json::Value& result) {
    Json::Value r(Json::objectValue);
    r["jsonrpc"] = "2.0";
    r["id"] = request["id"];
    r["result"] = result;
    Send(r);
  }
  void Notify(const std::string& method, const Json::Value& params) {
    Json::Value n(Json::objectValue);
    n["jsonrpc"] = "2.0";
    n["method"] = method;
    n["params"] = params;
    Send(n);
  }
  // Ends the current connection as a dying server would.
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    cv_.notify_all();
  }
  // Waits (bounded) for a message the client sent that `pred` accepts.
  std::optional<Json::Value> WaitFor(const std::function<bool(const Json::Value&)>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<Json::Value> found;
    cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const auto& m : received_)
        if (pred(m)) {
          found = m;
          return true;
        }
      return false;
    });
    return found;
  }
  std::vector<Json::Value> received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

  std::unique_ptr<McpLineTransport> Open() {
    std::lock_guard<std::mutex> lock(mu_);
    ++opens;
    ended_ = false;
    to_client_.clear();
    return std::make_unique<Transport>(this);
  }

  std::string version = "2025-11-25";
  std::atomic<bool> stateless{false};
  std::atomic<bool> list_changed{false};  // stateless: offers subscriptions/listen
  std::atomic<bool> lists_change{false};  // prompts and resources announce listChanged too
  int opens = 0;                          // guarded by mu_ (read after the client is done)

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return !inbox_.empty() || stop_; });
      if (stop_) return;
      Json::Value msg = inbox_.front();
      inbox_.pop_front();
      auto it = handlers_.find(StringOr(msg, "method"));
      if (it == handlers_.end()) continue;
      Handler h = it->second;
      lock.unlock();
      h(*this, msg);
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Handler> handlers_;
  std::deque<Json::Value> inbox_;
  std::deque<std::string> to_client_;
  std::vector<Json::Value> received_;
  bool ended_ = false;
  bool stop_ = false;
  std::thread thread_;
};

class McpClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<Client> Make(ClientOptions o = {}) {
    config::McpServerSpec spec;
    spec.name = "fake";
    o.open = [this](const CancelToken&) -> Result<std::unique_ptr<McpLineTransport>> {
      return server_.Open();
    };
    o.client_version = "9.9";
    if (o.root_uris.empty()) o.root_uris = {"file:///work/project"};
    if (o.connect_timeout_ms == 10000) o.connect_timeout_ms = 5000;
    return std::make_unique<Client>(spec, o);
  }
  static auto Method(const std::string& m) {
    return [m](const Json::Value& v) { return StringOr(v, "method") == m; };
  }
  FakeServer server_;
};

TEST_F(McpClientTest, HandshakeOffersNewestVersionAndHonestCapabilities) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto init = server_.WaitFor(Method("initialize"));
  ASSERT_TRUE(init);
  const Json::Value& p = (*init)["params"];
  EXPECT_EQ(p["protocolVersion"].asString(), "2025-11-25");
  EXPECT_EQ(p["clientInfo"]["name"].asString(), "lousho");
  EXPECT_EQ(p["clientInfo"]["version"].asString(), "9.9");
  EXPECT_TRUE(p["capabilities"].isMember("roots"));
  EXPECT_FALSE(p["capabilities"].isMember("sampling"));
  EXPECT_FALSE(p["capabilities"].isMember("elicitation"));
  // notifications/initialized follows the answer, as a notification (no id).
  auto done = server_.WaitFor(Method("notifications/initialized"));
  ASSERT_TRUE(done);
  EXPECT_FALSE(done->isMember("id"));
  EXPECT_EQ(client->protocol_version(), "2025-11-25");
  EXPECT_EQ(client->server_info()["name"].asString(), "fake");
}

TEST_F(McpClientTest, StatelessServerIsDiscoveredAndEveryRequestCarriesMeta) {
  server_.stateless = true;
  server_.On("tools/list", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["tools"] = Json::Value(Json::arrayValue);
    s.Reply(m, r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(client->protocol_version(), "2026-07-28");
  EXPECT_EQ(client->server_info()["name"].asString(), "fake26");
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  int requests = 0;
  for (const auto& m : server_.received()) {
    EXPECT_NE(StringOr(m, "method"), "initialize");
    EXPECT_NE(StringOr(m, "method"), "notifications/initialized");
    if (!m.isMember("id")) continue;
    ++requests;
    const Json::Value& meta = m["params"]["_meta"];
    EXPECT_EQ(meta["io.modelcontextprotocol/protocolVersion"].asString(), "2026-07-28");
    EXPECT_EQ(meta["io.modelcontextprotocol/clientInfo"]["name"].asString(), "lousho");
    EXPECT_EQ(meta["io.modelcontextprotocol/clientInfo"]["version"].asString(), "9.9");
    EXPECT_TRUE(meta["io.modelcontextprotocol/clientCapabilities"].isObject());
  }
  EXPECT_EQ(requests, 2);  // server/discover, tools/list
}

TEST_F(McpClientTest, A2025ServerGetsTheHandshakeAfterDiscoverFails) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(client->protocol_version(), "2025-11-25");
  auto got = server_.received();
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(StringOr(got[0], "method"), "server/discover");
  EXPECT_EQ(StringOr(got[1], "method"), "initialize");
  // A client pinned to the 2025 revision does not try the stateless one at all.
  client->Close();  // one connection at a time to the fake
  server_.stateless = true;
  ClientOptions o;
  o.revisions = {"2025-11-25"};
  auto pinned = Make(o);
  const size_t before = server_.received().size();
  ASSERT_TRUE(pinned->Connect(CancelToken()).ok());
  EXPECT_EQ(pinned->protocol_version(), "2025-11-25");
  auto after = server_.received();
  ASSERT_GT(after.size(), before);
  EXPECT_EQ(StringOr(after[before], "method"), "initialize");
}

// Revisions are tried in the order given: a server of 2026 only refuses the handshake offered
// first (as stdio servers are), and server/discover follows on the same connection.
TEST_F(McpClientTest, TheNextRevisionIsTriedWhenTheServerRefusesOne) {
  server_.stateless = true;
  server_.On("initialize", [](FakeServer& s, const Json::Value& m) {
    Json::Value e(Json::objectValue);
    e["jsonrpc"] = "2.0";
    e["id"] = m["id"];
    e["error"]["code"] = -32022;
    e["error"]["message"] = "Unsupported protocol version";
    e["error"]["data"]["supported"][0] = "2026-07-28";
    s.Send(e);
  });
  ClientOptions o;
  o.revisions = {"2025-11-25", "2026-07-28"};
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(client->protocol_version(), "2026-07-28");
  auto got = server_.received();
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(StringOr(got[0], "method"), "initialize");
  EXPECT_EQ(StringOr(got[1], "method"), "server/discover");
  EXPECT_EQ(server_.opens, 1) << "one connection";
}

// An input_required result is answered (the editor's elicitation, the roots) and the request
// sent again with the answers and the server's state, until the server completes it.
TEST_F(McpClientTest, InputRequiredIsAnsweredAndTheRequestRetried) {
  server_.stateless = true;
  server_.On("tools/call", [](FakeServer& s, const Json::Value& m) {
    const Json::Value& p = m["params"];
    Json::Value r(Json::objectValue);
    if (!p.isMember("inputResponses")) {
      r["resultType"] = "input_required";
      r["requestState"] = "state-1";
      Json::Value& ask = r["inputRequests"]["who"];
      ask["method"] = "elicitation/create";
      ask["params"]["message"] = "Your name?";
      ask["params"]["requestedSchema"]["type"] = "object";
      ask["params"]["requestedSchema"]["properties"]["name"]["type"] = "string";
      r["inputRequests"]["where"]["method"] = "roots/list";
      s.Reply(m, r);
      return;
    }
    r["resultType"] = "complete";
    r["content"][0]["type"] = "text";
    r["content"][0]["text"] = "hello " + p["inputResponses"]["who"]["content"]["name"].asString() +
                              " in " + p["inputResponses"]["where"]["roots"][0]["uri"].asString() +
                              " with " + p["requestState"].asString();
    s.Reply(m, r);
  });
  ClientOptions o;
  std::vector<std::string> asked;
  o.on_elicit = [&](const Json::Value& params, const CancelToken&) {
    asked.push_back(StringOr(params, "message"));
    Json::Value r(Json::objectValue);
    r["action"] = "accept";
    r["content"]["name"] = "Ada";
    return r;
  };
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto res = client->CallTool("greet", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ((*res)["content"][0]["text"].asString(),
            "hello Ada in file:///work/project with state-1");
  EXPECT_EQ(asked, std::vector<std::string>{"Your name?"});
  // The capability is declared only because someone can answer.
  auto discover = server_.WaitFor(Method("server/discover"));
  ASSERT_TRUE(discover);
  EXPECT_TRUE((*discover)["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].isMember(
      "elicitation"));
}

// Without anyone to ask, the server hears a decline (both revisions), never silence.
TEST_F(McpClientTest, QuestionsAreDeclinedWhenNoOneCanAnswer) {
  server_.stateless = true;
  server_.On("tools/call", [](FakeServer& s, const Json::Value& m) {
    const Json::Value& p = m["params"];
    Json::Value r(Json::objectValue);
    if (!p.isMember("inputResponses")) {
      r["resultType"] = "input_required";
      r["inputRequests"]["q"]["method"] = "elicitation/create";
      r["inputRequests"]["q"]["params"]["message"] = "ok?";
      s.Reply(m, r);
      return;
    }
    r["content"][0]["type"] = "text";
    r["content"][0]["text"] = p["inputResponses"]["q"]["action"].asString();
    s.Reply(m, r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ((*res)["content"][0]["text"].asString(), "decline");
}

// A 2025 server's elicitation/create is answered off the reader thread: the server's other
// messages (a ping) are answered while the user thinks.
TEST_F(McpClientTest, A2025ElicitationIsAskedOffTheReaderThread) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  ClientOptions o;
  o.on_elicit = [&](const Json::Value&, const CancelToken&) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    Json::Value r(Json::objectValue);
    r["action"] = "accept";
    r["content"]["ok"] = true;
    return r;
  };
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  Json::Value ask(Json::objectValue);
  ask["jsonrpc"] = "2.0";
  ask["id"] = "q-1";
  ask["method"] = "elicitation/create";
  ask["params"]["message"] = "ok?";
  server_.Send(ask);
  Json::Value ping(Json::objectValue);
  ping["jsonrpc"] = "2.0";
  ping["id"] = "p-1";
  ping["method"] = "ping";
  server_.Send(ping);
  ASSERT_TRUE(server_.WaitFor([](const Json::Value& v) { return v["id"] == "p-1"; }));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  auto answer = server_.WaitFor([](const Json::Value& v) { return v["id"] == "q-1"; });
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["result"]["action"].asString(), "accept");
  EXPECT_TRUE((*answer)["result"]["content"]["ok"].asBool());
}

// A stateless server that offers list changes is listened to with subscriptions/listen; what
// comes on that stream marks the tools stale.
TEST_F(McpClientTest, StatelessListChangesComeOnASubscription) {
  server_.stateless = true;
  server_.list_changed = true;
  server_.On("tools/list", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["tools"] = Json::Value(Json::arrayValue);
    s.Reply(m, r);
  });
  server_.On("subscriptions/listen", [](FakeServer&, const Json::Value&) {});  // stays open
  std::mutex mu;
  std::condition_variable cv;
  bool told = false;
  ClientOptions o;
  o.on_tools_changed = [&] {
    std::lock_guard<std::mutex> lock(mu);
    told = true;
    cv.notify_all();
  };
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto listen = server_.WaitFor(Method("subscriptions/listen"));
  ASSERT_TRUE(listen);
  EXPECT_TRUE((*listen)["params"]["notifications"]["toolsListChanged"].asBool());
  EXPECT_EQ((*listen)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].asString(),
            "2026-07-28");
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  EXPECT_FALSE(client->tools_changed());
  server_.Notify("notifications/tools/list_changed", Json::Value(Json::objectValue));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return told; }));
  }
  EXPECT_TRUE(client->tools_changed());
  client->Close();  // ends the subscription's wait at once
}

// Prompts and resources: a stateless server is asked for their changes on the subscription
// too; a change is told (on_list_changed) and the resource list, kept while the subscription is
// open, is listed again after it. A 2025 session's own notifications do the same.
class ListChangesTest : public McpClientTest {
 protected:
  void SetUp() override {
    server_.lists_change = true;
    server_.On("resources/list", [this](FakeServer& s, const Json::Value& m) {
      Json::Value item(Json::objectValue);
      item["uri"] = "memo://" + std::to_string(++lists_);
      item["name"] = "memo";
      Json::Value r(Json::objectValue);
      r["resources"].append(item);
      s.Reply(m, r);
    });
    server_.On("subscriptions/listen", [](FakeServer&, const Json::Value&) {});  // stays open
    options_.on_list_changed = [this](const std::string& list) {
      std::lock_guard<std::mutex> lock(mu_);
      told_.push_back(list);
      cv_.notify_all();
    };
  }
  // Waits until `list` was told `n` times in all.
  bool Told(const std::string& list, size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      return std::count(told_.begin(), told_.end(), list) >= static_cast<std::ptrdiff_t>(n);
    });
  }
  std::string FirstUri(Client& c) {
    auto r = c.ListResources(CancelToken());
    return r.ok() ? (*r)[0]["uri"].asString() : r.error().message;
  }
  std::atomic<int> lists_{0};
  ClientOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> told_;
};

TEST_F(ListChangesTest, StatelessSubscriptionAsksForPromptsAndResources) {
  server_.stateless = true;
  auto client = Make(options_);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto listen = server_.WaitFor(Method("subscriptions/listen"));
  ASSERT_TRUE(listen);
  EXPECT_TRUE((*listen)["params"]["notifications"]["promptsListChanged"].asBool());
  EXPECT_TRUE((*listen)["params"]["notifications"]["resourcesListChanged"].asBool());
  EXPECT_FALSE((*listen)["params"]["notifications"].isMember("toolsListChanged"))
      << "the server's tools do not announce changes";
  EXPECT_EQ(FirstUri(*client), "memo://1");
  EXPECT_EQ(FirstUri(*client), "memo://1") << "kept while the subscription says nothing";
  server_.Notify("notifications/resources/list_changed", Json::Value(Json::objectValue));
  ASSERT_TRUE(Told("resources", 1));
  EXPECT_EQ(FirstUri(*client), "memo://2");
  server_.Notify("notifications/prompts/list_changed", Json::Value(Json::objectValue));
  ASSERT_TRUE(Told("prompts", 1));
  client->Close();
}

TEST_F(ListChangesTest, SessionNotificationsOfA2025Server) {
  auto client = Make(options_);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(FirstUri(*client), "memo://1");
  EXPECT_EQ(FirstUri(*client), "memo://1");
  server_.Notify("notifications/prompts/list_changed", Json::Value(Json::objectValue));
  ASSERT_TRUE(Told("prompts", 1));
  EXPECT_EQ(FirstUri(*client), "memo://1") << "a prompt change leaves the resources kept";
  server_.Notify("notifications/resources/list_changed", Json::Value(Json::objectValue));
  ASSERT_TRUE(Told("resources", 1));
  EXPECT_EQ(FirstUri(*client), "memo://2");
}

TEST_F(ListChangesTest, WithoutListChangedResourcesAreListedEachTime) {
  server_.lists_change = false;
  auto client = Make(options_);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_EQ(FirstUri(*client), "memo://1");
  EXPECT_EQ(FirstUri(*client), "memo://2");
}

TEST_F(McpClientTest, ListResultTimeToLiveMarksToolsStale) {
  std::atomic<int> ttl{3600000};
  server_.On("tools/list", [&](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["tools"] = Json::Value(Json::arrayValue);
    r["ttlMs"] = ttl.load();
    s.Reply(m, r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  EXPECT_FALSE(client->tools_changed()) << "an hour to live";
  ttl = 1;
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  // A millisecond to live: stale once the steady clock has moved on.
  const auto listed = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - listed < std::chrono::milliseconds(2))
    std::this_thread::yield();
  EXPECT_TRUE(client->tools_changed());
  ttl = 0;
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  EXPECT_FALSE(client->tools_changed()) << "0: no time to live; list_changed says when";
}

TEST_F(McpClientTest, AcceptsOlderVersionsAndRefusesUnknownOnes) {
  for (const char* v : {"2025-06-18", "2025-03-26"}) {
    server_.version = v;
    auto client = Make();
    ASSERT_TRUE(client->Connect(CancelToken()).ok()) << v;
    EXPECT_EQ(client->protocol_version(), v);
  }
  server_.version = "2024-01-01";
  auto client = Make();
  Status st = client->Connect(CancelToken());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kMcpServer);
  EXPECT_NE(st.error().message.find("2024-01-01"), std::string::npos);
}

TEST_F(McpClientTest, ToolsListFollowsCursorsAcrossPages) {
  server_.On("tools/list", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    Json::Value tool(Json::objectValue);
    const std::string cursor = StringOr(m["params"], "cursor");
    tool["name"] = cursor.empty() ? "first" : "second";
    tool["description"] = "a tool";
    tool["inputSchema"]["type"] = "object";
    if (cursor.empty()) {
      tool["annotations"]["readOnlyHint"] = true;
      r["nextCursor"] = "page2";
    }
    r["tools"].append(tool);
    s.Reply(m, r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto tools = client->ListTools(CancelToken());
  ASSERT_TRUE(tools.ok()) << tools.error().message;
  ASSERT_EQ(tools->size(), 2u);
  EXPECT_EQ((*tools)[0].name, "first");
  EXPECT_TRUE((*tools)[0].read_only);
  EXPECT_EQ((*tools)[1].name, "second");
  EXPECT_FALSE((*tools)[1].read_only);
  int lists = 0;
  for (const auto& m : server_.received())
    if (StringOr(m, "method") == "tools/list") {
      ++lists;
      if (lists == 2) {
        EXPECT_EQ(m["params"]["cursor"].asString(), "page2");
      }
    }
  EXPECT_EQ(lists, 2);
}

TEST_F(McpClientTest, CallRelaysProgressOnTheCallingThreadThenTheResult) {
  server_.On("tools/call", [](FakeServer& s, const Json::Value& m) {
    const Json::Value token = m["params"]["_meta"]["progressToken"];
    for (int i = 1; i <= 3; ++i) {
      Json::Value p(Json::objectValue);
      p["progressToken"] = token;
      p["progress"] = i;
      p["total"] = 3;
      p["message"] = "step " + std::to_string(i);
      s.Notify("notifications/progress", p);
    }
    Json::Value r(Json::objectValue);
    r["content"][0]["type"] = "text";
    r["content"][0]["text"] = "done " + m["params"]["arguments"]["x"].asString();
    s.Reply(m, r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  std::vector<std::string> seen;
  const auto caller = std::this_thread::get_id();
  bool same_thread = true;
  Json::Value args(Json::objectValue);
  args["x"] = "42";
  auto res = client->CallTool(
      "work", args,
      [&](const Progress& p) {
        same_thread = same_thread && std::this_thread::get_id() == caller;
        seen.push_back(std::to_string(static_cast<int>(p.progress)) + "/" +
                       std::to_string(static_cast<int>(p.total.value_or(0))) + " " + p.message);
      },
      CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ((*res)["content"][0]["text"].asString(), "done 42");
  EXPECT_EQ(seen, (std::vector<std::string>{"1/3 step 1", "2/3 step 2", "3/3 step 3"}));
  EXPECT_TRUE(same_thread);
  auto call = server_.WaitFor(Method("tools/call"));
  EXPECT_EQ((*call)["params"]["name"].asString(), "work");
  EXPECT_TRUE((*call)["params"]["_meta"]["progressToken"].isString());
}

TEST_F(McpClientTest, CancelSendsNotificationsCancelledAndReturnsAtOnce) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  CancelSource cancel;
  std::thread canceller([&] {
    // The call is in flight once the server has it.
    ASSERT_TRUE(server_.WaitFor(Method("tools/call")));
    cancel.Cancel();
  });
  auto res = client->CallTool("hang", Json::Value(Json::objectValue), nullptr, cancel.token());
  canceller.join();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kCancelled);
  auto call = server_.WaitFor(Method("tools/call"));
  auto note = server_.WaitFor(Method("notifications/cancelled"));
  ASSERT_TRUE(note);
  EXPECT_EQ((*note)["params"]["requestId"], (*call)["id"]);
}

TEST_F(McpClientTest, CallTimeoutAlsoCancelsAtTheServer) {
  ClientOptions o;
  o.call_timeout_ms = 50;
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto res = client->CallTool("hang", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kTimeout);
  EXPECT_TRUE(server_.WaitFor(Method("notifications/cancelled")));
}

TEST_F(McpClientTest, ErrorAnswerFailsTheCallWithItsMessage) {
  server_.On("tools/call", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["jsonrpc"] = "2.0";
    r["id"] = m["id"];
    r["error"]["code"] = -32602;
    r["error"]["message"] = "Unknown tool: nope";
    s.Send(r);
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  auto res = client->CallTool("nope", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kMcpServer);
  EXPECT_NE(res.error().message.find("Unknown tool: nope"), std::string::npos);
}

TEST_F(McpClientTest, AnswersServerPingAndRootsList) {
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  Json::Value ping(Json::objectValue);
  ping["jsonrpc"] = "2.0";
  ping["id"] = "srv-1";
  ping["method"] = "ping";
  server_.Send(ping);
  Json::Value roots = ping;
  roots["id"] = "srv-2";
  roots["method"] = "roots/list";
  server_.Send(roots);
  auto pong = server_.WaitFor([](const Json::Value& v) { return v["id"] == "srv-1"; });
  ASSERT_TRUE(pong);
  EXPECT_TRUE((*pong)["result"].isObject());
  auto listed = server_.WaitFor([](const Json::Value& v) { return v["id"] == "srv-2"; });
  ASSERT_TRUE(listed);
  EXPECT_EQ((*listed)["result"]["roots"][0]["uri"].asString(), "file:///work/project");
  EXPECT_EQ((*listed)["result"]["roots"][0]["name"].asString(), "project");
}

TEST_F(McpClientTest, ClientPing) {
  server_.On("ping", [](FakeServer& s, const Json::Value& m) {
    s.Reply(m, Json::Value(Json::objectValue));
  });
  auto client = Make();
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_TRUE(client->Ping(CancelToken()).ok());
}

TEST_F(McpClientTest, ListChangedMarksToolsStaleUntilListed) {
  server_.On("tools/list", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["tools"] = Json::Value(Json::arrayValue);
    s.Reply(m, r);
  });
  std::mutex mu;
  std::condition_variable cv;
  bool told = false;
  ClientOptions o;
  o.on_tools_changed = [&] {
    std::lock_guard<std::mutex> lock(mu);
    told = true;
    cv.notify_all();
  };
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  EXPECT_FALSE(client->tools_changed());
  server_.Notify("notifications/tools/list_changed", Json::Value(Json::objectValue));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return told; }));
  }
  EXPECT_TRUE(client->tools_changed());
  ASSERT_TRUE(client->ListTools(CancelToken()).ok());
  EXPECT_FALSE(client->tools_changed());
}

TEST_F(McpClientTest, DeadServerIsRestartedOnNextUseAFewTimesAtMost) {
  server_.On("tools/call", [](FakeServer& s, const Json::Value& m) {
    Json::Value r(Json::objectValue);
    r["content"] = Json::Value(Json::arrayValue);
    s.Reply(m, r);
  });
  ClientOptions o;
  o.max_restarts = 2;
  auto client = Make(o);
  ASSERT_TRUE(client->Connect(CancelToken()).ok());
  for (int round = 0; round < 2; ++round) {
    server_.End();
    // The reader sees the end; the next call finds the connection closed and starts anew.
    auto res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
    // The call may race the reader noticing the end: then it fails once, and the next works.
    if (!res.ok())
      res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_TRUE(client->tools_changed()) << "a new process may offer other tools";
  }
  EXPECT_EQ(client->restarts(), 2);
  server_.End();
  Result<Json::Value> res = MakeError(ErrorCode::kMcpServer, "");
  for (int i = 0; i < 3; ++i)
    res = client->CallTool("t", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message.find("restarted 2 times"), std::string::npos)
      << res.error().message;
  EXPECT_EQ(server_.opens, 3);
}

TEST_F(McpClientTest, ConnectTimesOutOnASilentServerAndCanBeCancelled) {
  server_.On("initialize", [](FakeServer&, const Json::Value&) {});  // never answers
  ClientOptions o;
  o.connect_timeout_ms = 50;
  auto client = Make(o);
  Status st = client->Connect(CancelToken());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kTimeout);

  o.connect_timeout_ms = 60000;
  auto other = Make(o);
  CancelSource cancel;
  cancel.Cancel();
  st = other->Connect(cancel.token());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace lousho::agent::mcp

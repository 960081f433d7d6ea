// Loopback tests of the HTTP providers against a scripted SSE server on 127.0.0.1: streaming,
// request bodies, error mapping, retry, timeouts, disconnects and cancellation.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "agent/providers/factory.h"
#include "config/model_catalog.h"
#include "support/http/http_client.h"
#include "support/http/provider_errors.h"
#include "support/http/sse_parser.h"
#include "support/json_util.h"
#include "tests/providers/loopback_server.h"

namespace lousho::agent {
namespace {

using testing::LoopbackServer;
using testing::Step;
using Clock = std::chrono::steady_clock;

long long MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

std::string Data(const std::string& json) { return "data: " + json + "\n\n"; }
std::string TextChunk(const std::string& text) {
  return Data(R"({"choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})");
}
const std::string kFinishStop =
    Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})");
const std::string kUsage =
    Data(R"({"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}})");
const std::string kDone = "data: [DONE]\n\n";

std::string Ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

GetEnvFn Env(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Settings pointing a built-in provider at the loopback server, with fast retries.
config::ProviderSettings Settings(const char* builtin, const LoopbackServer& server,
                                  const std::string& path_prefix) {
  config::ProviderSettings s = *config::FindBuiltinProvider(builtin);
  s.base_url = server.url(path_prefix);
  s.retry_base_ms = 10;
  s.max_retries = 2;
  s.idle_timeout_s = 5;
  s.connect_timeout_s = 2;
  return s;
}

std::shared_ptr<Provider> Make(const config::ProviderSettings& s, const std::string& model) {
  auto p = MakeHttpProvider(
      s, model, Env({{"OPENAI_API_KEY", "sk-test"}, {"ANTHROPIC_API_KEY", "sk-ant-test"}}));
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().ToString());
  return p.ok() ? *p : nullptr;
}

// The one-message conversation every request here sends (the request's span points at it).
const std::vector<Message>& HelloHistory() {
  static const std::vector<Message> history = [] {
    Message u;
    u.content = {ContentBlock::Text("say hello")};
    return std::vector<Message>{u};
  }();
  return history;
}

ModelRequest Hello(const std::string& model) {
  ModelRequest r;
  r.model = model;
  r.system = "Be brief.";
  r.messages = HelloHistory();
  return r;
}

struct Collected {
  std::vector<StreamDelta> deltas;
  std::string text;
  std::vector<RetryNotice> retries;
  std::vector<std::pair<bool, std::string>> retry_ends;
};

Result<ModelResponse> StreamTo(Provider& p, const ModelRequest& r, Collected* c,
                               const CancelToken& cancel = {}) {
  RetryHooks hooks;
  hooks.on_retry_start = [c](const RetryNotice& n) { c->retries.push_back(n); };
  hooks.on_retry_end = [c](bool ok, int, const std::string& e) {
    c->retry_ends.push_back({ok, e});
  };
  return p.Stream(
      r,
      [c](const StreamDelta& d) {
        c->deltas.push_back(d);
        if (d.kind == DeltaKind::kText) c->text += d.text;
        return true;
      },
      cancel, hooks);
}

std::vector<Step> OpenAiHelloSteps() {
  return {Step::Write(TextChunk("Hello fr")),
          Step::Sleep(5),
          Step::Write(TextChunk("om the m")),
          Step::Write(TextChunk("ock!")),
          Step::Write(kFinishStop),
          Step::Write(kUsage),
          Step::Write(kDone)};
}

TEST(HttpClientTest, ParseBaseUrlSplitsOriginAndPrefix) {
  auto u = ParseBaseUrl("https://api.openai.com/v1/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->Origin(), "https://api.openai.com:443");
  EXPECT_EQ(u->path_prefix, "/v1");
  auto o = ParseBaseUrl("http://127.0.0.1:11434/v1");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->port, 11434);
  auto r = ParseBaseUrl("https://openrouter.ai/api/v1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path_prefix, "/api/v1");
  auto a = ParseBaseUrl("https://api.anthropic.com");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->path_prefix, "");
  EXPECT_FALSE(ParseBaseUrl("api.openai.com/v1").ok());
  EXPECT_FALSE(ParseBaseUrl("ftp://x").ok());
  EXPECT_FALSE(ParseBaseUrl("http://host:99999").ok());
  EXPECT_EQ(ParseBaseUrl("http://:80").error().code, kProviderConfig);
}

TEST(HttpClientTest, HttpsVerifiesAndFailsAgainstAPlainServer) {
  // A TLS client (verification on) talking to a plain-HTTP port fails in the handshake: a
  // connect failure, never a silent downgrade.
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    LoopbackServer::Json(res, 200, "{}");
  });
  auto base = ParseBaseUrl("https://127.0.0.1:" + std::to_string(server.port()) + "/v1");
  ASSERT_TRUE(base.ok());
  HttpOptions o;
  o.connect_timeout_s = 2;
  o.idle_timeout_s = 2;
  HttpClient client(*base, o);
  auto r = client.PostStream(
      HttpPostRequest{"/v1/x", {}, "{}"}, [](std::string_view, const MoreReady&) { return true; },
      CancelToken{});
  EXPECT_EQ(r.outcome, HttpOutcome::kConnectFailed) << r.transport_error;
  EXPECT_EQ(r.status, 0);
}

TEST(HttpClientTest, AlreadyCancelledSendsNothing) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    LoopbackServer::Json(res, 200, "{}");
  });
  HttpClient client(*ParseBaseUrl(server.url()), HttpOptions{});
  CancelSource source;
  source.Cancel();
  auto r = client.PostStream(
      HttpPostRequest{"/x", {}, "{}"}, [](std::string_view, const MoreReady&) { return true; },
      source.token());
  EXPECT_EQ(r.outcome, HttpOutcome::kCancelled);
  EXPECT_EQ(server.request_count(), 0);
}

TEST(HttpProviderTest, OpenAiStreamsTextUsageAndCost) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, OpenAiHelloSteps());
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(c.text, "Hello from the mock!");
  EXPECT_EQ(r->message.TextContent(), "Hello from the mock!");
  EXPECT_EQ(r->message.role, Role::kAssistant);
  EXPECT_EQ(r->message.stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(r->message.usage().input, 11);
  EXPECT_EQ(r->message.usage().output, 7);
  EXPECT_DOUBLE_EQ(r->message.usage().cost, (11 * 2.5 + 7 * 10.0) / 1e6);
  EXPECT_EQ(r->message.provider(), "openai");
  EXPECT_EQ(r->message.model(), "gpt-4o");
  EXPECT_TRUE(p->SupportsImages());
  ASSERT_EQ(server.request_count(), 1);
  auto req = server.request(0);
  EXPECT_EQ(req.path, "/v1/chat/completions");
  EXPECT_EQ(req.Header("Authorization"), "Bearer sk-test");
  EXPECT_EQ(req.Header("Accept"), "text/event-stream");
  auto body = ParseJson(req.body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["model"].asString(), "gpt-4o");
  EXPECT_EQ((*body)["messages"][0]["role"].asString(), "system");
  EXPECT_EQ((*body)["messages"][1]["content"].asString(), "say hello");
  EXPECT_TRUE((*body)["stream_options"]["include_usage"].asBool());
}

TEST(HttpProviderTest, OpenAiToolCallRoundTripSendsWhatWeExpect) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      server.Stream(
          res,
          {Step::Write(Data(
               R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc123","type":"function","function":{"name":"read_file","arguments":""}}]}}]})")),
           Step::Write(Data(
               R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"src/ma"}}]}}]})")),
           Step::Write(Data(
               R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"in.cpp\"}"}}]}}]})")),
           Step::Write(
               Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})")),
           Step::Write(kDone)});
    } else {
      server.Stream(res, OpenAiHelloSteps());
    }
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o-mini");
  ModelRequest req = Hello("gpt-4o-mini");
  ToolSchema tool;
  tool.name = "read_file";
  tool.description = "Read a file";
  tool.parameters["type"] = "object";
  tool.parameters["properties"]["path"]["type"] = "string";
  req.tools = {tool};
  Collected c1;
  auto r1 = StreamTo(*p, req, &c1);
  ASSERT_TRUE(r1.ok()) << r1.error().ToString();
  EXPECT_EQ(r1->message.stop_reason, StopReason::kToolUse);
  ASSERT_EQ(r1->message.content.size(), 1u);
  EXPECT_EQ(r1->message.content[0].arguments()["path"].asString(), "src/main.cpp");
  // Start, the arguments (two fragments, or one when both events came in one socket read and
  // were merged), end.
  ASSERT_GE(c1.deltas.size(), 3u);
  EXPECT_EQ(c1.deltas.front().kind, DeltaKind::kToolCallStart);
  EXPECT_EQ(c1.deltas.back().kind, DeltaKind::kToolCallEnd);
  std::string args;
  for (size_t i = 1; i + 1 < c1.deltas.size(); ++i) {
    EXPECT_EQ(c1.deltas[i].kind, DeltaKind::kToolCallArgs) << i;
    args += c1.deltas[i].text;
  }
  EXPECT_EQ(args, R"({"path":"src/main.cpp"})");

  std::vector<Message> history(req.messages.begin(), req.messages.end());
  history.push_back(r1->message);
  Message result;
  result.role = Role::kToolResult;
  result.tool_call_id = "call_abc123";
  result.tool_name = "read_file";
  result.content = {ContentBlock::Text("int main(){}")};
  history.push_back(result);
  req.messages = history;
  Collected c2;
  auto r2 = StreamTo(*p, req, &c2);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(server.request_count(), 2);
  auto body = ParseJson(server.request(1).body);
  ASSERT_TRUE(body.ok());
  const Json::Value& m = (*body)["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[2]["role"].asString(), "assistant");
  EXPECT_TRUE(m[2]["content"].isNull());
  EXPECT_EQ(m[2]["tool_calls"][0]["id"].asString(), "call_abc123");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"].asString(), "read_file");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"].asString(),
            R"({"path":"src/main.cpp"})");
  EXPECT_EQ(m[3]["role"].asString(), "tool");
  EXPECT_EQ(m[3]["tool_call_id"].asString(), "call_abc123");
  EXPECT_EQ(m[3]["content"].asString(), "int main(){}");
  EXPECT_EQ((*body)["tools"][0]["function"]["name"].asString(), "read_file");
}

std::vector<Step> AnthropicHelloSteps(bool with_ping) {
  std::vector<Step> steps = {Step::Write(Ev(
      "message_start",
      R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-haiku-4-5","usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0,"output_tokens":1}}})"))};
  if (with_ping) steps.push_back(Step::Write(Ev("ping", R"({"type": "ping"})")));
  steps.push_back(Step::Write(
      Ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})")));
  steps.push_back(Step::Write(Ev(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}})")));
  if (with_ping) steps.push_back(Step::Write(Ev("ping", R"({"type": "ping"})")));
  steps.push_back(Step::Write(Ev(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there."}})")));
  steps.push_back(
      Step::Write(Ev("content_block_stop", R"({"type":"content_block_stop","index":0})")));
  steps.push_back(Step::Write(Ev(
      "message_delta",
      R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}})")));
  steps.push_back(Step::Write(Ev("message_stop", R"({"type":"message_stop"})")));
  return steps;
}

TEST(HttpProviderTest, AnthropicStreamsWithPingsAndSendsItsHeaders) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, AnthropicHelloSteps(true));
  });
  auto p = Make(Settings("anthropic", server, ""), "claude-haiku-4-5");
  Collected c;
  auto r = StreamTo(*p, Hello("claude-haiku-4-5"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(c.text, "Hi there.");
  EXPECT_EQ(r->message.stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(r->message.usage().input, 100);
  EXPECT_EQ(r->message.usage().cache_read, 1000);
  EXPECT_EQ(r->message.usage().output, 20);
  EXPECT_DOUBLE_EQ(r->message.usage().cost, (100 * 1.0 + 1000 * 0.1 + 20 * 5.0) / 1e6);
  auto req = server.request(0);
  EXPECT_EQ(req.path, "/v1/messages");
  EXPECT_EQ(req.Header("x-api-key"), "sk-ant-test");
  EXPECT_EQ(req.Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(req.Header("Authorization"), "");
  auto body = ParseJson(req.body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["max_tokens"].asInt(), 64000);
  EXPECT_EQ((*body)["messages"][0]["content"][0]["text"].asString(), "say hello");
}

TEST(HttpProviderTest, AnthropicBearerAuthFromSettings) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, AnthropicHelloSteps(false));
  });
  auto s = Settings("anthropic", server, "");
  s.auth = "bearer";
  auto p = Make(s, "claude-sonnet-4-5");
  Collected c;
  ASSERT_TRUE(StreamTo(*p, Hello("claude-sonnet-4-5"), &c).ok());
  EXPECT_EQ(server.request(0).Header("Authorization"), "Bearer sk-ant-test");
  EXPECT_EQ(server.request(0).Header("x-api-key"), "");
}

TEST(HttpProviderTest, MissingKeyFailsBeforeAnyRequest) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, OpenAiHelloSteps());
  });
  auto p = MakeHttpProvider(Settings("openai", server, "/v1"), "gpt-4o", Env({}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, kProviderAuth);
  EXPECT_NE(p.error().message.find("OPENAI_API_KEY is not set"), std::string::npos);
  EXPECT_EQ(server.request_count(), 0);
  // A local server needs no key, and the base URL variable overrides the settings.
  auto s = *config::FindBuiltinProvider("ollama");
  auto local = MakeHttpProvider(s, "qwen3:8b", Env({{"OLLAMA_BASE_URL", server.url("/v1")}}));
  ASSERT_TRUE(local.ok());
  Collected c;
  auto r = StreamTo(**local, Hello("qwen3:8b"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(server.request(0).Header("Authorization"), "");
  EXPECT_EQ(r->message.usage().cost, 0);  // unknown model: prices 0
  EXPECT_FALSE((*local)->SupportsImages());
}

TEST(HttpProviderTest, AuthAndNotFoundAreNotRetried) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      LoopbackServer::Json(
          res, 401,
          R"({"error":{"message":"Incorrect API key provided: sk-te***","type":"invalid_request_error","code":"invalid_api_key"}})");
    } else {
      LoopbackServer::Json(
          res, 404,
          R"({"error":{"message":"The model `nope` does not exist","type":"invalid_request_error","code":"model_not_found"}})");
    }
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderAuth);
  EXPECT_EQ(r.error().message, "HTTP 401: Incorrect API key provided: sk-te***");
  EXPECT_EQ(server.request_count(), 1);
  auto r2 = StreamTo(*p, Hello("nope"), &c);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, kProviderModelNotFound);
  EXPECT_NE(r2.error().message.find("does not exist"), std::string::npos);
  EXPECT_EQ(server.request_count(), 2);
  EXPECT_TRUE(c.retries.empty());
}

TEST(HttpProviderTest, RateLimitHonoursRetryAfterThenSucceeds) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      res.set_header("Retry-After", "1");
      LoopbackServer::Json(
          res, 429,
          R"({"error":{"message":"Rate limit exceeded","type":"rate_limit_error","code":"rate_limit_exceeded"}})");
    } else {
      server.Stream(res, OpenAiHelloSteps());
    }
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto start = Clock::now();
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_GE(MsSince(start), 950);  // waited as asked, not the 10 ms backoff
  EXPECT_EQ(c.text, "Hello from the mock!");
  EXPECT_EQ(server.request_count(), 2);
  ASSERT_EQ(c.retries.size(), 1u);
  EXPECT_EQ(c.retries[0].attempt, 1);
  EXPECT_EQ(c.retries[0].max_attempts, 2);
  EXPECT_EQ(c.retries[0].delay_ms, 1000);
  EXPECT_NE(c.retries[0].error_message.find("Rate limit exceeded"), std::string::npos);
  ASSERT_EQ(c.retry_ends.size(), 1u);
  EXPECT_TRUE(c.retry_ends[0].first);
}

TEST(HttpProviderTest, ServerErrorsRetriedUntilTheBudgetIsSpent) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    LoopbackServer::Json(
        res, 500, R"({"error":{"message":"The server had an error","type":"server_error"}})");
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderUnavailable);
  EXPECT_EQ(r.error().message, "HTTP 500: The server had an error");
  EXPECT_EQ(server.request_count(), 3);  // first attempt + max_retries 2
  EXPECT_EQ(c.retries.size(), 2u);
  ASSERT_EQ(c.retry_ends.size(), 1u);
  EXPECT_FALSE(c.retry_ends[0].first);
}

TEST(HttpProviderTest, AnthropicOverloaded529ThenSuccess) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      LoopbackServer::Json(
          res, 529,
          R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    } else {
      server.Stream(res, AnthropicHelloSteps(false));
    }
  });
  auto p = Make(Settings("anthropic", server, ""), "claude-sonnet-4-5");
  Collected c;
  auto r = StreamTo(*p, Hello("claude-sonnet-4-5"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(server.request_count(), 2);
  ASSERT_EQ(c.retries.size(), 1u);
  EXPECT_NE(c.retries[0].error_message.find("Overloaded"), std::string::npos);
}

TEST(HttpProviderTest, RetryAfterLongerThanMaxDelayFailsAtOnce) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_header("Retry-After", "120");
    LoopbackServer::Json(res, 429, R"({"error":{"message":"slow down"}})");
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderRateLimited);
  EXPECT_EQ(r.error().retry_after_ms, 120000);
  EXPECT_EQ(server.request_count(), 1);
}

TEST(HttpProviderTest, AnthropicErrorEventBeforeOutputIsRetriedAfterOutputIsNot) {
  auto overloaded =
      Ev("error",
         R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})");
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    auto hello = AnthropicHelloSteps(true);
    if (n == 0) {
      server.Stream(res, {hello[0], hello[1], Step::Write(overloaded)});
    } else if (n == 1) {
      server.Stream(res, hello);
    } else {
      // Output first, then the error: nothing can be retried once text was delivered.
      server.Stream(res, {hello[0], hello[2], hello[3], Step::Write(overloaded)});
    }
  });
  auto p = Make(Settings("anthropic", server, ""), "claude-sonnet-4-5");
  Collected c;
  auto r = StreamTo(*p, Hello("claude-sonnet-4-5"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(c.text, "Hi there.");
  EXPECT_EQ(server.request_count(), 2);
  Collected c2;
  auto r2 = StreamTo(*p, Hello("claude-sonnet-4-5"), &c2);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, kProviderUnavailable);
  EXPECT_NE(r2.error().message.find("Overloaded"), std::string::npos);
  EXPECT_EQ(c2.text, "Hi ");
  EXPECT_EQ(server.request_count(), 3);
  EXPECT_TRUE(c2.retries.empty());
}

TEST(HttpProviderTest, IdleStallTimesOut) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res,
                  {Step::Write(": keep-alive\n\n"), Step::Write(TextChunk("Hel")), Step::Stall()});
  });
  auto s = Settings("openai", server, "/v1");
  s.idle_timeout_s = 1;
  auto p = Make(s, "gpt-4o");
  Collected c;
  auto start = Clock::now();
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderTimeout);
  EXPECT_EQ(c.text, "Hel");
  EXPECT_LT(MsSince(start), 3000);
  EXPECT_EQ(server.request_count(), 1);
}

TEST(HttpProviderTest, DisconnectMidStream) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      server.Stream(res, {Step::Sleep(20), Step::Drop()});  // before any output: retried
    } else if (n == 1) {
      server.Stream(res, OpenAiHelloSteps());
    } else {
      server.Stream(res, {Step::Write(TextChunk("partial")), Step::Sleep(20), Step::Drop()});
    }
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(server.request_count(), 2);
  Collected c2;
  auto r2 = StreamTo(*p, Hello("gpt-4o"), &c2);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, kProviderUnavailable);
  EXPECT_EQ(c2.text, "partial");
  EXPECT_EQ(server.request_count(), 3);  // output was delivered: no retry
}

TEST(HttpProviderTest, CleanEndWithoutDoneOrFinishIsBadResponse) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, {Step::Write(TextChunk("Hello"))});
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderBadResponse);
  EXPECT_EQ(server.request_count(), 1);
}

// Numbers a decoder cannot accept (out of range, wrong type, nesting jsoncpp refuses) fail the
// request at once as a bad response: one request, no retry, never "connection lost".
TEST(HttpProviderTest, MalformedNumbersFailOnceAsBadResponse) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  struct Case {
    const char* builtin;
    const char* prefix;
    const char* model;
    std::string stream;
  } cases[] = {
      {"openai", "/v1", "gpt-4o",
       Data(R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":5000000000,"id":"c",)"
            R"("function":{"name":"f","arguments":"{}"}}]}}]})") +
           kDone},
      {"openai", "/v1", "gpt-4o",
       Data(R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1e30,"id":"c"}]}}]})") +
           kDone},
      {"openai", "/v1", "gpt-4o",
       Data(R"({"choices":[],"usage":{"prompt_tokens":18446744073709551615}})") + kDone},
      {"openai", "/v1", "gpt-4o",
       Data(R"({"choices":[],"usage":{"completion_tokens":99999999999999999999}})") + kDone},
      {"openai", "/v1", "gpt-4o", Data(R"({"choices":[{"index":-1,"delta":{}}]})") + kDone},
      {"openai", "/v1", "gpt-4o", Data(R"({"choices":)" + deep + "}") + kDone},
      {"anthropic", "", "claude-haiku-4-5",
       Ev("message_start",
          R"({"type":"message_start","message":{"usage":{"input_tokens":18446744073709551615}}})") +
           Ev("message_stop", R"({"type":"message_stop"})")},
      {"anthropic", "", "claude-haiku-4-5",
       Ev("content_block_start",
          R"({"type":"content_block_start","index":1e30,"content_block":{"type":"text"}})") +
           Ev("message_stop", R"({"type":"message_stop"})")},
      {"anthropic", "", "claude-haiku-4-5",
       Ev("content_block_start",
          R"({"type":"content_block_start","index":-7,"content_block":{"type":"text"}})") +
           Ev("message_stop", R"({"type":"message_stop"})")},
      {"anthropic", "", "claude-haiku-4-5",
       Ev("message_delta", R"({"type":"message_delta","usage":{"output_tokens":"many"}})") +
           Ev("message_stop", R"({"type":"message_stop"})")},
  };
  for (const Case& t : cases) {
    LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
      server.Stream(res, {Step::Write(t.stream)});
    });
    auto p = Make(Settings(t.builtin, server, t.prefix), t.model);
    Collected c;
    auto r = StreamTo(*p, Hello(t.model), &c);
    ASSERT_FALSE(r.ok()) << t.stream.substr(0, 200);
    EXPECT_EQ(r.error().code, kProviderBadResponse) << r.error().ToString();
    EXPECT_FALSE(r.error().retryable);
    EXPECT_EQ(r.error().message.find("connection lost"), std::string::npos) << r.error().message;
    EXPECT_EQ(server.request_count(), 1) << t.stream.substr(0, 200);
    EXPECT_TRUE(c.retries.empty());
    EXPECT_TRUE(c.deltas.empty());
  }
}

// A line longer than the SSE cap (16 MiB) ends the request as a bad response, without a retry.
TEST(HttpProviderTest, OverlongStreamLineFailsOnceAsBadResponse) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    std::vector<Step> steps = {Step::Write("data: ")};
    for (size_t sent = 0; sent <= kSseMaxLineBytes; sent += 1 << 20) {
      steps.push_back(Step::Write(std::string(1 << 20, 'x')));
    }
    steps.push_back(Step::Write("\n\n" + kDone));
    server.Stream(res, std::move(steps));
  });
  auto s = Settings("openai", server, "/v1");
  // Building and sending 16 MiB takes the server seconds under ThreadSanitizer on a loaded
  // machine; this test is about the line cap, not the idle timeout.
  s.idle_timeout_s = 60;
  auto p = Make(s, "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderBadResponse);
  EXPECT_FALSE(r.error().retryable);
  EXPECT_NE(r.error().message.find("line over the limit of 16777216 bytes"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(server.request_count(), 1);
  EXPECT_TRUE(c.retries.empty());
}

TEST(HttpProviderTest, CancelMidStreamReturnsPartialPromptly) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, {Step::Write(TextChunk("Hello")), Step::Stall()});
  });
  auto s = Settings("openai", server, "/v1");
  s.idle_timeout_s = 30;
  auto p = Make(s, "gpt-4o");
  CancelSource source;
  Collected c;
  std::promise<void> first;
  auto start = Clock::now();
  std::thread canceller([&] {
    first.get_future().wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.Cancel();
  });
  bool signalled = false;
  auto r = p->Stream(
      Hello("gpt-4o"),
      [&](const StreamDelta& d) {
        c.text += d.text;
        if (!signalled) first.set_value();
        signalled = true;
        return true;
      },
      source.token(), RetryHooks{});
  canceller.join();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->message.stop_reason, StopReason::kCancelled);
  EXPECT_EQ(r->message.TextContent(), "Hello");
  EXPECT_LT(MsSince(start), 3000);
}

TEST(HttpProviderTest, CallbackReturningFalseStopsTheStream) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res,
                  {Step::Write(TextChunk("one")), Step::Write(TextChunk("two")), Step::Stall()});
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  // The first delta's callback refuses: "one" and "two" may arrive merged into that delta (both
  // are already read), and either way nothing more is asked of the callback.
  int calls = 0;
  auto r = p->Stream(
      Hello("gpt-4o"), [&](const StreamDelta&) { return ++calls < 1; }, CancelToken{},
      RetryHooks{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r->message.stop_reason, StopReason::kCancelled);
}

TEST(HttpProviderTest, CancelDuringRetryWaitReturnsAtOnce) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_header("Retry-After", "30");
    LoopbackServer::Json(res, 429, R"({"error":{"message":"Rate limit exceeded"}})");
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  CancelSource source;
  RetryHooks hooks;
  std::vector<long> delays;
  std::vector<bool> ends;
  // Joined below, before `source` goes out of scope: a detached thread could cancel a source
  // that no longer exists.
  std::thread canceller;
  hooks.on_retry_start = [&](const RetryNotice& n) {
    delays.push_back(n.delay_ms);
    if (canceller.joinable()) return;  // a second retry fails the size check below
    canceller = std::thread([&source] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      source.Cancel();
    });
  };
  hooks.on_retry_end = [&](bool ok, int, const std::string&) { ends.push_back(ok); };
  auto start = Clock::now();
  auto r = p->Stream(
      Hello("gpt-4o"), [](const StreamDelta&) { return true; }, source.token(), hooks);
  if (canceller.joinable()) canceller.join();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->message.stop_reason, StopReason::kCancelled);
  EXPECT_TRUE(r->message.content.empty());
  EXPECT_LT(MsSince(start), 3000);
  ASSERT_EQ(delays.size(), 1u);
  EXPECT_EQ(delays[0], 30000);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_FALSE(ends[0]);
  EXPECT_EQ(server.request_count(), 1);
}

TEST(HttpProviderTest, RetriesSwitchedOffFailAtOnce) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    LoopbackServer::Json(res, 500, R"({"error":{"message":"The server had an error"}})");
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  RetryHooks hooks;
  hooks.enabled = false;
  int starts = 0;
  hooks.on_retry_start = [&](const RetryNotice&) { ++starts; };
  auto r = p->Stream(
      Hello("gpt-4o"), [](const StreamDelta&) { return true; }, CancelToken(), hooks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "HTTP 500: The server had an error");
  EXPECT_EQ(server.request_count(), 1);
  EXPECT_EQ(starts, 0);
}

TEST(HttpProviderTest, AbortRetryEndsTheWaitWithTheFailure) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_header("Retry-After", "30");
    LoopbackServer::Json(res, 429, R"({"error":{"message":"Rate limit exceeded"}})");
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  CancelSource abort;
  RetryHooks hooks;
  hooks.abort = abort.token();
  std::vector<std::pair<bool, std::string>> ends;
  // The host aborts the retry as soon as it is announced (abort_retry).
  hooks.on_retry_start = [&](const RetryNotice&) { abort.Cancel(); };
  hooks.on_retry_end = [&](bool ok, int, const std::string& e) { ends.push_back({ok, e}); };
  auto r = p->Stream(
      Hello("gpt-4o"), [](const StreamDelta&) { return true; }, CancelToken(), hooks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kProviderRateLimited);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_FALSE(ends[0].first);
  EXPECT_EQ(ends[0].second, "Retry cancelled");
  EXPECT_EQ(server.request_count(), 1);
}

TEST(HttpProviderTest, ConnectionRefusedIsUnavailableAfterRetries) {
  int port;
  {
    LoopbackServer gone([](int, const httplib::Request&, httplib::Response&) {});
    port = gone.port();
  }
  auto s = *config::FindBuiltinProvider("openai");
  s.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  s.retry_base_ms = 10;
  s.max_retries = 1;
  auto p = Make(s, "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kProviderUnavailable);
  EXPECT_EQ(c.retries.size(), 1u);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

using testing::LoopbackServer;

// A model that streams faster than it is relayed: every event already read when the first is
// decoded is merged into as few deltas as the reads allow, the text intact.
TEST(HttpProviderMergeTest, DeltasAlreadyReadAreMerged) {
  std::string all;
  std::string expected;
  for (int i = 0; i < 400; ++i) {
    const std::string piece = "t" + std::to_string(i) + " ";
    expected += piece;
    all += TextChunk(piece);
  }
  all += kFinishStop + kUsage + kDone;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [&all](size_t, httplib::DataSink& sink) {
      sink.write(all.data(), all.size());  // every event in one write
      sink.done();
      return true;
    });
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  Collected c;
  auto r = StreamTo(*p, Hello("gpt-4o"), &c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(c.text, expected);
  EXPECT_EQ(r->message.TextContent(), expected);
  size_t text_deltas = 0;
  for (const auto& d : c.deltas) text_deltas += d.kind == DeltaKind::kText ? 1 : 0;
  // 400 events of ~60 bytes arrive in 4 KiB reads at most: far fewer deltas than events.
  EXPECT_GE(text_deltas, 1u);
  EXPECT_LE(text_deltas, 40u);
}

// A delta whose successor has not arrived is delivered at once: the server sends the second
// event only after the first reached the callback (bounded at 20 s so that a regression fails
// the test instead of hanging it).
TEST(HttpProviderMergeTest, NoDeltaWaitsForTheNextEvent) {
  std::mutex mu;
  std::condition_variable cv;
  bool first_seen = false;
  bool waited_out = false;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      const std::string a = TextChunk("A");
      sink.write(a.data(), a.size());
      {
        std::unique_lock<std::mutex> lock(mu);
        if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return first_seen; }))
          waited_out = true;
      }
      const std::string rest = TextChunk("B") + kFinishStop + kDone;
      sink.write(rest.data(), rest.size());
      sink.done();
      return true;
    });
  });
  auto p = Make(Settings("openai", server, "/v1"), "gpt-4o");
  std::vector<std::string> texts;
  auto r = p->Stream(
      Hello("gpt-4o"),
      [&](const StreamDelta& d) {
        if (d.kind != DeltaKind::kText) return true;
        texts.push_back(d.text);
        std::lock_guard<std::mutex> lock(mu);
        first_seen = true;
        cv.notify_all();
        return true;
      },
      CancelToken{}, RetryHooks{});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(waited_out);
  EXPECT_EQ(texts, (std::vector<std::string>{"A", "B"}));
}

}  // namespace
}  // namespace lousho::agent

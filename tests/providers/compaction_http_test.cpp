// A context overflow over real HTTP: the in-test server refuses the first request as too long
// (OpenAI's and Anthropic's error bodies), the session compacts once and sends the request again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "agent/providers/factory.h"
#include "agent/session.h"
#include "config/model_catalog.h"
#include "support/json_util.h"
#include "tests/providers/loopback_server.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;
using testing::LoopbackServer;
using testing::Step;

std::string Data(const std::string& json) { return "data: " + json + "\n\n"; }
std::string Ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

std::vector<Step> OpenAiSays(const std::string& text) {
  return {Step::Write(Data(R"({"choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})")),
          Step::Write(Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})")),
          Step::Write("data: [DONE]\n\n")};
}

std::vector<Step> AnthropicSays(const std::string& text) {
  return {
      Step::Write(Ev(
          "message_start",
          R"({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-haiku-4-5","usage":{"input_tokens":10,"output_tokens":1}}})")),
      Step::Write(Ev(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})")),
      Step::Write(
          Ev("content_block_delta",
             R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" +
                 text + R"("}})")),
      Step::Write(Ev("content_block_stop", R"({"type":"content_block_stop","index":0})")),
      Step::Write(Ev(
          "message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})")),
      Step::Write(Ev("message_stop", R"({"type":"message_stop"})"))};
}

struct Case {
  const char* provider;
  const char* model;
  const char* prefix;  // base URL path
  int status;
  const char* overflow_body;
  std::vector<Step> (*says)(const std::string&);
};

class OverflowOverHttpTest : public ::testing::TestWithParam<Case> {};

// The text of every message of a request body, in order (both wire formats).
std::vector<std::string> Texts(const Json::Value& body) {
  std::vector<std::string> out;
  for (const auto& m : body["messages"]) {
    if (m["content"].isString()) {
      out.push_back(m["content"].asString());
    } else {
      std::string t;
      for (const auto& b : m["content"]) t += b["text"].asString();
      out.push_back(t);
    }
  }
  return out;
}

TEST_P(OverflowOverHttpTest, CompactsOnceAndSendsTheRequestAgain) {
  const Case& c = GetParam();
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) return LoopbackServer::Json(res, c.status, c.overflow_body);
    server.Stream(res, c.says(n == 1 ? "SUMMARY of the first questions" : "Fine."));
  });
  config::ProviderSettings settings = *config::FindBuiltinProvider(c.provider);
  settings.base_url = server.url(c.prefix);
  settings.max_retries = 0;
  settings.idle_timeout_s = 10;
  auto provider = MakeHttpProvider(settings, c.model,
                                   [&](const std::string& name) -> std::optional<std::string> {
                                     if (name == settings.api_key_env) return "k";
                                     return std::nullopt;
                                   });
  ASSERT_TRUE(provider.ok()) << provider.error().message;

  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider_name = c.provider;
  agent->model.model_id = c.model;
  agent->model.provider = *provider;
  agent->compaction.keep_recent_tokens = 10;
  const fs::path dir = fs::temp_directory_path() / ("lousho-overflow-" + std::to_string(getpid()));
  fs::create_directories(dir);
  SessionOptions o;
  o.id = "s";
  o.cwd = dir;
  std::vector<std::string> events;
  o.sink = [&events](const Event& e) {
    if (const auto* s = std::get_if<event::AutoCompactionStart>(&e)) events.push_back(s->reason);
    if (const auto* end = std::get_if<event::AutoCompactionEnd>(&e))
      events.push_back(end->error.empty() ? "ok" : end->error);
  };
  std::string parent;
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    Entry u;
    u.id = "u" + n;
    u.parent_id = parent;
    u.message.role = Role::kUser;
    u.message.content = {ContentBlock::Text("question " + n)};
    Entry a = u;
    a.id = "a" + n;
    a.parent_id = u.id;
    a.message.role = Role::kAssistant;
    a.message.content = {ContentBlock::Text("answer " + n)};
    o.seed.push_back(u);
    o.seed.push_back(a);
    parent = a.id;
  }
  auto session = Session::Create(agent, std::move(o));
  ASSERT_TRUE(session.ok());
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE((*session)
                  ->Prompt({ContentBlock::Text("question 3")},
                           [&p](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  auto r = p.get_future().get();
  (*session)->WaitIdle();
  fs::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(events, (std::vector<std::string>{"overflow", "ok"}));
  EXPECT_EQ((*session)->transcript().Messages().back().TextContent(), "Fine.");

  ASSERT_EQ(server.request_count(), 3);
  auto first = ParseJson(server.request(0).body);
  auto summary = ParseJson(server.request(1).body);
  auto retry = ParseJson(server.request(2).body);
  ASSERT_TRUE(first.ok() && summary.ok() && retry.ok());
  // The refused request held everything; the summary request, the older turns and no tools;
  // the retry, the summary and the kept turn.
  const auto first_texts = Texts(*first);
  EXPECT_NE(std::find(first_texts.begin(), first_texts.end(), "question 0"), first_texts.end());
  EXPECT_FALSE((*summary).isMember("tools"));
  const auto summary_texts = Texts(*summary);
  ASSERT_FALSE(summary_texts.empty());
  EXPECT_NE(summary_texts.back().find("question 0"), std::string::npos);
  const auto retried = Texts(*retry);
  ASSERT_GE(retried.size(), 2u);
  EXPECT_NE(retried.size(), first_texts.size());
  bool has_summary = false;
  for (const auto& t : retried) has_summary |= t.find("SUMMARY of the first") != std::string::npos;
  EXPECT_TRUE(has_summary);
  for (const auto& t : retried) EXPECT_EQ(t.find("question 0"), std::string::npos) << t;
  EXPECT_EQ(retried.back(), "question 3");
}

INSTANTIATE_TEST_SUITE_P(
    Providers, OverflowOverHttpTest,
    ::testing::Values(
        Case{
            "openai", "gpt-4o", "/v1", 400,
            R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
            &OpenAiSays},
        Case{
            "anthropic", "claude-haiku-4-5", "", 400,
            R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213000 tokens > 200000 maximum"}})",
            &AnthropicSays}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.provider); });

}  // namespace
}  // namespace lousho::agent

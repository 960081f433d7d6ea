// Anthropic's `pause_turn`: the API pauses a long turn of its own tools (a web search) and the
// client is to send the conversation back as it is. Over real HTTP, the engine asks again with
// the paused message last, the model's next reply ends the prompt, and the history keeps both
// messages in a form that reads back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "agent/history.h"
#include "agent/providers/factory.h"
#include "agent/session.h"
#include "agent/session_store.h"
#include "config/model_catalog.h"
#include "support/json_util.h"
#include "tests/providers/loopback_server.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;
using testing::LoopbackServer;
using testing::Step;

Step Ev(const std::string& name, const std::string& data) {
  return Step::Write("event: " + name + "\ndata: " + data + "\n\n");
}

// A search the API paused after (its call and result, no answer yet).
std::vector<Step> PausedSearch() {
  return {
      Ev("message_start",
         R"({"type":"message_start","message":{"id":"m1","usage":{"input_tokens":9,"output_tokens":1}}})"),
      Ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"lousho"}}})"),
      Ev("content_block_stop", R"({"type":"content_block_stop","index":0})"),
      Ev("content_block_start",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a.example/","title":"A","encrypted_content":"EqA"}]}})"),
      Ev("content_block_stop", R"({"type":"content_block_stop","index":1})"),
      Ev("message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":20}})"),
      Ev("message_stop", R"({"type":"message_stop"})")};
}

std::vector<Step> Answer(const std::string& text) {
  return {
      Ev("message_start",
         R"({"type":"message_start","message":{"id":"m2","usage":{"input_tokens":30,"output_tokens":1}}})"),
      Ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
      Ev("content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + text +
             R"("}})"),
      Ev("content_block_stop", R"({"type":"content_block_stop","index":0})"),
      Ev("message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})"),
      Ev("message_stop", R"({"type":"message_stop"})")};
}

TEST(PauseTurnTest, TheEngineAsksAgainWithThePausedMessageAndTheTurnEndsOnce) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, n == 0 ? PausedSearch() : Answer("Found it."));
  });
  config::ProviderSettings settings = *config::FindBuiltinProvider("anthropic");
  settings.base_url = server.url();
  settings.max_retries = 0;
  settings.idle_timeout_s = 10;
  auto provider = MakeHttpProvider(settings, "claude-sonnet-4-5",
                                   [&](const std::string& name) -> std::optional<std::string> {
                                     if (name == settings.api_key_env) return "k";
                                     return std::nullopt;
                                   });
  ASSERT_TRUE(provider.ok()) << provider.error().message;
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider_name = "anthropic";
  agent->model.model_id = "claude-sonnet-4-5";
  agent->model.provider = *provider;
  agent->web_search.enabled = true;
  const fs::path dir = fs::temp_directory_path() / ("lousho-pause-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  SessionOptions o;
  o.id = "s";
  o.cwd = dir;
  SessionHeader header;
  header.id = "s";
  header.timestamp_ms = 1764567890123;
  header.cwd = dir.string();
  o.session_file = (dir / "s.jsonl").string();
  o.recorder = SessionWriter::ForNew(dir / "s.jsonl", header);
  auto session = Session::Create(agent, std::move(o));
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE((*session)
                  ->Prompt({ContentBlock::Text("search for lousho")},
                           [&p](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  auto r = p.get_future().get();
  (*session)->WaitIdle();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  ASSERT_EQ(server.request_count(), 2);

  // The second request ends with the paused message, its call and result as they came.
  auto again = ParseJson(server.request(1).body);
  ASSERT_TRUE(again.ok());
  const Json::Value& messages = (*again)["messages"];
  ASSERT_EQ(messages.size(), 2u);
  const Json::Value& paused = messages[1];
  EXPECT_EQ(paused["role"].asString(), "assistant");
  ASSERT_EQ(paused["content"].size(), 2u);
  EXPECT_EQ(paused["content"][0]["type"].asString(), "server_tool_use");
  EXPECT_EQ(paused["content"][1]["type"].asString(), "web_search_tool_result");

  // The history: the prompt, the paused message, the answer; the same read back from the file.
  const auto live = (*session)->transcript().Messages();
  ASSERT_EQ(live.size(), 3u);
  EXPECT_EQ(live[2].TextContent(), "Found it.");
  session->reset();
  auto read = ReadSessionFile(dir / "s.jsonl");
  ASSERT_TRUE(read.ok()) << read.error().message;
  History history;
  ASSERT_TRUE(history.Seed(read->entries).ok());
  ASSERT_EQ(history.messages().size(), 3u);
  // One block holds the provider-run call and its result (the body writes it as two).
  ASSERT_EQ(history.messages()[1].content.size(), 1u);
  EXPECT_EQ(history.messages()[1].content[0].type, BlockType::kServerTool);
  EXPECT_TRUE(history.messages()[1].content[0].server.has_value());
  EXPECT_EQ(history.messages()[1].stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(history.messages()[2].TextContent(), "Found it.");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lousho::agent

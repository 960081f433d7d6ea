// The provider's own web search (`webSearch:`): offered in the request of the APIs that have one,
// decoded from their streams as a call the provider ran (shown as a tool call, never run by the
// engine), kept in the history and sent back as it came to the API that ran it.
#include <gtest/gtest.h>

#include "agent/history.h"
#include "agent/providers/anthropic_messages.h"
#include "agent/providers/openai_responses.h"
#include "core/server_tool.h"
#include "support/json_util.h"
#include "tests/providers/decoder_test_util.h"

namespace lousho::agent {
namespace {

using testing::DeltaString;
using testing::ExpectSameAtEverySplit;
using testing::RunDecoder;

std::string Ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

// A search as the Messages API streams it: the call's input in pieces, the result block whole,
// then the answer.
std::string AnthropicSearch(const std::string& result_content) {
  return Ev("message_start",
            R"({"type":"message_start","message":{"id":"msg_ws","usage":{"input_tokens":9,"output_tokens":1}}})") +
         Ev("content_block_start",
            R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Let me look."}})") +
         Ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
         Ev("content_block_start",
            R"({"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}})") +
         Ev("content_block_delta",
            R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"lousho"}})") +
         Ev("content_block_delta",
            R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" acp\"}"}})") +
         Ev("content_block_stop", R"({"type":"content_block_stop","index":1})") +
         Ev("content_block_start",
            R"({"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":)" +
                result_content + "}}") +
         Ev("content_block_stop", R"({"type":"content_block_stop","index":2})") +
         Ev("content_block_start",
            R"({"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}})") +
         Ev("content_block_delta",
            R"({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Found it."}})") +
         Ev("content_block_stop", R"({"type":"content_block_stop","index":3})") +
         Ev("message_delta",
            R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":40,"server_tool_use":{"web_search_requests":1}}})") +
         Ev("message_stop", R"({"type":"message_stop"})");
}

const char* kTwoResults =
    R"([{"type":"web_search_result","url":"https://a.example/x","title":"A page","encrypted_content":"EqA","page_age":"1 day"},)"
    R"({"type":"web_search_result","url":"https://b.example/","title":"","encrypted_content":"EqB"}])";

TEST(WebSearchTest, AnthropicSearchIsAProviderRunCallWithItsResult) {
  AnthropicDecoder d;
  auto run = RunDecoder(d, AnthropicSearch(kTwoResults));
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_EQ(DeltaString(run.deltas),
            "T0:Let me look.|W1:srvtoolu_1/web_search:{\"query\": \"lousho acp\"}|Z1:srvtoolu_1|"
            "T2:Found it.|");
  ASSERT_EQ(run.message.content.size(), 3u);
  const ContentBlock& call = run.message.content[1];
  ASSERT_EQ(call.type, BlockType::kServerTool);
  EXPECT_EQ(call.id(), "srvtoolu_1");
  EXPECT_EQ(call.name(), "web_search");
  EXPECT_EQ(StringOr(call.arguments(), "query"), "lousho acp");
  ASSERT_TRUE(call.server.has_value());
  EXPECT_EQ(call.server->api, "anthropic-messages");
  EXPECT_FALSE(call.server->is_error);
  EXPECT_EQ(call.server->summary,
            "2 results:\n- A page — https://a.example/x\n- https://b.example/");
  EXPECT_EQ(StringOr(call.server->result, "type"), "web_search_tool_result");
  EXPECT_EQ(ServerToolTitle(call.name(), call.arguments()), "Web search: lousho acp");
  // The engine never runs it: the message asks for no tool.
  EXPECT_EQ(run.message.stop_reason, StopReason::kEndTurn);
}

TEST(WebSearchTest, AnthropicSearchDecodesTheSameAtEverySplit) {
  ExpectSameAtEverySplit(AnthropicSearch(kTwoResults),
                         [] { return std::make_unique<AnthropicDecoder>(); });
}

TEST(WebSearchTest, AFailedSearchIsShownAsFailed) {
  AnthropicDecoder d;
  auto run = RunDecoder(
      d, AnthropicSearch(
             R"({"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"})"));
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.message.content.size(), 3u);
  const ContentBlock& call = run.message.content[1];
  EXPECT_TRUE(call.server->is_error);
  EXPECT_EQ(call.server->summary, "The search failed (max_uses_exceeded)");
}

TEST(WebSearchTest, ACallCutBeforeItsResultIsDropped) {
  std::string bytes = AnthropicSearch(kTwoResults);
  bytes = bytes.substr(0, bytes.find("event: content_block_start", bytes.find("srvtoolu_1")));
  AnthropicDecoder d;
  auto run = RunDecoder(d, bytes);
  ASSERT_TRUE(run.status.ok());
  for (const auto& b : run.message.content) EXPECT_NE(b.type, BlockType::kServerTool);
}

// The message of a search, as the decoder made it.
Message SearchMessage() {
  AnthropicDecoder d;
  return RunDecoder(d, AnthropicSearch(kTwoResults)).message;
}

ModelRequest SearchRequest(const std::vector<Message>* history) {
  ModelRequest r;
  r.model = "claude-sonnet-4-5";
  r.messages = *history;
  r.web_search.enabled = true;
  r.web_search.max_uses = 3;
  r.web_search.blocked_domains = {"spam.example"};
  return r;
}

TEST(WebSearchTest, AnthropicGetsTheToolAndItsOwnCallBackAsItCame) {
  Message user;
  user.content = {ContentBlock::Text("search it")};
  const std::vector<Message> history = {user, SearchMessage()};
  auto body = ParseJson(WriteAnthropicBody(SearchRequest(&history), AnthropicBodyOptions{}));
  ASSERT_TRUE(body.ok());
  const Json::Value& tools = MemberOrNull(*body, "tools");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(StringOr(tools[0], "type"), "web_search_20250305");
  EXPECT_EQ(StringOr(tools[0], "name"), "web_search");
  EXPECT_EQ(IntOr(tools[0], "max_uses", 0), 3);
  EXPECT_EQ(WriteJson(MemberOrNull(tools[0], "blocked_domains")), "[\"spam.example\"]");
  const Json::Value& said = MemberOrNull(MemberOrNull(*body, "messages")[1], "content");
  ASSERT_EQ(said.size(), 4u) << WriteJson(said);
  EXPECT_EQ(StringOr(said[1], "type"), "server_tool_use");
  EXPECT_EQ(StringOr(said[1], "id"), "srvtoolu_1");
  EXPECT_EQ(StringOr(MemberOrNull(said[1], "input"), "query"), "lousho acp");
  // The result block goes back byte for byte as the API sent it (its encrypted content too).
  EXPECT_EQ(said[2], history[1].content[1].server->result);
  EXPECT_EQ(StringOr(said[3], "text"), "Found it.");
}

TEST(WebSearchTest, OtherApisGetNoneOfAnotherApisCall) {
  Message user;
  user.content = {ContentBlock::Text("search it")};
  const std::vector<Message> history = {user, SearchMessage()};
  ModelRequest r = SearchRequest(&history);
  r.model = "gpt-5-codex";
  r.web_search.blocked_domains.clear();
  r.web_search.allowed_domains = {"docs.example"};
  auto body = ParseJson(WriteOpenAiResponsesBody(r, OpenAiResponsesBodyOptions{}));
  ASSERT_TRUE(body.ok());
  const std::string input = WriteJson(MemberOrNull(*body, "input"));
  EXPECT_EQ(input.find("srvtoolu_1"), std::string::npos) << input;
  EXPECT_NE(input.find("Found it."), std::string::npos) << input;
  const Json::Value& tools = MemberOrNull(*body, "tools");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(WriteJson(tools[0]),
            R"({"filters":{"allowed_domains":["docs.example"]},"type":"web_search"})");
}

TEST(WebSearchTest, NoToolWhenItIsOff) {
  Message user;
  user.content = {ContentBlock::Text("hi")};
  const std::vector<Message> history = {user};
  ModelRequest r = SearchRequest(&history);
  r.web_search.enabled = false;
  auto a = ParseJson(WriteAnthropicBody(r, AnthropicBodyOptions{}));
  auto o = ParseJson(WriteOpenAiResponsesBody(r, OpenAiResponsesBodyOptions{}));
  ASSERT_TRUE(a.ok() && o.ok());
  EXPECT_EQ(FindMember(*a, "tools"), nullptr);
  EXPECT_EQ(FindMember(*o, "tools"), nullptr);
}

std::string ResponsesSearch(const std::string& status) {
  auto ev = [](const std::string& data) { return "data: " + data + "\n\n"; };
  return ev(R"({"type":"response.created","sequence_number":0,"response":{"id":"r1","status":"in_progress","output":[]}})") +
         ev(R"({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}})") +
         ev(R"({"type":"response.web_search_call.searching","sequence_number":2,"output_index":0,"item_id":"ws_1"})") +
         ev(R"({"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":")" +
            status +
            R"(","action":{"type":"search","query":"acp registry","sources":[{"type":"url","url":"https://agentclientprotocol.com/"}]}}})") +
         ev(R"({"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}})") +
         ev(R"({"type":"response.output_text.delta","sequence_number":5,"output_index":1,"item_id":"msg_1","content_index":0,"delta":"Here."})") +
         ev(R"({"type":"response.completed","sequence_number":6,"response":{"id":"r1","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":3}}})");
}

TEST(WebSearchTest, ResponsesSearchIsAProviderRunCall) {
  OpenAiResponsesDecoder d;
  auto run = RunDecoder(d, ResponsesSearch("completed"));
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_EQ(DeltaString(run.deltas),
            "W0:ws_1/web_search:{\"query\":\"acp registry\"}|Z0:ws_1|T1:Here.|");
  ASSERT_EQ(run.message.content.size(), 2u);
  const ContentBlock& call = run.message.content[0];
  ASSERT_EQ(call.type, BlockType::kServerTool);
  EXPECT_EQ(call.server->api, "openai-responses");
  EXPECT_FALSE(call.server->is_error);
  EXPECT_EQ(call.server->summary, "1 source:\n- https://agentclientprotocol.com/");

  OpenAiResponsesDecoder failed;
  auto bad = RunDecoder(failed, ResponsesSearch("failed"));
  ASSERT_TRUE(bad.status.ok());
  EXPECT_TRUE(bad.message.content[0].server->is_error);
}

TEST(WebSearchTest, TheHistoryKeepsTheCallAndItsResult) {
  Entry e;
  e.id = "e1";
  e.message = SearchMessage();
  const std::string line = WriteJson(EntryToJson(e));
  Entry back;
  ASSERT_TRUE(DecodeEntryLine(line, "test", &back).ok()) << line;
  ASSERT_EQ(back.message.content.size(), 3u);
  const ContentBlock& was = e.message.content[1];
  const ContentBlock& call = back.message.content[1];
  ASSERT_EQ(call.type, BlockType::kServerTool);
  EXPECT_EQ(call.id(), was.id());
  EXPECT_EQ(call.name(), was.name());
  EXPECT_EQ(call.arguments(), was.arguments());
  EXPECT_EQ(call.server->api, was.server->api);
  EXPECT_EQ(call.server->summary, was.server->summary);
  EXPECT_EQ(call.server->result, was.server->result);
  EXPECT_EQ(call.server->is_error, was.server->is_error);
}

TEST(WebSearchTest, TheEngineShowsItAsAToolCall) {
  const Message m = SearchMessage();
  std::vector<std::string> seen;
  auto emit = [&](const Event& e) {
    if (const auto* s = std::get_if<event::ToolExecutionStart>(&e))
      seen.push_back("start " + s->call->id + " " + s->call->title);
    if (std::get_if<event::ToolExecutionUpdate>(&e)) seen.push_back("running");
    if (const auto* end = std::get_if<event::ToolExecutionEnd>(&e))
      seen.push_back(std::string("end ") + (end->is_error ? "failed " : "done ") +
                     end->output->content[0].text);
  };
  StreamDelta d;
  d.kind = DeltaKind::kServerToolStart;
  d.index = 1;
  EmitServerToolEvents(d, m, 1, emit);
  d.kind = DeltaKind::kServerToolEnd;
  EmitServerToolEvents(d, m, 1, emit);
  d.kind = DeltaKind::kText;  // not a provider-run call's
  EmitServerToolEvents(d, m, 1, emit);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], "start srvtoolu_1 Web search: lousho acp");
  EXPECT_EQ(seen[1], "running");
  EXPECT_EQ(seen[2], "end done 2 results:\n- A page — https://a.example/x\n- https://b.example/");
}

}  // namespace
}  // namespace lousho::agent

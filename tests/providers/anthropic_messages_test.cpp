// Tests of the Anthropic Messages request body and stream decoder on byte-exact captures.
#include "agent/providers/anthropic_messages.h"

#include <gtest/gtest.h>

#include <random>

#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "tests/providers/decoder_test_util.h"
#include "tests/providers/random_request.h"

namespace lousho::agent {
namespace {

using testing::DeltaString;
using testing::ExpectSameAtEverySplit;
using testing::RunDecoder;

std::string Ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

// Capture 2a of llm-wire.md (thinking, then text), exactly as aimock sent it.
std::string ThinkingCapture() {
  return Ev("message_start",
            "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_p515thGLzuwqwTXj\",\"type\":"
            "\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\","
            "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_"
            "tokens\":0}}}") +
         Ev("content_block_start",
            "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
            "\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_"
            "delta\",\"thinking\":\"User wants the answe\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_"
            "delta\",\"signature\":\"aimock-placeholder-signature\"}}") +
         Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}") +
         Ev("content_block_start",
            "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\","
            "\"text\":\"\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\","
            "\"text\":\"The answer is 42.\"}}") +
         Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}") +
         Ev("message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_"
            "sequence\":null},\"usage\":{\"output_tokens\":0}}") +
         Ev("message_stop", "{\"type\":\"message_stop\"}");
}

// Capture 2b (tool use deltas) wrapped in a message, with a ping and real-looking usage.
std::string ToolCapture() {
  return Ev("message_start",
            "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
            "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"usage\":{"
            "\"input_tokens\":120,\"cache_creation_input_tokens\":30,\"cache_read_input_"
            "tokens\":400,\"output_tokens\":1}}}") +
         "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n" +
         Ev("content_block_start",
            "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
            "\"text\":\"\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
            "\"text\":\"Let me read it.\"}}") +
         Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}") +
         Ev("content_block_start",
            "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_"
            "use\",\"id\":\"call_abc123\",\"name\":\"read_file\",\"input\":{}}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_"
            "delta\",\"partial_json\":\"\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_"
            "delta\",\"partial_json\":\"{\\\"path\\\":\\\"src/main.cp\"}}") +
         Ev("content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_"
            "delta\",\"partial_json\":\"p\\\",\\\"max_lines\\\":50}\"}}") +
         Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}") +
         Ev("message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_"
            "sequence\":null},\"usage\":{\"output_tokens\":25}}") +
         Ev("message_stop", "{\"type\":\"message_stop\"}");
}

std::unique_ptr<StreamDecoder> NewDecoder() { return std::make_unique<AnthropicDecoder>(); }

TEST(AnthropicDecoderTest, ThinkingThenText) {
  AnthropicDecoder d;
  auto run = RunDecoder(d, ThinkingCapture());
  ASSERT_TRUE(run.status.ok());
  EXPECT_TRUE(run.done);
  EXPECT_EQ(DeltaString(run.deltas), "R0:User wants the answe|T1:The answer is 42.|");
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_EQ(run.message.content[0].type, BlockType::kThinking);
  EXPECT_EQ(run.message.content[0].signature(), "aimock-placeholder-signature");
  EXPECT_EQ(run.message.content[1].text, "The answer is 42.");
  EXPECT_EQ(run.message.stop_reason, StopReason::kEndTurn);
}

TEST(AnthropicDecoderTest, ThinkingCaptureSameAtEverySplit) {
  ExpectSameAtEverySplit(ThinkingCapture(), NewDecoder);
}

TEST(AnthropicDecoderTest, ToolUseWithPingAndCumulativeUsage) {
  AnthropicDecoder d;
  auto run = RunDecoder(d, ToolCapture());
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(DeltaString(run.deltas),
            "T0:Let me read it.|S1:call_abc123/read_file|A1:{\"path\":\"src/main.cp|"
            "A1:p\",\"max_lines\":50}|E1:{\"max_lines\":50,\"path\":\"src/main.cpp\"}|");
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_EQ(run.message.content[1].arguments()["path"].asString(), "src/main.cpp");
  EXPECT_EQ(run.message.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(run.message.usage().input, 120);
  EXPECT_EQ(run.message.usage().cache_write, 30);
  EXPECT_EQ(run.message.usage().cache_read, 400);
  EXPECT_EQ(run.message.usage().output, 25);  // the last cumulative value, not a sum
}

TEST(AnthropicDecoderTest, ToolCaptureSameAtEverySplit) {
  ExpectSameAtEverySplit(ToolCapture(), NewDecoder);
}

TEST(AnthropicDecoderTest, StopReasonMapping) {
  for (auto [reason, expected] :
       std::vector<std::pair<std::string, StopReason>>{{"end_turn", StopReason::kEndTurn},
                                                       {"stop_sequence", StopReason::kEndTurn},
                                                       {"max_tokens", StopReason::kMaxTokens},
                                                       {"refusal", StopReason::kRefusal},
                                                       {"tool_use", StopReason::kToolUse}}) {
    AnthropicDecoder d;
    auto run = RunDecoder(d, Ev("message_delta",
                                "{\"type\":\"message_delta\",\"delta\":{\"stop_"
                                "reason\":\"" +
                                    reason + "\"}}") +
                                 Ev("message_stop", "{\"type\":\"message_stop\"}"));
    ASSERT_TRUE(run.status.ok());
    EXPECT_EQ(run.message.stop_reason, expected) << reason;
  }
}

TEST(AnthropicDecoderTest, ErrorEventOverloadedIsRetryableUnavailable) {
  AnthropicDecoder d;
  std::string capture = ThinkingCapture();
  auto run = RunDecoder(d, capture.substr(0, capture.find("\n\n") + 2) +
                               "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": "
                               "\"overloaded_error\", \"message\": \"Overloaded\"}}\n\n");
  ASSERT_FALSE(run.status.ok());
  EXPECT_EQ(run.status.error().code, kProviderUnavailable);
  EXPECT_TRUE(run.status.error().retryable);
  EXPECT_NE(run.status.error().message.find("Overloaded"), std::string::npos);
}

TEST(AnthropicDecoderTest, RedactedThinkingAndUnknownBlocksKeptOrSkipped) {
  std::string bytes =
      Ev("content_block_start",
         "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_"
         "thinking\",\"data\":\"EmwKAhgB\"}}") +
      Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}") +
      Ev("content_block_start",
         "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_"
         "tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\"}}") +
      Ev("content_block_delta",
         "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
         "\"partial_json\":\"{}\"}}") +
      Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}") +
      Ev("content_block_start",
         "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\","
         "\"text\":\"\"}}") +
      Ev("content_block_delta",
         "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\","
         "\"text\":\"ok\"}}") +
      Ev("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}") +
      Ev("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}");
  AnthropicDecoder d;
  auto run = RunDecoder(d, bytes);
  ASSERT_TRUE(run.status.ok());
  EXPECT_FALSE(run.done);
  EXPECT_TRUE(run.complete);  // stop reason seen, message_stop missing: accepted
  // The provider-run call is shown as it starts; with no result it is not kept (web_search_test).
  EXPECT_EQ(DeltaString(run.deltas), "W1:srvtoolu_1/web_search:{}|T2:ok|");
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_TRUE(run.message.content[0].redacted());
  EXPECT_EQ(run.message.content[0].text, "EmwKAhgB");
}

// Numbers out of range or of the wrong type are a malformed response (never an exception, never
// retryable).
TEST(AnthropicDecoderTest, OutOfRangeOrMistypedNumbersAreBadResponses) {
  const std::string start = Ev("message_start",
                               "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_"
                               "tokens\":3,\"output_tokens\":1}}}");
  auto block_start = [](const std::string& index) {
    return Ev("content_block_start", "{\"type\":\"content_block_start\",\"index\":" + index +
                                         ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
  };
  auto delta = [](const std::string& index) {
    return Ev("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" + index +
                                         ",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}");
  };
  auto usage = [](const std::string& field, const std::string& value) {
    return Ev("message_delta",
              "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_"
              "turn\"},\"usage\":{\"" +
                  field + "\":" + value + "}}");
  };
  const std::string bad[] = {
      block_start("1e30"),
      block_start("99999999999999999999"),
      block_start("-1"),
      block_start("2000"),
      block_start("\"1\""),
      block_start("0") + delta("1e300"),
      block_start("0") + delta("-9223372036854775808"),
      block_start("0") + Ev("content_block_stop",
                            "{\"type\":\"content_block_stop\",\"index\":"
                            "18446744073709551615}"),
      Ev("message_start",
         "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1e30}}}"),
      usage("output_tokens", "18446744073709551615"),
      usage("output_tokens", "99999999999999999999"),
      usage("input_tokens", "-1"),
      usage("cache_read_input_tokens", "\"12\""),
      usage("cache_creation_input_tokens", "0.5"),
  };
  for (const std::string& events : bad) {
    AnthropicDecoder d;
    auto run = RunDecoder(d, start + events + Ev("message_stop", "{\"type\":\"message_stop\"}"));
    ASSERT_FALSE(run.status.ok()) << events;
    EXPECT_EQ(run.status.error().code, kProviderBadResponse) << events;
    EXPECT_FALSE(run.status.error().retryable) << events;
    EXPECT_NE(run.status.error().message.find("bad number in "), std::string::npos)
        << run.status.error().message;
    EXPECT_FALSE(run.done) << events;
  }
  // The edge of the index range and null usage fields are accepted.
  AnthropicDecoder d;
  auto run = RunDecoder(d, start + block_start("1024") + delta("1024") +
                               usage("cache_read_input_tokens", "null") +
                               Ev("message_stop", "{\"type\":\"message_stop\"}"));
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_EQ(run.message.TextContent(), "x");
  EXPECT_EQ(run.message.usage().input, 3);
}

std::string BlockStart(int index, const std::string& block) {
  return Ev("content_block_start", "{\"type\":\"content_block_start\",\"index\":" +
                                       std::to_string(index) + ",\"content_block\":" + block + "}");
}
std::string BlockDelta(int index, const std::string& delta) {
  return Ev("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" +
                                       std::to_string(index) + ",\"delta\":" + delta + "}");
}
std::string BlockStop(int index) {
  return Ev("content_block_stop",
            "{\"type\":\"content_block_stop\",\"index\":" + std::to_string(index) + "}");
}

// Every started block is a block of the message, even one with no text (thinking that only
// carries its signature, an empty text block), so the indices follow the stream's blocks.
TEST(AnthropicDecoderTest, BlocksWithoutTextAreKeptAndTextBlocksStaySeparate) {
  std::string bytes =
      BlockStart(0, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}") +
      BlockDelta(0, "{\"type\":\"signature_delta\",\"signature\":\"sig-only\"}") + BlockStop(0) +
      BlockStart(1, "{\"type\":\"text\",\"text\":\"\"}") + BlockStop(1) +
      BlockStart(2, "{\"type\":\"text\",\"text\":\"first\"}") + BlockStop(2) +
      BlockStart(3, "{\"type\":\"text\",\"text\":\"\"}") +
      BlockDelta(3, "{\"type\":\"text_delta\",\"text\":\"second\"}") + BlockStop(3) +
      Ev("message_stop", "{\"type\":\"message_stop\"}");
  AnthropicDecoder d;
  auto run = RunDecoder(d, bytes);
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_EQ(DeltaString(run.deltas), "T2:first|T3:second|");
  ASSERT_EQ(run.message.content.size(), 4u);
  EXPECT_EQ(run.message.content[0].type, BlockType::kThinking);
  EXPECT_EQ(run.message.content[0].text, "");
  EXPECT_EQ(run.message.content[0].signature(), "sig-only");
  EXPECT_EQ(run.message.content[1].text, "");
  EXPECT_EQ(run.message.content[2].text, "first");
  EXPECT_EQ(run.message.content[3].text, "second");
}

// Blocks stream one after another; text for a block other than the one streaming (or of the
// wrong kind) cannot be placed and fails the response.
TEST(AnthropicDecoderTest, TextForABlockNotBeingStreamedIsABadResponse) {
  const std::string text0 = BlockStart(0, "{\"type\":\"text\",\"text\":\"a\"}") + BlockStop(0);
  const std::string tool1 =
      BlockStart(1, "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\"}");
  for (const std::string& bytes :
       {text0 + tool1 + BlockDelta(0, "{\"type\":\"text_delta\",\"text\":\"late\"}"),
        text0 + BlockDelta(0, "{\"type\":\"thinking_delta\",\"thinking\":\"x\"}"),
        text0 + tool1 + BlockDelta(1, "{\"type\":\"text_delta\",\"text\":\"x\"}")}) {
    AnthropicDecoder d;
    auto run = RunDecoder(d, bytes);
    ASSERT_FALSE(run.status.ok()) << bytes;
    EXPECT_EQ(run.status.error().code, kProviderBadResponse);
  }
  // A late delta for the block that is still the latest one is accepted.
  AnthropicDecoder d;
  auto run = RunDecoder(d, text0 + BlockDelta(0, "{\"type\":\"text_delta\",\"text\":\"b\"}"));
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(DeltaString(run.deltas), "T0:a|T0:b|");
  EXPECT_EQ(run.message.TextContent(), "ab");
}

TEST(AnthropicDecoderTest, TruncatedStreamIsIncomplete) {
  AnthropicDecoder d;
  std::string capture = ToolCapture();
  auto run = RunDecoder(d, capture.substr(0, capture.find("\"p\\\",")));
  ASSERT_TRUE(run.status.ok());
  EXPECT_FALSE(run.complete);
  // The partial message keeps the text but never a tool call whose input was cut off.
  ASSERT_EQ(run.message.content.size(), 1u);
  EXPECT_EQ(run.message.content[0].text, "Let me read it.");
}

// The request's span points at `history`, which the test keeps.
ModelRequest SampleRequest(std::vector<Message>* history) {
  ModelRequest r;
  r.model = "claude-sonnet-4-5";
  r.system = "You are a coding agent.";
  Message user;
  user.content = {ContentBlock::Text("read the file"), ContentBlock::Image("image/png", "iVBO")};
  Message assistant;
  assistant.role = Role::kAssistant;
  Json::Value args(Json::objectValue);
  args["path"] = "src/main.cpp";
  assistant.content = {ContentBlock::Thinking("let me think", "sig=="),
                       ContentBlock::Thinking("no signature"),
                       ContentBlock::Text("Let me read it."),
                       ContentBlock::ToolCall("toolu_01A", "read_file", args)};
  Message result;
  result.role = Role::kToolResult;
  result.tool_call_id = "toolu_01A";
  result.is_error = true;
  result.content = {ContentBlock::Text("no such file")};
  Message follow;
  follow.content = {ContentBlock::Text("try again")};
  *history = {user, assistant, result, follow};
  r.messages = *history;
  ToolSchema tool;
  tool.name = "read_file";
  tool.description = "Read a file";
  tool.parameters["type"] = "object";
  r.tools = {tool};
  return r;
}

// The body as the API reads it.
Json::Value Body(const ModelRequest& r, const AnthropicBodyOptions& o) {
  auto parsed = ParseJson(WriteAnthropicBody(r, o));
  return parsed.ok() ? *parsed : Json::Value();
}

TEST(AnthropicBodyTest, MessagesBlocksAndTools) {
  AnthropicBodyOptions o;
  std::vector<Message> history;
  Json::Value body = Body(SampleRequest(&history), o);
  EXPECT_EQ(body["model"].asString(), "claude-sonnet-4-5");
  EXPECT_EQ(body["max_tokens"].asInt(), 8192);
  EXPECT_TRUE(body["stream"].asBool());
  EXPECT_EQ(body["system"][0]["text"].asString(), "You are a coding agent.");
  EXPECT_EQ(body["system"][0]["cache_control"]["type"].asString(), "ephemeral");
  EXPECT_FALSE(body.isMember("thinking"));
  const Json::Value& m = body["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["content"][1]["type"].asString(), "image");
  EXPECT_EQ(m[0]["content"][1]["source"]["media_type"].asString(), "image/png");
  const Json::Value& a = m[1]["content"];
  ASSERT_EQ(a.size(), 3u);  // the unsigned thinking block is dropped
  EXPECT_EQ(a[0]["type"].asString(), "thinking");
  EXPECT_EQ(a[0]["signature"].asString(), "sig==");
  EXPECT_EQ(a[2]["type"].asString(), "tool_use");
  EXPECT_EQ(a[2]["input"]["path"].asString(), "src/main.cpp");
  // The tool result and the next user text share one user message, result first.
  EXPECT_EQ(m[2]["role"].asString(), "user");
  EXPECT_EQ(m[2]["content"][0]["type"].asString(), "tool_result");
  EXPECT_EQ(m[2]["content"][0]["tool_use_id"].asString(), "toolu_01A");
  EXPECT_TRUE(m[2]["content"][0]["is_error"].asBool());
  EXPECT_EQ(m[2]["content"][1]["text"].asString(), "try again");
  EXPECT_EQ(m[2]["content"][1]["cache_control"]["type"].asString(), "ephemeral");
  EXPECT_EQ(body["tools"][0]["input_schema"]["type"].asString(), "object");
}

TEST(AnthropicBodyTest, ThinkingBudgetAndMaxTokens) {
  AnthropicBodyOptions o;
  o.reasoning_model = true;
  o.model_max_output = 64000;
  std::vector<Message> history;
  ModelRequest r = SampleRequest(&history);
  r.thinking = ThinkingLevel::kMedium;
  r.max_output_tokens = 4096;
  Json::Value body = Body(r, o);
  EXPECT_EQ(body["thinking"]["type"].asString(), "enabled");
  EXPECT_EQ(body["thinking"]["budget_tokens"].asInt(), 8192);
  EXPECT_GT(body["max_tokens"].asInt(), 8192);
  r.max_output_tokens = 0;
  EXPECT_EQ(Body(r, o)["max_tokens"].asInt(), 64000);
  o.reasoning_model = false;
  EXPECT_FALSE(Body(r, o).isMember("thinking"));
}

TEST(AnthropicBodyTest, GoldenBody) {
  AnthropicBodyOptions o;
  std::vector<Message> history;
  ModelRequest r = SampleRequest(&history);
  EXPECT_EQ(
      WriteAnthropicBody(r, o),
      R"({"max_tokens":8192,"messages":[{"content":[{"text":"read the file","type":"text"},)"
      R"({"source":{"data":"iVBO","media_type":"image/png","type":"base64"},"type":"image"}],)"
      R"("role":"user"},{"content":[{"signature":"sig==","thinking":"let me think",)"
      R"("type":"thinking"},{"text":"Let me read it.","type":"text"},{"id":"toolu_01A",)"
      R"("input":{"path":"src/main.cpp"},"name":"read_file","type":"tool_use"}],)"
      R"("role":"assistant"},{"content":[{"content":[{"text":"no such file","type":"text"}],)"
      R"("is_error":true,"tool_use_id":"toolu_01A","type":"tool_result"},{"cache_control":)"
      R"({"type":"ephemeral"},"text":"try again","type":"text"}],"role":"user"}],)"
      R"("model":"claude-sonnet-4-5","stream":true,"system":[{"cache_control":)"
      R"({"type":"ephemeral"},"text":"You are a coding agent.","type":"text"}],)"
      R"("tools":[{"description":"Read a file","input_schema":{"type":"object"},)"
      R"("name":"read_file"}]})");
  r.messages = {};
  r.system.clear();
  r.tools.clear();
  r.model.clear();
  o.prompt_caching = false;
  o.model = "fallback-model";
  EXPECT_EQ(WriteAnthropicBody(r, o),
            R"({"max_tokens":8192,"messages":[],"model":"fallback-model","stream":true})");
  r.tools.push_back(ToolSchema{"t", "d", Json::Value()});
  r.system = "s";
  EXPECT_EQ(WriteAnthropicBody(r, o),
            R"({"max_tokens":8192,"messages":[],"model":"fallback-model","stream":true,)"
            R"("system":"s","tools":[{"description":"d","input_schema":{"properties":{},)"
            R"("type":"object"},"name":"t"}]})");
}

// A string as the body carries it (invalid UTF-8 as jsoncpp reads it), so that what was read
// back compares with what was sent.
std::string Q(const std::string& s) { return WriteJson(Json::Value(s)); }

// What the API is sent of the messages' blocks, in order ("user:text:<text>", ...), read back
// from the body; and the same derived from the request by the API's rules.
// One block of the body as "role:type:<what it carries>".
std::string SentBlock(const std::string& role, const Json::Value& b) {
  const std::string type = StringOr(b, "type");
  std::string what = role + ":" + type + ":";
  if (type == "text") what += Q(StringOr(b, "text"));
  if (type == "thinking") what += Q(StringOr(b, "thinking")) + "/" + Q(StringOr(b, "signature"));
  if (type == "redacted_thinking") what += Q(StringOr(b, "data"));
  if (type == "tool_use") what += Q(StringOr(b, "id")) + WriteJson(MemberOrNull(b, "input"));
  if (type == "tool_result")
    what += (BoolOr(b, "is_error", false) ? "!" : "") + Q(StringOr(b, "tool_use_id")) +
            WriteJson(MemberOrNull(b, "content"));
  if (type == "image") what += WriteJson(MemberOrNull(b, "source"));
  return what;
}

std::vector<std::string> SentBlocks(const Json::Value& body, int* marks, std::string* marked) {
  std::vector<std::string> out;
  for (const Json::Value& m : MemberOrNull(body, "messages")) {
    const std::string role = StringOr(m, "role");
    for (const Json::Value& b : MemberOrNull(m, "content")) {
      std::string what = SentBlock(role, b);
      if (FindMember(b, "cache_control") != nullptr) {
        ++*marks;
        *marked = what;
      }
      out.push_back(what);
    }
  }
  return out;
}

// A user-side block as the API is sent it (empty text is dropped).
std::string ExpectedUserBlock(const ContentBlock& b) {
  if (b.type == BlockType::kText) return b.text.empty() ? std::string() : "user:text:" + Q(b.text);
  if (b.type == BlockType::kImage) {
    Json::Value src(Json::objectValue);
    src["type"] = "base64";
    src["media_type"] = b.mime_type();
    src["data"] = b.data();
    return "user:image:" + WriteJson(src);
  }
  return {};
}

// An assistant block as the API is sent it (empty text and unsigned thinking are dropped).
std::string ExpectedAssistantBlock(const ContentBlock& b) {
  if (b.type == BlockType::kText)
    return b.text.empty() ? std::string() : "assistant:text:" + Q(b.text);
  if (b.type == BlockType::kThinking && b.redacted())
    return "assistant:redacted_thinking:" + Q(b.text);
  if (b.type == BlockType::kThinking && !b.signature().empty())
    return "assistant:thinking:" + Q(b.text) + "/" + Q(b.signature());
  if (b.type == BlockType::kToolCall)
    return "assistant:tool_use:" + Q(b.id()) +
           WriteJson(b.arguments().isObject() ? b.arguments() : Json::Value(Json::objectValue));
  return {};
}

// A tool result as the API is sent it: its text and image blocks, or a placeholder.
std::string ExpectedToolResult(const Message& m) {
  Json::Value content(Json::arrayValue);
  for (const ContentBlock& b : m.content) {
    Json::Value block(Json::objectValue);
    if (b.type == BlockType::kText && !b.text.empty()) {
      block["type"] = "text";
      block["text"] = b.text;
    } else if (b.type == BlockType::kImage) {
      block["type"] = "image";
      block["source"]["type"] = "base64";
      block["source"]["media_type"] = b.mime_type();
      block["source"]["data"] = b.data();
    } else {
      continue;
    }
    content.append(block);
  }
  if (content.empty()) {
    Json::Value placeholder(Json::objectValue);
    placeholder["type"] = "text";
    placeholder["text"] = m.is_error ? "(error)" : "(no output)";
    content.append(placeholder);
  }
  return "user:tool_result:" + std::string(m.is_error ? "!" : "") + Q(m.tool_call_id) +
         WriteJson(content);
}

std::vector<std::string> ExpectedBlocks(const ModelRequest& r) {
  std::vector<std::string> out;
  for (const Message& m : r.messages) {
    if (m.role == Role::kToolResult) {
      out.push_back(ExpectedToolResult(m));
      continue;
    }
    for (const ContentBlock& b : m.content) {
      std::string what = m.role == Role::kUser ? ExpectedUserBlock(b) : ExpectedAssistantBlock(b);
      if (!what.empty()) out.push_back(what);
    }
  }
  return out;
}

// Random conversations of every kind (user-side messages merged, empty and unsigned blocks
// dropped, tool results with and without content, every option): the body is valid JSON with
// its members in jsoncpp's order, no two user messages follow each other, the blocks are the
// request's as the API's rules send them, and the cache mark sits on the last block alone
// (never on thinking).
TEST(AnthropicBodyTest, RandomConversationsKeepTheApiRules) {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 4000; ++i) {
    std::vector<Message> history;
    ModelRequest r = testing::RandomRequest(rng, &history, i % 50 == 0 ? 60 : 8);
    AnthropicBodyOptions o;
    o.reasoning_model = i % 3 == 0;
    o.model_max_output = i % 4 == 0 ? 0 : 64000;
    o.prompt_caching = i % 5 != 0;
    const std::string text = WriteAnthropicBody(r, o);
    auto body = ParseJson(text);
    ASSERT_TRUE(body.ok()) << text;
    ASSERT_EQ(WriteJson(*body), text) << "case " << i;
    std::string previous;
    for (const Json::Value& m : (*body)["messages"]) {
      const std::string role = StringOr(m, "role");
      ASSERT_FALSE(role == "user" && previous == "user") << text;
      ASSERT_FALSE(m["content"].empty()) << text;
      previous = role;
    }
    int marks = 0;
    std::string marked;
    std::vector<std::string> sent = SentBlocks(*body, &marks, &marked);
    std::vector<std::string> want = ExpectedBlocks(r);
    ASSERT_EQ(sent.size(), want.size()) << text;
    for (size_t k = 0; k < sent.size(); ++k)
      ASSERT_EQ(sent[k], want[k]) << "case " << i << " block " << k;
    const bool last_thinking =
        !sent.empty() && (sent.back().find(":thinking:") != std::string::npos ||
                          sent.back().find(":redacted_thinking:") != std::string::npos);
    const bool mark_due = o.prompt_caching && !sent.empty() && !last_thinking;
    ASSERT_EQ(marks, mark_due ? 1 : 0) << text;
    if (mark_due) {
      ASSERT_EQ(marked, sent.back()) << text;
    }
  }
}

// The plain reader of text and thinking deltas must read every event exactly as the general
// path does. Each stream is decoded twice: with the delta events in the API's member order (the
// plain reader takes those it can) and with the members reordered (always the general path).
std::string Escaped(const std::string& text, bool raw_utf8) {
  // WriteJson escapes every non-ASCII byte as \uXXXX (general path only); the raw form keeps
  // UTF-8 bytes and uses the short escapes, as the API does.
  if (!raw_utf8) return WriteJson(Json::Value(text));
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '/':
        out += "\\/";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string DeltaEvent(int index, bool thinking, const std::string& quoted, bool api_order) {
  const std::string kind = thinking ? "thinking_delta" : "text_delta";
  const std::string key = thinking ? "thinking" : "text";
  const std::string delta = "{\"type\":\"" + kind + "\",\"" + key + "\":" + quoted + "}";
  if (api_order)
    return Ev("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" +
                                         std::to_string(index) + ",\"delta\":" + delta + "}");
  return Ev("content_block_delta", "{\"index\":" + std::to_string(index) +
                                       ",\"type\":\"content_block_delta\",\"delta\":" + delta +
                                       "}");
}

std::string PlainStream(const std::vector<std::string>& texts, bool raw_utf8, bool api_order,
                        int bad_index) {
  std::string s =
      Ev("message_start", R"({"type":"message_start","message":{"usage":{}}})") +
      Ev("content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})");
  for (size_t i = 0; i < texts.size() / 2; ++i)
    s += DeltaEvent(0, true, Escaped(texts[i], raw_utf8), api_order);
  s += Ev("content_block_start",
          R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})");
  for (size_t i = texts.size() / 2; i < texts.size(); ++i)
    s += DeltaEvent(1, false, Escaped(texts[i], raw_utf8), api_order);
  if (bad_index >= 0) s += DeltaEvent(bad_index, false, "\"x\"", api_order);
  s += Ev("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})") +
       Ev("message_stop", R"({"type":"message_stop"})");
  return s;
}

TEST(AnthropicPlainDeltaTest, ReadsEveryEventAsTheGeneralPathDoes) {
  const std::vector<std::string> pieces = {"a",
                                           " ",
                                           "\"",
                                           "\\",
                                           "/",
                                           "\n",
                                           "\t",
                                           "\r",
                                           "\b",
                                           "\f",
                                           std::string(1, '\0'),
                                           "\x01",
                                           "\x7f",
                                           "\xc3\xa9",
                                           "\xe2\x82\xac",
                                           "\xf0\x9f\x98\x80",
                                           "\xff",
                                           "\\u0041",
                                           "tok "};
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> len(0, 6);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> texts;
    for (int i = 0; i < 8; ++i) {
      std::string t;
      for (int n = len(rng); n > 0; --n) t += pieces[pick(rng)];
      texts.push_back(t);
    }
    const bool raw = round % 2 == 0;
    // Every 10th round ends with a delta for a block that is not streaming or does not exist.
    const int bad = round % 10 == 3 ? 0 : round % 10 == 7 ? 1025 : round % 10 == 9 ? 5 : -1;
    AnthropicDecoder plain;
    AnthropicDecoder general;
    auto a = RunDecoder(plain, PlainStream(texts, raw, true, bad));
    auto b = RunDecoder(general, PlainStream(texts, raw, false, bad));
    ASSERT_EQ(DeltaString(a.deltas), DeltaString(b.deltas)) << "round " << round;
    ASSERT_EQ(a.status.ok(), b.status.ok()) << "round " << round;
    if (!a.status.ok()) {
      // A malformed event is quoted in the message, and the two streams order it differently.
      const std::string ma = a.status.error().message;
      const std::string mb = b.status.error().message;
      ASSERT_EQ(ma.substr(0, ma.find('{')), mb.substr(0, mb.find('{'))) << "round " << round;
      ASSERT_EQ(a.status.error().code, b.status.error().code);
    }
    ASSERT_EQ(a.message.content.size(), b.message.content.size());
    for (size_t i = 0; i < a.message.content.size(); ++i)
      ASSERT_EQ(a.message.content[i].text, b.message.content[i].text);
  }
}

}  // namespace
}  // namespace lousho::agent

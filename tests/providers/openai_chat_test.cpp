// Tests of the OpenAI Chat Completions request body and stream decoder on byte-exact captures.
#include "agent/providers/openai_chat.h"

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

const char kPrefix[] =
    "{\"id\":\"chatcmpl-aIzsAodgAgwBw71R\",\"object\":\"chat.completion.chunk\",\"created\":"
    "1796045376,\"model\":\"gpt-4o\",";

std::string Chunk(const std::string& rest) {
  return std::string("data: ") + kPrefix + rest + "\n\n";
}

std::string ContentChunk(const std::string& text) {
  return Chunk("\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text +
               "\"},\"logprobs\":null,\"finish_reason\":null}]}");
}

// Capture 1a of llm-wire.md, with the three content chunks it leaves out put back.
std::string TextCapture() {
  return Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
             "\"logprobs\":null,\"finish_reason\":null}]}") +
         ContentChunk("Hello fr") + ContentChunk("om the m") + ContentChunk("ock! Str") +
         ContentChunk("eaming w") + ContentChunk("orks.") +
         Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":"
             "\"stop\"}]}") +
         Chunk(
             "\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_"
             "tokens\":18}}") +
         "data: [DONE]\n\n";
}

// Capture 1b: text, then one tool call in fragments.
std::string ToolCapture() {
  return Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
             "\"logprobs\":null,\"finish_reason\":null}]}") +
         ContentChunk("Let me read it.") +
         Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_"
             "abc123\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":"
             "\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}") +
         Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
             "\"arguments\":\"{\\\"path\\\":\\\"src/main.cp\"}}]},\"logprobs\":null,\"finish_"
             "reason\":null}]}") +
         Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
             "\"arguments\":\"p\\\",\\\"max_lines\\\":50}\"}}]},\"logprobs\":null,\"finish_"
             "reason\":null}]}") +
         Chunk(
             "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_"
             "calls\"}]}") +
         "data: [DONE]\n\n";
}

std::unique_ptr<StreamDecoder> NewDecoder() { return std::make_unique<OpenAiChatDecoder>(); }

TEST(OpenAiChatDecoderTest, TextStreamWithUsage) {
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, TextCapture());
  ASSERT_TRUE(run.status.ok());
  EXPECT_TRUE(run.done);
  EXPECT_EQ(DeltaString(run.deltas), "T0:Hello fr|T0:om the m|T0:ock! Str|T0:eaming w|T0:orks.|");
  EXPECT_EQ(run.message.TextContent(), "Hello from the mock! Streaming works.");
  EXPECT_EQ(run.message.stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(run.message.usage().input, 11);
  EXPECT_EQ(run.message.usage().output, 7);
  ASSERT_EQ(run.message.content.size(), 1u);
}

TEST(OpenAiChatDecoderTest, TextStreamSameAtEverySplit) {
  ExpectSameAtEverySplit(TextCapture(), NewDecoder);
}

TEST(OpenAiChatDecoderTest, ToolCallAssembledByIndex) {
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, ToolCapture());
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(DeltaString(run.deltas),
            "T0:Let me read it.|S1:call_abc123/read_file|A1:{\"path\":\"src/main.cp|"
            "A1:p\",\"max_lines\":50}|E1:{\"max_lines\":50,\"path\":\"src/main.cpp\"}|");
  ASSERT_EQ(run.message.content.size(), 2u);
  const ContentBlock& call = run.message.content[1];
  EXPECT_EQ(call.type, BlockType::kToolCall);
  EXPECT_EQ(call.id(), "call_abc123");
  EXPECT_EQ(call.name(), "read_file");
  EXPECT_EQ(call.arguments()["path"].asString(), "src/main.cpp");
  EXPECT_EQ(call.arguments()["max_lines"].asInt(), 50);
  EXPECT_EQ(run.message.stop_reason, StopReason::kToolUse);
}

TEST(OpenAiChatDecoderTest, ToolStreamSameAtEverySplit) {
  ExpectSameAtEverySplit(ToolCapture(), NewDecoder);
}

TEST(OpenAiChatDecoderTest, ParallelCallsAndStopFinishStillMeansToolUse) {
  // Ollama style: whole calls in one chunk each, and finish_reason "stop".
  std::string bytes =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
      "{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":"
      "\\\"ls\\\"}\"}},"
      "{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"grep\",\"arguments\":\"\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: {\"choices\":null,\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":5,"
      "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n"
      "data: [DONE]\n\n";
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, bytes);
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_EQ(run.message.content[0].arguments()["cmd"].asString(), "ls");
  EXPECT_TRUE(run.message.content[1].arguments().isObject());  // "" means {}
  EXPECT_EQ(run.message.content[1].arguments().size(), 0u);
  EXPECT_EQ(run.message.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(run.message.usage().input, 12);
  EXPECT_EQ(run.message.usage().cache_read, 8);
  EXPECT_EQ(run.message.usage().output, 5);
}

TEST(OpenAiChatDecoderTest, ReasoningBothFieldNames) {
  std::string bytes =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"User wants the "
      "answe\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\","
      "\"reasoning\":\"r. 42.\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The answer is 42.\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
      "data: [DONE]\n\n";
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, bytes);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(DeltaString(run.deltas), "R0:User wants the answe|R0:r. 42.|T1:The answer is 42.|");
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_EQ(run.message.content[0].type, BlockType::kThinking);
  EXPECT_EQ(run.message.content[0].text, "User wants the answer. 42.");
  // The first field name is kept, so only a server that sends it gets the reasoning back.
  EXPECT_EQ(run.message.content[0].signature(), "reasoning_content");
  EXPECT_EQ(run.message.stop_reason, StopReason::kMaxTokens);
  ExpectSameAtEverySplit(bytes, NewDecoder);
}

TEST(OpenAiChatDecoderTest, FinishReasonMapping) {
  for (auto [reason, expected] : std::vector<std::pair<std::string, StopReason>>{
           {"stop", StopReason::kEndTurn},
           {"length", StopReason::kMaxTokens},
           {"content_filter", StopReason::kRefusal},
           {"tool_calls", StopReason::kEndTurn}}) {  // no calls accumulated: nothing to run
    OpenAiChatDecoder d;
    auto run = RunDecoder(d, ContentChunk("x") +
                                 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_"
                                 "reason\":\"" +
                                 reason + "\"}]}\n\n");
    ASSERT_TRUE(run.status.ok());
    EXPECT_TRUE(run.complete) << reason;
    EXPECT_FALSE(run.done) << reason;
    EXPECT_EQ(run.message.stop_reason, expected) << reason;
  }
}

TEST(OpenAiChatDecoderTest, EndsWithoutDoneOrFinishIsIncomplete) {
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, ContentChunk("Hello"));
  ASSERT_TRUE(run.status.ok());
  EXPECT_FALSE(run.complete);
  EXPECT_FALSE(run.done);
}

TEST(OpenAiChatDecoderTest, MidStreamErrorAndMalformedChunk) {
  {
    OpenAiChatDecoder d;
    auto run = RunDecoder(d,
                          "data: {\"error\":{\"message\":\"The server had an error\",\"type\":"
                          "\"server_error\"}}\n\n");
    ASSERT_FALSE(run.status.ok());
    EXPECT_EQ(run.status.error().code, kProviderUnavailable);
    EXPECT_TRUE(run.status.error().retryable);
    EXPECT_NE(run.status.error().message.find("The server had an error"), std::string::npos);
  }
  {
    OpenAiChatDecoder d;
    auto run = RunDecoder(d, "data: {\"choices\":[{\"index\":0,\n\n");
    ASSERT_FALSE(run.status.ok());
    EXPECT_EQ(run.status.error().code, kProviderBadResponse);
  }
}

// Numbers out of range or of the wrong type are a malformed response (never an exception, never
// retryable); in-range edge values still decode.
TEST(OpenAiChatDecoderTest, OutOfRangeOrMistypedNumbersAreBadResponses) {
  auto call = [](const std::string& index) {
    return Chunk("\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":" + index +
                 ",\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}");
  };
  auto usage = [](const std::string& field, const std::string& value) {
    return Chunk("\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"" +
                 field + "\":" + value + "}}");
  };
  const std::string bad[] = {
      call("1e30"),
      call("99999999999999999999"),
      call("18446744073709551615"),
      call("-1"),
      call("1025"),
      call("2.5"),
      call("\"0\""),
      call("true"),
      usage("prompt_tokens", "99999999999999999999"),
      usage("prompt_tokens", "9223372036854775807"),
      usage("completion_tokens", "18446744073709551615"),
      usage("completion_tokens", "-5"),
      usage("completion_tokens", "1e300"),
      usage("completion_tokens", "\"7\""),
      Chunk("\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"prompt_tokens_details\":{"
            "\"cached_tokens\":-99999999999999999999}}}"),
      Chunk("\"choices\":[{\"index\":1e30,\"delta\":{\"content\":\"x\"}}]}"),
      Chunk("\"choices\":[{\"index\":-3,\"delta\":{\"content\":\"x\"}}]}"),
  };
  for (const std::string& event : bad) {
    OpenAiChatDecoder d;
    auto run = RunDecoder(d, ContentChunk("Hi") + event + "data: [DONE]\n\n");
    ASSERT_FALSE(run.status.ok()) << event;
    EXPECT_EQ(run.status.error().code, kProviderBadResponse) << event;
    EXPECT_FALSE(run.status.error().retryable) << event;
    EXPECT_NE(run.status.error().message.find("bad number in chat completion chunk"),
              std::string::npos)
        << run.status.error().message;
    EXPECT_FALSE(run.done) << event;
  }
  // The edges of the ranges, and an integral double, are accepted.
  OpenAiChatDecoder d;
  auto run = RunDecoder(
      d, call("1024") + call("0.0") + usage("prompt_tokens", "1000000000000") + "data: [DONE]\n\n");
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_EQ(run.message.usage().input, 1000000000000LL);
  EXPECT_EQ(run.message.content.size(), 2u);
  // More distinct tool calls than the index bound allows (a server that sends no index).
  OpenAiChatDecoder many;
  std::string calls;
  for (int i = 0; i <= 1025; ++i) {
    calls += Chunk("\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"c" +
                   std::to_string(i) + "\",\"function\":{\"name\":\"f\"}}]}}]}");
  }
  auto too_many = RunDecoder(many, calls);
  ASSERT_FALSE(too_many.status.ok());
  EXPECT_EQ(too_many.status.error().code, kProviderBadResponse);
}

TEST(OpenAiChatDecoderTest, AbortByCallbackDropsUnfinishedToolCalls) {
  OpenAiChatDecoder d;
  auto run = RunDecoder(d, ToolCapture(), {}, /*stop_after=*/3);
  EXPECT_TRUE(d.aborted());
  EXPECT_EQ(run.deltas.size(), 3u);
  ASSERT_EQ(run.message.content.size(), 1u);  // the text; the half-streamed call is dropped
  EXPECT_EQ(run.message.content[0].text, "Let me read it.");
}

// The request's span points at `history`, which the test keeps.
ModelRequest SampleRequest(std::vector<Message>* history) {
  ModelRequest r;
  r.model = "gpt-4o";
  r.system = "You are a coding agent.";
  Message user;
  user.content = {ContentBlock::Text("read the file"),
                  ContentBlock::Image("image/png", "iVBORw0KGgo=")};
  Message assistant;
  assistant.role = Role::kAssistant;
  assistant.assistant.Edit().provider = "openai";
  Json::Value args(Json::objectValue);
  args["path"] = "src/main.cpp";
  assistant.content = {ContentBlock::Thinking("hmm", "reasoning_content"),
                       ContentBlock::ToolCall("call_abc123", "read_file", args)};
  Message result;
  result.role = Role::kToolResult;
  result.tool_call_id = "call_abc123";
  result.tool_name = "read_file";
  result.content = {ContentBlock::Text("int main(){}")};
  *history = {user, assistant, result};
  r.messages = *history;
  ToolSchema tool;
  tool.name = "read_file";
  tool.description = "Read a file";
  tool.parameters["type"] = "object";
  tool.parameters["properties"]["path"]["type"] = "string";
  r.tools = {tool};
  return r;
}

// The body as a server reads it.
Json::Value Body(const ModelRequest& r, const OpenAiChatBodyOptions& o) {
  auto parsed = ParseJson(WriteOpenAiChatBody(r, o));
  return parsed.ok() ? *parsed : Json::Value();
}

TEST(OpenAiChatBodyTest, MessagesToolsAndOptions) {
  OpenAiChatBodyOptions o;
  o.provider_name = "openai";
  o.use_max_completion_tokens = true;
  std::vector<Message> history;
  ModelRequest r = SampleRequest(&history);
  r.max_output_tokens = 4096;
  Json::Value body = Body(r, o);
  EXPECT_EQ(body["model"].asString(), "gpt-4o");
  EXPECT_TRUE(body["stream"].asBool());
  EXPECT_TRUE(body["stream_options"]["include_usage"].asBool());
  EXPECT_EQ(body["max_completion_tokens"].asInt(), 4096);
  EXPECT_FALSE(body.isMember("max_tokens"));
  EXPECT_FALSE(body.isMember("reasoning_effort"));
  const Json::Value& m = body["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["role"].asString(), "system");
  EXPECT_EQ(m[0]["content"].asString(), "You are a coding agent.");
  EXPECT_EQ(m[1]["role"].asString(), "user");
  ASSERT_TRUE(m[1]["content"].isArray());
  EXPECT_EQ(m[1]["content"][0]["text"].asString(), "read the file");
  EXPECT_EQ(m[1]["content"][1]["image_url"]["url"].asString(),
            "data:image/png;base64,iVBORw0KGgo=");
  EXPECT_EQ(m[2]["role"].asString(), "assistant");
  EXPECT_TRUE(m[2]["content"].isNull());
  EXPECT_EQ(m[2]["reasoning_content"].asString(), "hmm");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"].asString(), "call_abc123");
  EXPECT_EQ(m[2]["tool_calls"][0]["type"].asString(), "function");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"].asString(),
            "{\"path\":\"src/main.cpp\"}");
  EXPECT_EQ(m[3]["role"].asString(), "tool");
  EXPECT_EQ(m[3]["tool_call_id"].asString(), "call_abc123");
  EXPECT_EQ(m[3]["content"].asString(), "int main(){}");
  EXPECT_EQ(body["tools"][0]["type"].asString(), "function");
  EXPECT_EQ(body["tools"][0]["function"]["name"].asString(), "read_file");
  EXPECT_EQ(body["tools"][0]["function"]["parameters"]["properties"]["path"]["type"].asString(),
            "string");
}

TEST(OpenAiChatBodyTest, ReasoningEffortMaxTokensAndToolImages) {
  OpenAiChatBodyOptions o;
  o.provider_name = "ollama";
  o.reasoning_model = true;
  std::vector<Message> history;
  ModelRequest r = SampleRequest(&history);
  r.thinking = ThinkingLevel::kHigh;
  r.max_output_tokens = 1000;
  history[2].content.push_back(ContentBlock::Image("image/jpeg", "AAAA"));
  Json::Value body = Body(r, o);
  EXPECT_EQ(body["reasoning_effort"].asString(), "high");
  EXPECT_EQ(body["max_tokens"].asInt(), 1000);
  const Json::Value& m = body["messages"];
  // Reasoning came from another provider: not echoed. The tool's image follows as a user message.
  EXPECT_FALSE(m[2].isMember("reasoning_content"));
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[4]["role"].asString(), "user");
  EXPECT_EQ(m[4]["content"][1]["image_url"]["url"].asString(), "data:image/jpeg;base64,AAAA");
  r.thinking = ThinkingLevel::kOff;
  EXPECT_FALSE(Body(r, o).isMember("reasoning_effort"));
}

// `text` as a JSON string, as a server writes it (only '"', '\\' and newlines escaped).
std::string ChunkTextJson(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The plain reader of text chunks must read every chunk exactly as the general path does. Each
// chunk is decoded as generated (the plain reader takes those it can) and with a space after
// its opening brace (always the general path).
TEST(OpenAiPlainChunkTest, ReadsEveryChunkAsTheGeneralPathDoes) {
  const std::vector<std::string> members = {R"("id":"chatcmpl-1")",
                                            R"("object":"chat.completion.chunk")",
                                            R"("created":1796045376)",
                                            R"("model":"gpt-4o")",
                                            R"("system_fingerprint":"fp_1")",
                                            R"("service_tier":"default")",
                                            R"("obfuscation":"a\/b")",
                                            R"("n":true)",
                                            R"("m":false)",
                                            R"("z":null)",
                                            R"("neg":-7)",
                                            R"("frac":1.5)",
                                            R"("bad":01)",
                                            R"("usage":null)",
                                            R"("error":null)",
                                            R"("u":"\u0041")",
                                            R"("o":{})",
                                            R"("id":"x\"y")",
                                            R"("big":12345678901234567890)"};
  const std::vector<std::string> pieces = {"a",    " ",        "\"",
                                           "\\",   "/",        "\n",
                                           "\t",   "\r",       std::string(1, '\0'),
                                           "\x01", "\xc3\xa9", "\xf0\x9f\x98\x80",
                                           "\xff", "tok "};
  std::mt19937 rng(99);
  std::uniform_int_distribution<size_t> pick_member(0, members.size() - 1);
  std::uniform_int_distribution<size_t> pick_piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> few(0, 4);
  for (int round = 0; round < 400; ++round) {
    std::string fast_stream;
    std::string slow_stream;
    for (int c = 0; c < 6; ++c) {
      std::string text;
      for (int n = few(rng); n > 0; --n) text += pieces[pick_piece(rng)];
      std::vector<std::string> parts;
      for (int n = few(rng); n > 0; --n) parts.push_back(members[pick_member(rng)]);
      const std::string choice = R"("choices":[{"index":0,"delta":{"content":)" +
                                 ChunkTextJson(text) +
                                 R"(},"logprobs":null,"finish_reason":null}])";
      parts.insert(parts.begin() + static_cast<long>(few(rng) % (parts.size() + 1)), choice);
      if (round % 17 == 5) parts.push_back(choice);  // a second choices member
      std::string body;
      for (const auto& p : parts) body += (body.empty() ? "" : ",") + p;
      fast_stream += "data: {" + body + "}\n\n";
      slow_stream += "data: { " + body + "}\n\n";
    }
    fast_stream += "data: [DONE]\n\n";
    slow_stream += "data: [DONE]\n\n";
    OpenAiChatDecoder plain;
    OpenAiChatDecoder general;
    auto a = RunDecoder(plain, fast_stream);
    auto b = RunDecoder(general, slow_stream);
    ASSERT_EQ(DeltaString(a.deltas), DeltaString(b.deltas)) << "round " << round;
    ASSERT_EQ(a.status.ok(), b.status.ok()) << "round " << round;
    if (!a.status.ok()) {
      ASSERT_EQ(a.status.error().code, b.status.error().code);
      const std::string ma = a.status.error().message;
      const std::string mb = b.status.error().message;
      ASSERT_EQ(ma.substr(0, ma.find('{')), mb.substr(0, mb.find('{'))) << "round " << round;
    }
    ASSERT_EQ(a.message.TextContent(), b.message.TextContent()) << "round " << round;
  }
}

TEST(OpenAiChatBodyTest, GoldenBody) {
  OpenAiChatBodyOptions o;
  o.provider_name = "openai";
  o.use_max_completion_tokens = true;
  o.reasoning_model = true;
  std::vector<Message> history;
  ModelRequest r = SampleRequest(&history);
  r.max_output_tokens = 4096;
  r.thinking = ThinkingLevel::kMedium;
  history[2].content.push_back(ContentBlock::Image("image/jpeg", "AAAA"));
  EXPECT_EQ(
      WriteOpenAiChatBody(r, o),
      R"({"max_completion_tokens":4096,"messages":[{"content":"You are a coding agent.",)"
      R"("role":"system"},{"content":[{"text":"read the file","type":"text"},{"image_url":)"
      R"({"url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}],"role":"user"},)"
      R"({"content":null,"reasoning_content":"hmm","role":"assistant","tool_calls":[{"function":)"
      R"({"arguments":"{\"path\":\"src/main.cpp\"}","name":"read_file"},"id":"call_abc123",)"
      R"("type":"function"}]},{"content":"int main(){}","role":"tool","tool_call_id":)"
      R"("call_abc123"},{"content":[{"text":"Images from the tool results above:","type":"text"},)"
      R"({"image_url":{"url":"data:image/jpeg;base64,AAAA"},"type":"image_url"}],"role":"user"}],)"
      R"("model":"gpt-4o","reasoning_effort":"medium","stream":true,"stream_options":)"
      R"({"include_usage":true},"tools":[{"function":{"description":"Read a file","name":)"
      R"("read_file","parameters":{"properties":{"path":{"type":"string"}},"type":"object"}},)"
      R"("type":"function"}]})");
  r.messages = {};
  r.system.clear();
  r.tools = {ToolSchema{"t", "d", Json::Value()}};
  r.model.clear();
  r.max_output_tokens = 0;
  r.thinking = ThinkingLevel::kOff;
  o.model = "fallback-model";
  EXPECT_EQ(WriteOpenAiChatBody(r, o),
            R"({"messages":[],"model":"fallback-model","stream":true,"stream_options":)"
            R"({"include_usage":true},"tools":[{"function":{"description":"d","name":"t",)"
            R"("parameters":{"properties":{},"type":"object"}},"type":"function"}]})");
}

// What a request message holds, as the body's rules look at it.
struct SentShape {
  std::string joined;     // its text blocks, joined
  bool image = false;     // it has an image
  bool call = false;      // it has a tool call
  std::string reasoning;  // reasoning recorded under an OpenAI field name
};

SentShape ShapeOf(const Message& m) {
  SentShape s;
  for (const auto& b : m.content) {
    if (b.type == BlockType::kText) s.joined += b.text;
    s.image = s.image || b.type == BlockType::kImage;
    s.call = s.call || b.type == BlockType::kToolCall;
    if (b.type == BlockType::kThinking && !b.redacted() &&
        (b.signature() == "reasoning_content" || b.signature() == "reasoning"))
      s.reasoning += b.text;
  }
  return s;
}

// The body's message `j` for the request's message `m` (`text`: the whole body, for failures).
// Sets *images_pending when a tool result's images are to follow in a user message.
void CheckSentMessage(const Message& m, const Json::Value& j, const std::string& provider,
                      const std::string& text, bool* images_pending) {
  const SentShape s = ShapeOf(m);
  const Json::Value& content = MemberOrNull(j, "content");
  switch (m.role) {
    case Role::kUser:
      ASSERT_EQ(StringOr(j, "role"), "user");
      if (s.image) {
        ASSERT_TRUE(content.isArray());
      } else {
        ASSERT_EQ(WriteJson(content), WriteJson(Json::Value(s.joined)));
      }
      break;
    case Role::kToolResult:
      ASSERT_EQ(StringOr(j, "role"), "tool");
      ASSERT_EQ(WriteJson(content), WriteJson(Json::Value(s.joined)));
      ASSERT_EQ(WriteJson(MemberOrNull(j, "tool_call_id")), WriteJson(Json::Value(m.tool_call_id)));
      *images_pending = *images_pending || s.image;
      break;
    case Role::kAssistant: {
      ASSERT_EQ(StringOr(j, "role"), "assistant");
      ASSERT_EQ(content.isNull(), s.call && s.joined.empty()) << text;
      ASSERT_EQ(FindMember(j, "tool_calls") != nullptr, s.call);
      const bool echoed = !s.reasoning.empty() && m.provider() == provider;
      const bool sent_reasoning =
          FindMember(j, "reasoning_content") != nullptr || FindMember(j, "reasoning") != nullptr;
      ASSERT_EQ(sent_reasoning, echoed) << text;
      break;
    }
  }
}

// Every message of `history` in the body's `sent` messages, in order (after the system
// prompt), with the user message of a run of tool results' images where it belongs.
void CheckSentMessages(const std::vector<Message>& history, const Json::Value& sent,
                       Json::ArrayIndex at, const std::string& provider, const std::string& text) {
  bool images_pending = false;
  for (const Message& m : history) {
    if (m.role != Role::kToolResult && images_pending) {
      ASSERT_EQ(StringOr(ElementOrNull(sent, at), "role"), "user");
      ASSERT_EQ(
          StringOr(ElementOrNull(MemberOrNull(ElementOrNull(sent, at), "content"), 0), "text"),
          "Images from the tool results above:");
      ++at;
      images_pending = false;
    }
    ASSERT_LT(at, sent.size()) << text;
    CheckSentMessage(m, ElementOrNull(sent, at++), provider, text, &images_pending);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (images_pending) ++at;
  ASSERT_EQ(at, sent.size()) << text;
}

// Case `i`'s providers, and its thinking blocks as the decoder records them: the field name as the
// signature (none in every third case).
void MarkReasoning(std::vector<Message>* history, int i) {
  for (auto& m : *history) {
    m.assistant.Edit().provider = i % 2 ? "openai" : "other";
    for (auto& b : m.content)
      if (b.type == BlockType::kThinking && i % 3 != 0)
        b.more.Edit().signature = i % 3 == 1 ? "reasoning_content" : "reasoning";
  }
}

// Random conversations of every kind, every option: the body is valid JSON with its members in
// jsoncpp's order; one message per request message (the system prompt first) and one user
// message after each run of tool results that had images; text-only user content a string of
// the joined text; an assistant's content null only beside tool calls with no text; reasoning
// echoed only to its own provider, in the field it came in.
TEST(OpenAiChatBodyTest, RandomConversationsKeepTheApiRules) {
  std::mt19937 rng(20261202);
  for (int i = 0; i < 4000; ++i) {
    std::vector<Message> history;
    ModelRequest r = testing::RandomRequest(rng, &history, i % 50 == 0 ? 60 : 8);
    MarkReasoning(&history, i);
    OpenAiChatBodyOptions o;
    o.provider_name = "openai";
    o.reasoning_model = i % 3 == 0;
    o.use_max_completion_tokens = i % 2 == 0;
    o.default_max_tokens = i % 4 == 0 ? 0 : 4096;
    const std::string text = WriteOpenAiChatBody(r, o);
    auto body = ParseJson(text);
    ASSERT_TRUE(body.ok()) << text;
    ASSERT_EQ(WriteJson(*body), text) << "case " << i;
    const Json::Value& sent = MemberOrNull(*body, "messages");
    Json::ArrayIndex at = 0;
    if (!r.system.empty()) {
      ASSERT_EQ(StringOr(ElementOrNull(sent, at++), "role"), "system");
    }
    CheckSentMessages(history, sent, at, o.provider_name, text);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace lousho::agent

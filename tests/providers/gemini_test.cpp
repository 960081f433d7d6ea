// Tests of the Gemini request body and stream decoder, on chunks written from the published
// GenerateContentResponse shape (thought parts, thoughtSignature, functionCall, usageMetadata),
// and of the provider over loopback HTTP.
#include "agent/providers/gemini.h"

#include <gtest/gtest.h>

#include "agent/providers/factory.h"
#include "config/model_catalog.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "tests/providers/decoder_test_util.h"
#include "tests/providers/loopback_server.h"

namespace lousho::agent {
namespace {

using testing::DeltaString;
using testing::ExpectSameAtEverySplit;
using testing::LoopbackServer;
using testing::RunDecoder;
using testing::Step;

std::string Chunk(const std::string& parts, const std::string& tail = "") {
  return R"(data: {"candidates":[{"content":{"parts":[)" + parts +
         R"(],"role":"model"},"index":0)" + tail +
         R"(}],"modelVersion":"gemini-2.5-flash","responseId":"r1"})" + "\n\n";
}

std::string Usage() {
  return R"(,"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1000,"candidatesTokenCount":30,"thoughtsTokenCount":50,"totalTokenCount":1280})";
}

// Thoughts, a signature on the function call, text, the finish with usage.
std::string ThinkingAndCall() {
  return Chunk(R"({"text":"**Planning** the read","thought":true})") +
         Chunk(R"({"text":" then act","thought":true})") + Chunk(R"({"text":"Reading it."})") +
         Chunk(
             R"({"functionCall":{"name":"read","args":{"path":"a.txt"}},"thoughtSignature":"SIG-CALL"})") +
         "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},"
         "\"finishReason\":\"STOP\",\"index\":0}]" +
         Usage() + ",\"responseId\":\"r1\"}\n\n";
}

TEST(GeminiDecoderTest, ThoughtsTextAndAFunctionCallWithItsSignature) {
  GeminiDecoder d;
  auto run = RunDecoder(d, ThinkingAndCall());
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_FALSE(run.done);
  EXPECT_TRUE(run.complete);
  const Message& m = run.message;
  ASSERT_EQ(m.content.size(), 4u);
  EXPECT_EQ(m.content[0].type, BlockType::kThinking);
  EXPECT_EQ(m.content[0].text, "**Planning** the read then act");
  EXPECT_EQ(m.content[1].text, "Reading it.");
  // The call's signature sits in a thinking block of its own just before it.
  EXPECT_EQ(m.content[2].type, BlockType::kThinking);
  EXPECT_EQ(m.content[2].signature(), "gemini-next:SIG-CALL");
  EXPECT_EQ(m.content[3].type, BlockType::kToolCall);
  EXPECT_EQ(m.content[3].name(), "read");
  EXPECT_EQ(WriteJson(m.content[3].arguments()), R"({"path":"a.txt"})");
  EXPECT_EQ(m.content[3].id(), "call_r1_0");
  EXPECT_EQ(m.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(m.usage().input, 200);
  EXPECT_EQ(m.usage().cache_read, 1000);
  EXPECT_EQ(m.usage().output, 80);
  EXPECT_NE(DeltaString(run.deltas).find("R0:**Planning** the read|"), std::string::npos);
}

TEST(GeminiDecoderTest, SameResultAtEverySplit) {
  ExpectSameAtEverySplit(ThinkingAndCall(), [] { return std::make_unique<GeminiDecoder>(); });
}

// Text chunks as the API sends them (spaces after colons, usage so far on each), then a call with
// the finish. With an extra member the plain reader refuses them and the general path reads them.
std::string SpacedTextChunks(const std::string& extra) {
  std::string s;
  for (const char* t : {"Hel", "lo \\\"q\\\" \\u00e9", ""})
    s += std::string(R"(data: {"candidates": [{"content": {"parts": [{"text": ")") + t +
         R"("}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 90,)"
         R"("cachedContentTokenCount": 40,"candidatesTokenCount": 7,"totalTokenCount": 97},)"
         R"("modelVersion": "gemini-2.5-flash","responseId": "rid")" +
         extra + "}\r\n\r\n";
  return s + Chunk(R"({"functionCall":{"name":"read","args":{}}})", R"(,"finishReason":"STOP")");
}

TEST(GeminiDecoderTest, PlainTextChunksReadAsTheGeneralPathReadsThem) {
  GeminiDecoder plain_decoder;
  GeminiDecoder general_decoder;
  auto plain = RunDecoder(plain_decoder, SpacedTextChunks(""));
  auto general = RunDecoder(general_decoder, SpacedTextChunks(R"(,"x": 1)"));
  ASSERT_TRUE(plain.status.ok()) << plain.status.error().ToString();
  ASSERT_TRUE(general.status.ok()) << general.status.error().ToString();
  EXPECT_EQ(DeltaString(plain.deltas), DeltaString(general.deltas));
  for (const auto* run : {&plain, &general}) {
    const Message& m = run->message;
    ASSERT_EQ(m.content.size(), 2u);
    EXPECT_EQ(m.content[0].text, "Hello \"q\" \xc3\xa9");
    EXPECT_EQ(m.content[1].id(), "call_rid_0");  // the first chunk's responseId
    EXPECT_EQ(m.usage().input, 50);
    EXPECT_EQ(m.usage().cache_read, 40);
    EXPECT_EQ(m.usage().output, 7);
  }
  ExpectSameAtEverySplit(SpacedTextChunks(""), [] { return std::make_unique<GeminiDecoder>(); });
}

TEST(GeminiDecoderTest, SignatureOnAThoughtStaysWithIt) {
  GeminiDecoder d;
  auto run = RunDecoder(d, Chunk(R"({"text":"hmm","thought":true,"thoughtSignature":"S1"})") +
                               Chunk(R"({"text":"Hi"})", R"(,"finishReason":"STOP")"));
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.message.content.size(), 2u);
  EXPECT_EQ(run.message.content[0].signature(), "gemini-thought:S1");
  EXPECT_EQ(run.message.stop_reason, StopReason::kEndTurn);
}

TEST(GeminiDecoderTest, FinishReasonsAndErrors) {
  GeminiDecoder max;
  EXPECT_EQ(RunDecoder(max, Chunk(R"({"text":"a"})", R"(,"finishReason":"MAX_TOKENS")"))
                .message.stop_reason,
            StopReason::kMaxTokens);
  GeminiDecoder safety;
  EXPECT_EQ(RunDecoder(safety, Chunk(R"({"text":"a"})", R"(,"finishReason":"SAFETY")"))
                .message.stop_reason,
            StopReason::kRefusal);
  GeminiDecoder open;
  auto cut = RunDecoder(open, Chunk(R"({"text":"a"})"));
  EXPECT_FALSE(cut.complete);  // no finishReason: the connection closing early is a failure
  GeminiDecoder err;
  auto run = RunDecoder(
      err,
      "data: "
      "{\"error\":{\"code\":429,\"message\":\"quota\",\"status\":\"RESOURCE_EXHAUSTED\"}}\n\n");
  ASSERT_FALSE(run.status.ok());
  EXPECT_EQ(run.status.error().code, kProviderRateLimited);
  EXPECT_TRUE(run.status.error().retryable);
  GeminiDecoder malformed;
  auto bad = RunDecoder(malformed,
                        Chunk(R"({"text":""})", R"(,"finishReason":"MALFORMED_FUNCTION_CALL")"));
  ASSERT_FALSE(bad.status.ok());
  EXPECT_TRUE(bad.status.error().retryable);
  GeminiDecoder numbers;
  auto neg = RunDecoder(numbers, "data: {\"usageMetadata\":{\"promptTokenCount\":-5}}\n\n");
  EXPECT_FALSE(neg.status.ok());
}

std::vector<ToolSchema> ReadTool() {
  ToolSchema t;
  t.name = "read";
  t.description = "read a file";
  t.parameters = *ParseJson(R"({"type":"object","properties":{"path":{"type":"string"}}})");
  return {t};
}

TEST(GeminiBodyTest, SignaturesGoBackOnTheirPartsAndToolResultsShareATurn) {
  GeminiDecoder d;
  Message answer = RunDecoder(d, ThinkingAndCall()).message;
  answer.role = Role::kAssistant;
  answer.assistant.Edit().provider = "gemini";
  answer.content.push_back(ContentBlock::ToolCall("c2", "read", *ParseJson(R"({"path":"b"})")));
  std::vector<Message> history(1);
  history[0].content = {ContentBlock::Text("read a")};
  history.push_back(answer);
  for (const char* id : {"call_r1_0", "c2"}) {
    Message r;
    r.role = Role::kToolResult;
    r.tool_call_id = id;
    r.tool_name = "read";
    r.is_error = std::string(id) == "c2";
    r.content = {ContentBlock::Text(std::string("out ") + id)};
    history.push_back(r);
  }
  ModelRequest req;
  req.system = "be brief";
  req.messages = history;
  req.tools = ReadTool();
  req.thinking = ThinkingLevel::kMedium;
  auto body = ParseJson(WriteGeminiBody(req, {"gemini", true, "gemini-2.5-flash"}));
  ASSERT_TRUE(body.ok());
  const Json::Value& c = (*body)["contents"];
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0]["role"].asString(), "user");
  EXPECT_EQ(c[1]["role"].asString(), "model");
  const Json::Value& parts = c[1]["parts"];
  // The unsigned thought summary is not sent back; the call's signature is on the call.
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0]["text"].asString(), "Reading it.");
  EXPECT_FALSE(parts[0].isMember("thoughtSignature"));
  EXPECT_EQ(parts[1]["functionCall"]["name"].asString(), "read");
  EXPECT_EQ(parts[1]["thoughtSignature"].asString(), "SIG-CALL");
  EXPECT_FALSE(parts[2].isMember("thoughtSignature"));
  EXPECT_EQ(c[2]["role"].asString(), "user");
  ASSERT_EQ(c[2]["parts"].size(), 2u);
  EXPECT_EQ(c[2]["parts"][0]["functionResponse"]["response"]["output"].asString(), "out call_r1_0");
  EXPECT_EQ(c[2]["parts"][1]["functionResponse"]["response"]["error"].asString(), "out c2");
  EXPECT_EQ((*body)["systemInstruction"]["parts"][0]["text"].asString(), "be brief");
  EXPECT_EQ((*body)["generationConfig"]["thinkingConfig"]["thinkingBudget"].asInt(), 8192);
  EXPECT_TRUE((*body)["generationConfig"]["thinkingConfig"]["includeThoughts"].asBool());
  const Json::Value& decl = (*body)["tools"][0]["functionDeclarations"][0];
  EXPECT_EQ(decl["name"].asString(), "read");
  EXPECT_EQ(decl["parametersJsonSchema"]["type"].asString(), "object");

  // Another provider's signatures are not sent; Gemini 3 takes a level.
  history[1].assistant.Edit().provider = "other";
  req.messages = history;
  auto other = ParseJson(WriteGeminiBody(req, {"gemini", true, "gemini-3-pro-preview"}));
  ASSERT_TRUE(other.ok());
  for (const Json::Value& p : (*other)["contents"][1]["parts"])
    EXPECT_FALSE(p.isMember("thoughtSignature") || p.isMember("thought"));
  EXPECT_EQ((*other)["generationConfig"]["thinkingConfig"]["thinkingLevel"].asString(), "high");
}

EnvLookup GeminiEnv(const char* name) {
  return [name](const std::string& k) -> std::optional<std::string> {
    if (k == name) return std::string("g-key");
    return std::nullopt;
  };
}

TEST(GeminiProviderTest, StreamsFromTheNativeEndpointWithTheKeyHeader) {
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    server.Stream(res, {Step::Write(ThinkingAndCall())});
  });
  config::ProviderSettings s = *config::FindBuiltinProvider("gemini");
  s.base_url = server.url("/v1beta");
  // GOOGLE_API_KEY stands in for GEMINI_API_KEY.
  auto p = MakeHttpProvider(s, "gemini-2.5-flash", GeminiEnv("GOOGLE_API_KEY"));
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  std::vector<Message> history(1);
  history[0].content = {ContentBlock::Text("hi")};
  ModelRequest req;
  req.model = "gemini-2.5-flash";
  req.messages = history;
  auto r = (*p)->Stream(req, [](const StreamDelta&) { return true; }, CancelToken(), {});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(server.request(0).path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
  EXPECT_EQ(server.request(0).Header("x-goog-api-key"), "g-key");
  EXPECT_EQ(r->message.provider(), "gemini");
  EXPECT_EQ(r->message.stop_reason, StopReason::kToolUse);
  const config::ModelInfo* info = config::FindModel(s, "gemini-2.5-flash");
  ASSERT_NE(info, nullptr);
  EXPECT_DOUBLE_EQ(
      r->message.usage().cost,
      (200 * info->input_price + 1000 * info->cache_read_price + 80 * info->output_price) / 1e6);
  EXPECT_FALSE(MakeHttpProvider(s, "gemini-2.5-flash", GeminiEnv("NOTHING")).ok());
}

TEST(GeminiCatalogueTest, CurrentModelsHaveLimitsAndPrices) {
  const config::ProviderSettings* g = config::FindBuiltinProvider("gemini");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->api, "gemini");
  EXPECT_EQ(g->api_key_env, "GEMINI_API_KEY");
  for (const char* id :
       {"gemini-3-pro-preview", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}) {
    const config::ModelInfo* m = config::FindModel(*g, id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_GT(m->context_window, 1000000) << id;
    EXPECT_GT(m->output_price, m->input_price) << id;
    EXPECT_GT(m->input_price, m->cache_read_price) << id;
    EXPECT_TRUE(m->reasoning) << id;
  }
  EXPECT_TRUE(GeminiThinkingByLevel("gemini-3-pro-preview"));
  EXPECT_FALSE(GeminiThinkingByLevel("gemini-2.5-pro"));
}

}  // namespace
}  // namespace lousho::agent

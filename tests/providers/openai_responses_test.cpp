// Tests of the OpenAI Responses request body and stream decoder, on event sequences written from
// the published API reference (streaming events, reasoning items, function and custom tool
// calls), and of the provider over loopback HTTP.
#include "agent/providers/openai_responses.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

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

// One event as the API sends it: the name line, then the data with its type first.
std::string WireEvent(const std::string& type, const std::string& members) {
  return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + members + "}\n\n";
}

std::string Quote(const std::string& s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string TextDelta(int output_index, const std::string& text) {
  return WireEvent("response.output_text.delta",
                   R"("sequence_number":7,"item_id":"msg_1","output_index":)" +
                       std::to_string(output_index) + R"(,"content_index":0,"delta":)" +
                       Quote(text) + R"(,"logprobs":[])");
}

std::string Completed(const std::string& status = "completed", const std::string& extra = "") {
  return WireEvent(
      status == "completed" ? "response.completed" : "response.incomplete",
      R"("sequence_number":40,"response":{"id":"resp_1","object":"response","status":")" + status +
          "\"" + extra +
          R"(,"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1000},"output_tokens":80,"output_tokens_details":{"reasoning_tokens":40},"total_tokens":1280}})");
}

// Reasoning (two summary parts, encrypted content), text, a function call and a custom call.
std::string FullSequence() {
  std::string s =
      WireEvent(
          "response.created",
          R"("sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]})") +
      WireEvent(
          "response.in_progress",
          R"("sequence_number":1,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]})") +
      WireEvent(
          "response.output_item.added",
          R"("sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]})") +
      WireEvent(
          "response.reasoning_summary_part.added",
          R"("sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""})") +
      WireEvent(
          "response.reasoning_summary_text.delta",
          R"("sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Reading**")") +
      WireEvent(
          "response.reasoning_summary_text.delta",
          R"("sequence_number":5,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":" the file")") +
      WireEvent(
          "response.reasoning_summary_text.done",
          R"("sequence_number":6,"item_id":"rs_1","output_index":0,"summary_index":0,"text":"**Reading** the file")") +
      WireEvent(
          "response.reasoning_summary_text.delta",
          R"("sequence_number":7,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Then a patch")") +
      WireEvent(
          "response.output_item.done",
          R"("sequence_number":8,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Reading** the file"},{"type":"summary_text","text":"Then a patch"}],"encrypted_content":"gAAAAenc=="})") +
      WireEvent(
          "response.output_item.added",
          R"("sequence_number":9,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]})") +
      WireEvent(
          "response.content_part.added",
          R"("sequence_number":10,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]})") +
      TextDelta(1, "I will ") + TextDelta(1, "read it.") +
      WireEvent(
          "response.output_text.done",
          R"("sequence_number":13,"item_id":"msg_1","output_index":1,"content_index":0,"text":"I will read it.")") +
      WireEvent(
          "response.output_item.done",
          R"("sequence_number":14,"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"I will read it.","annotations":[]}]})") +
      WireEvent(
          "response.output_item.added",
          R"("sequence_number":15,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"read"})") +
      WireEvent("response.function_call_arguments.delta",
                R"("sequence_number":16,"item_id":"fc_1","output_index":2,"delta":"{\"path\":")") +
      WireEvent("response.function_call_arguments.delta",
                R"("sequence_number":17,"item_id":"fc_1","output_index":2,"delta":"\"a.txt\"}")") +
      WireEvent(
          "response.function_call_arguments.done",
          R"("sequence_number":18,"item_id":"fc_1","output_index":2,"arguments":"{\"path\":\"a.txt\"}")") +
      WireEvent(
          "response.output_item.done",
          R"("sequence_number":19,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"path\":\"a.txt\"}","call_id":"call_1","name":"read"})") +
      WireEvent(
          "response.output_item.added",
          R"("sequence_number":20,"output_index":3,"item":{"id":"ctc_1","type":"custom_tool_call","status":"in_progress","call_id":"call_2","name":"apply_patch","input":""})") +
      WireEvent(
          "response.custom_tool_call_input.delta",
          R"("sequence_number":21,"item_id":"ctc_1","output_index":3,"delta":"*** Begin Patch\n*** Delete File: \"q\".txt\n")") +
      WireEvent(
          "response.custom_tool_call_input.delta",
          R"("sequence_number":22,"item_id":"ctc_1","output_index":3,"delta":"*** End Patch")") +
      WireEvent(
          "response.custom_tool_call_input.done",
          R"("sequence_number":23,"item_id":"ctc_1","output_index":3,"input":"*** Begin Patch\n*** Delete File: \"q\".txt\n*** End Patch")") +
      WireEvent(
          "response.output_item.done",
          R"("sequence_number":24,"output_index":3,"item":{"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** Delete File: \"q\".txt\n*** End Patch"})") +
      Completed();
  return s;
}

TEST(OpenAiResponsesDecoderTest, ReasoningTextFunctionAndCustomCalls) {
  OpenAiResponsesDecoder d;
  auto run = RunDecoder(d, FullSequence());
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  EXPECT_TRUE(run.done);
  const Message& m = run.message;
  ASSERT_EQ(m.content.size(), 4u);
  EXPECT_EQ(m.content[0].type, BlockType::kThinking);
  EXPECT_EQ(m.content[0].text, "**Reading** the file\n\nThen a patch");
  EXPECT_EQ(m.content[0].signature(), "openai-responses:gAAAAenc==");
  EXPECT_EQ(m.content[1].text, "I will read it.");
  EXPECT_EQ(m.content[2].id(), "call_1");
  EXPECT_EQ(m.content[2].name(), "read");
  EXPECT_EQ(m.content[2].arguments()["path"].asString(), "a.txt");
  EXPECT_EQ(m.content[3].id(), "call_2");
  EXPECT_EQ(m.content[3].name(), "apply_patch");
  EXPECT_EQ(m.content[3].arguments()["input"].asString(),
            "*** Begin Patch\n*** Delete File: \"q\".txt\n*** End Patch");
  EXPECT_EQ(m.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(m.usage().input, 200);
  EXPECT_EQ(m.usage().cache_read, 1000);
  EXPECT_EQ(m.usage().output, 80);
  // Thinking and text stream as deltas; the custom call's input streams as JSON fragments.
  const std::string deltas = DeltaString(run.deltas);
  EXPECT_NE(deltas.find("R0:**Reading**|R0: the file|R0:\n\nThen a patch|"), std::string::npos)
      << deltas;
  EXPECT_NE(deltas.find("T1:I will |T1:read it.|"), std::string::npos) << deltas;
  EXPECT_NE(deltas.find("S3:call_2/apply_patch|A3:{\"input\":\"|A3:*** Begin Patch\\n"),
            std::string::npos)
      << deltas;
}

TEST(OpenAiResponsesDecoderTest, SameAtEverySplit) {
  ExpectSameAtEverySplit(FullSequence(), [] { return std::make_unique<OpenAiResponsesDecoder>(); });
}

TEST(OpenAiResponsesDecoderTest, ItemsWithoutDeltasTakeTheDoneItemsText) {
  const std::string s =
      WireEvent(
          "response.output_item.done",
          R"("output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Whole"}],"encrypted_content":"E"})") +
      WireEvent(
          "response.output_item.added",
          R"("output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]})") +
      WireEvent(
          "response.output_item.done",
          R"("output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Done text"}]})") +
      WireEvent(
          "response.output_item.done",
          R"("output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"c9","name":"ls","arguments":"{}"})") +
      Completed();
  OpenAiResponsesDecoder d;
  auto run = RunDecoder(d, s);
  ASSERT_TRUE(run.status.ok()) << run.status.error().ToString();
  ASSERT_EQ(run.message.content.size(), 3u);
  EXPECT_EQ(run.message.content[0].text, "Whole");
  EXPECT_EQ(run.message.content[0].signature(), "openai-responses:E");
  EXPECT_EQ(run.message.content[1].text, "Done text");
  EXPECT_EQ(run.message.content[2].id(), "c9");
  EXPECT_TRUE(run.message.content[2].arguments().isObject());
}

TEST(OpenAiResponsesDecoderTest, IncompleteFailedErrorAndCutStreams) {
  {
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(
        d, TextDelta(0, "Hi") +
               Completed("incomplete", R"(,"incomplete_details":{"reason":"max_output_tokens"})"));
    ASSERT_TRUE(run.status.ok());
    EXPECT_EQ(run.message.stop_reason, StopReason::kMaxTokens);
  }
  {
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(
        d, Completed("incomplete", R"(,"incomplete_details":{"reason":"content_filter"})"));
    EXPECT_EQ(run.message.stop_reason, StopReason::kRefusal);
  }
  {
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(
        d,
        TextDelta(0, "Hi") +
            WireEvent(
                "response.failed",
                R"("response":{"id":"r","status":"failed","error":{"code":"server_error","message":"The model crashed"}})"));
    ASSERT_FALSE(run.status.ok());
    EXPECT_NE(run.status.error().message.find("The model crashed"), std::string::npos);
  }
  {
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(
        d,
        WireEvent("error", R"("code":"rate_limit_exceeded","message":"Slow down","param":null)"));
    ASSERT_FALSE(run.status.ok());
    EXPECT_NE(run.status.error().message.find("Slow down"), std::string::npos);
  }
  {
    // No response.completed: not complete, and an unfinished call is left out.
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(
        d,
        TextDelta(0, "Hi") +
            WireEvent(
                "response.output_item.added",
                R"("output_index":1,"item":{"type":"function_call","call_id":"c","name":"ls","arguments":""})") +
            WireEvent("response.function_call_arguments.delta",
                      R"("output_index":1,"delta":"{\"pa")"));
    EXPECT_FALSE(run.complete);
    ASSERT_EQ(run.message.content.size(), 1u);
    EXPECT_EQ(run.message.content[0].text, "Hi");
  }
  {
    OpenAiResponsesDecoder d;
    auto run = RunDecoder(d, "data: {nope\n\n");
    ASSERT_FALSE(run.status.ok());
    EXPECT_EQ(run.status.error().code, kProviderBadResponse);
  }
  {
    OpenAiResponsesDecoder d;
    auto run =
        RunDecoder(d, WireEvent("response.output_text.delta", R"("output_index":-1,"delta":"x")"));
    ASSERT_FALSE(run.status.ok());
    EXPECT_EQ(run.status.error().code, kProviderBadResponse);
  }
}

TEST(OpenAiResponsesPlainDeltaTest, ReadsEveryEventAsTheGeneralPathDoes) {
  const std::vector<std::string> members = {R"("sequence_number":12)",
                                            R"("item_id":"msg_1")",
                                            R"("output_index":1)",
                                            R"("content_index":0)",
                                            R"("logprobs":[])",
                                            R"("logprobs":[1])",
                                            R"("obfuscation":"a\/b")",
                                            R"("z":null)",
                                            R"("neg":-7)",
                                            R"("bad":01)",
                                            R"("type":"response.refusal.delta")",
                                            R"("o":{})",
                                            R"("u":"\u0041")",
                                            R"("output_index":-1)",
                                            R"("output_index":1025)",
                                            R"("output_index":007)",
                                            R"("output_index":1.5)"};
  const std::vector<std::string> pieces = {"a",  " ",    "\"",       "\\",   "/",   "\n",
                                           "\t", "\x01", "\xc3\xa9", "\xff", "tok "};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick_member(0, members.size() - 1);
  std::uniform_int_distribution<size_t> pick_piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> few(0, 4);
  for (int round = 0; round < 400; ++round) {
    std::string fast_stream;
    std::string slow_stream;
    for (int c = 0; c < 6; ++c) {
      std::string text;
      for (int n = few(rng); n > 0; --n) text += pieces[pick_piece(rng)];
      std::vector<std::string> parts = {R"("type":"response.output_text.delta")"};
      for (int n = few(rng); n > 0; --n) parts.push_back(members[pick_member(rng)]);
      parts.insert(parts.begin() + static_cast<long>(few(rng) % (parts.size() + 1)),
                   "\"delta\":" + Quote(text));
      std::string body;
      for (const auto& p : parts) body += (body.empty() ? "" : ",") + p;
      fast_stream += "data: {" + body + "}\n\n";
      slow_stream += "data: { " + body + "}\n\n";
    }
    OpenAiResponsesDecoder plain;
    OpenAiResponsesDecoder general;
    auto a = RunDecoder(plain, fast_stream);
    auto b = RunDecoder(general, slow_stream);
    ASSERT_EQ(DeltaString(a.deltas), DeltaString(b.deltas)) << "round " << round;
    ASSERT_EQ(a.status.ok(), b.status.ok()) << "round " << round;
    ASSERT_EQ(a.message.TextContent(), b.message.TextContent()) << "round " << round;
  }
}

// A conversation: a user turn, an assistant turn with reasoning, text, a function call and a
// custom call, their results (one with an image), and a reply from another provider.
std::vector<Message> Conversation() {
  Message u;
  u.content = {ContentBlock::Text("fix it")};
  Message a;
  a.role = Role::kAssistant;
  a.assistant.Edit().provider = "openai";
  a.content = {ContentBlock::Thinking("thought", "openai-responses:ENC"),
               ContentBlock::Text("Looking."),
               ContentBlock::ToolCall("call_1", "read", ParseJson(R"({"path":"a"})").value()),
               ContentBlock::ToolCall("call_2", "apply_patch",
                                      ParseJson(R"({"input":"*** Begin Patch"})").value())};
  Message r1;
  r1.role = Role::kToolResult;
  r1.tool_call_id = "call_1";
  r1.tool_name = "read";
  r1.content = {ContentBlock::Text("text of a"), ContentBlock::Image("image/png", "AAAA")};
  Message r2;
  r2.role = Role::kToolResult;
  r2.tool_call_id = "call_2";
  r2.tool_name = "apply_patch";
  r2.content = {ContentBlock::Text("Applied")};
  Message other;
  other.role = Role::kAssistant;
  other.assistant.Edit().provider = "elsewhere";
  other.content = {ContentBlock::Thinking("foreign", "openai-responses:X"),
                   ContentBlock::Text("Done.")};
  return {u, a, r1, r2, other};
}

std::vector<ToolSchema> Tools() {
  ToolSchema read{"read", "Read a file", ParseJson(R"({"type":"object"})").value()};
  ToolSchema patch{
      "apply_patch", "Patch files",
      ParseJson(R"({"type":"object","x-lousho-freeform-grammar":"start: \"x\""})").value()};
  return {read, patch};
}

TEST(OpenAiResponsesBodyTest, InputItemsToolsAndOptions) {
  const std::vector<Message> history = Conversation();
  ModelRequest r;
  r.model = "gpt-5-codex";
  r.system = "Be brief.";
  r.messages = history;
  r.tools = Tools();
  r.thinking = ThinkingLevel::kHigh;
  r.max_output_tokens = 5000;
  OpenAiResponsesBodyOptions o;
  o.provider_name = "openai";
  o.reasoning_model = true;
  auto body = ParseJson(WriteOpenAiResponsesBody(r, o));
  ASSERT_TRUE(body.ok());
  const Json::Value& b = *body;
  EXPECT_EQ(b["model"].asString(), "gpt-5-codex");
  EXPECT_EQ(b["instructions"].asString(), "Be brief.");
  EXPECT_FALSE(b["store"].asBool());
  EXPECT_TRUE(b["stream"].asBool());
  EXPECT_FALSE(b.isMember("previous_response_id"));
  EXPECT_EQ(b["include"][0].asString(), "reasoning.encrypted_content");
  EXPECT_EQ(b["reasoning"]["effort"].asString(), "high");
  EXPECT_EQ(b["reasoning"]["summary"].asString(), "auto");
  EXPECT_EQ(b["max_output_tokens"].asInt(), 5000);
  const Json::Value& in = b["input"];
  ASSERT_EQ(in.size(), 9u) << WriteJson(in);
  EXPECT_EQ(in[0]["role"].asString(), "user");
  EXPECT_EQ(in[0]["content"][0]["type"].asString(), "input_text");
  EXPECT_EQ(in[1]["type"].asString(), "reasoning");
  EXPECT_EQ(in[1]["encrypted_content"].asString(), "ENC");
  EXPECT_EQ(in[1]["summary"][0]["text"].asString(), "thought");
  EXPECT_FALSE(in[1].isMember("id"));  // store:false keeps no items to point at
  EXPECT_EQ(in[2]["role"].asString(), "assistant");
  EXPECT_EQ(in[2]["content"][0]["type"].asString(), "output_text");
  EXPECT_EQ(in[2]["content"][0]["text"].asString(), "Looking.");
  EXPECT_EQ(in[3]["type"].asString(), "function_call");
  EXPECT_EQ(in[3]["call_id"].asString(), "call_1");
  EXPECT_EQ(in[3]["arguments"].asString(), R"({"path":"a"})");
  EXPECT_EQ(in[4]["type"].asString(), "custom_tool_call");
  EXPECT_EQ(in[4]["input"].asString(), "*** Begin Patch");
  EXPECT_EQ(in[5]["type"].asString(), "function_call_output");
  EXPECT_EQ(in[5]["output"].asString(), "text of a");
  EXPECT_EQ(in[6]["type"].asString(), "custom_tool_call_output");
  EXPECT_EQ(in[6]["call_id"].asString(), "call_2");
  EXPECT_EQ(in[7]["role"].asString(), "user");  // the tool result's image, after the run
  EXPECT_EQ(in[7]["content"][1]["type"].asString(), "input_image");
  EXPECT_EQ(in[7]["content"][1]["image_url"].asString(), "data:image/png;base64,AAAA");
  // Another provider's reasoning is not sent; its text is.
  EXPECT_EQ(in[8]["role"].asString(), "assistant");
  EXPECT_EQ(in[8]["content"][0]["text"].asString(), "Done.");
  const Json::Value& tools = b["tools"];
  EXPECT_EQ(tools[0]["type"].asString(), "function");
  EXPECT_EQ(tools[0]["name"].asString(), "read");
  EXPECT_FALSE(tools[0]["strict"].asBool());
  EXPECT_EQ(tools[1]["type"].asString(), "custom");
  EXPECT_EQ(tools[1]["format"]["type"].asString(), "grammar");
  EXPECT_EQ(tools[1]["format"]["syntax"].asString(), "lark");
  EXPECT_EQ(tools[1]["format"]["definition"].asString(), "start: \"x\"");
}

TEST(OpenAiResponsesBodyTest, NonReasoningModelsGetNoReasoningMembers) {
  const std::vector<Message> history = Conversation();
  ModelRequest r;
  r.messages = history;
  OpenAiResponsesBodyOptions o;
  o.provider_name = "openai";
  o.model = "gpt-4.1";
  auto body = ParseJson(WriteOpenAiResponsesBody(r, o));
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["model"].asString(), "gpt-4.1");
  EXPECT_FALSE(body->isMember("include"));
  EXPECT_FALSE(body->isMember("reasoning"));
  EXPECT_FALSE(body->isMember("tools"));
  // No reasoning item for a model without reasoning; without the freeform tool in the request,
  // the patch call goes as a function call.
  const Json::Value& in = (*body)["input"];
  ASSERT_EQ(in.size(), 8u) << WriteJson(in);
  EXPECT_EQ(in[1]["type"].asString(), "message");
  EXPECT_EQ(in[3]["type"].asString(), "function_call");
  EXPECT_EQ(in[3]["call_id"].asString(), "call_2");
  EXPECT_EQ(in[5]["type"].asString(), "function_call_output");
  EXPECT_EQ(in[5]["call_id"].asString(), "call_2");
}

std::map<std::string, std::string> Keys() { return {{"OPENAI_API_KEY", "sk-test"}}; }

GetEnvFn KeyEnv() {
  return [](const std::string& k) -> std::optional<std::string> {
    auto keys = Keys();
    auto it = keys.find(k);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

// The catalogue's codex models go to /responses even though the openai provider speaks chat,
// and their encrypted reasoning comes back with the tool result.
TEST(OpenAiResponsesProviderTest, CodexModelStreamsAndSendsItsReasoningBack) {
  LoopbackServer server([&](int n, const httplib::Request&, httplib::Response& res) {
    if (n == 0) {
      server.Stream(res, {Step::Write(FullSequence())});
    } else {
      server.Stream(res, {Step::Write(TextDelta(0, "Done.")), Step::Write(Completed())});
    }
  });
  config::ProviderSettings s = *config::FindBuiltinProvider("openai");
  s.base_url = server.url("/v1");
  s.retry_base_ms = 10;
  auto p = MakeHttpProvider(s, "gpt-5-codex", KeyEnv());
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  std::vector<Message> history(1);
  history[0].content = {ContentBlock::Text("fix it")};
  ModelRequest req;
  req.model = "gpt-5-codex";
  req.messages = history;
  req.tools = Tools();
  std::string thinking;
  auto on_delta = [&](const StreamDelta& d) {
    if (d.kind == DeltaKind::kThinking) thinking += d.text;
    return true;
  };
  auto r1 = (*p)->Stream(req, on_delta, CancelToken(), RetryHooks());
  ASSERT_TRUE(r1.ok()) << r1.error().ToString();
  EXPECT_EQ(thinking, "**Reading** the file\n\nThen a patch");
  EXPECT_EQ(server.request(0).path, "/v1/responses");
  EXPECT_EQ(server.request(0).Header("Authorization"), "Bearer sk-test");
  const config::ModelInfo* info = config::FindModel(s, "gpt-5-codex");
  ASSERT_NE(info, nullptr);
  EXPECT_GT(r1->message.usage().cost, 0);
  EXPECT_DOUBLE_EQ(
      r1->message.usage().cost,
      (200 * info->input_price + 1000 * info->cache_read_price + 80 * info->output_price) / 1e6);

  history.push_back(r1->message);
  for (const char* id : {"call_1", "call_2"}) {
    Message result;
    result.role = Role::kToolResult;
    result.tool_call_id = id;
    result.tool_name = std::string(id) == "call_1" ? "read" : "apply_patch";
    result.content = {ContentBlock::Text("ok")};
    history.push_back(result);
  }
  req.messages = history;
  auto r2 = (*p)->Stream(req, on_delta, CancelToken(), RetryHooks());
  ASSERT_TRUE(r2.ok()) << r2.error().ToString();
  EXPECT_EQ(r2->message.TextContent(), "Done.");
  auto body = ParseJson(server.request(1).body);
  ASSERT_TRUE(body.ok());
  const Json::Value& in = (*body)["input"];
  ASSERT_GE(in.size(), 2u);
  EXPECT_EQ(in[1]["type"].asString(), "reasoning");
  EXPECT_EQ(in[1]["encrypted_content"].asString(), "gAAAAenc==");
  EXPECT_EQ(in[in.size() - 1]["type"].asString(), "custom_tool_call_output");
}

TEST(OpenAiResponsesProviderTest, ApiValueSelectsItForAnyModelAndUnknownApisFail) {
  config::ProviderSettings s = *config::FindBuiltinProvider("openai");
  auto chat = MakeHttpProvider(s, "gpt-4o", KeyEnv());
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(dynamic_cast<OpenAiResponsesProvider*>(chat->get()), nullptr);
  s.api = "openai-responses";
  auto responses = MakeHttpProvider(s, "gpt-4o", KeyEnv());
  ASSERT_TRUE(responses.ok());
  EXPECT_NE(dynamic_cast<OpenAiResponsesProvider*>(responses->get()), nullptr);
  s.api = "openai-nonsense";
  auto bad = MakeHttpProvider(s, "gpt-4o", KeyEnv());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("openai-responses"), std::string::npos);
}

TEST(OpenAiResponsesCatalogueTest, CodexAndProModelsAreResponsesOnlyWithPrices) {
  const config::ProviderSettings* openai = config::FindBuiltinProvider("openai");
  ASSERT_NE(openai, nullptr);
  for (const char* id : {"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini",
                         "gpt-5-pro", "o3-pro"}) {
    const config::ModelInfo* m = config::FindModel(*openai, id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_TRUE(config::ResponsesOnlyModel(*openai, id)) << id;
    EXPECT_GT(m->context_window, 0) << id;
    EXPECT_GT(m->input_price, 0) << id;
    EXPECT_GT(m->output_price, 0) << id;
  }
  EXPECT_FALSE(config::ResponsesOnlyModel(*openai, "gpt-5"));
  EXPECT_FALSE(config::ResponsesOnlyModel(*config::FindBuiltinProvider("openrouter"), "o3-pro"));
}

}  // namespace
}  // namespace lousho::agent

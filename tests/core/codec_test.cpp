// Tests of the ACP codec: engine events to updates, prompts to blocks, permission answers.
#include "acp/codec.h"

#include <gtest/gtest.h>

#include "support/json_util.h"

namespace lousho::acp {
namespace {
using agent::Event;
using agent::EventType;

Json::Value J(const char* s) { return *ParseJson(s); }

TEST(CodecTest, TextAndThinkingDeltasBecomeChunks) {
  Event e;
  e.type = EventType::kMessageUpdate;
  e.delta.kind = agent::DeltaKind::kText;
  e.delta.text = "hi";
  EXPECT_EQ(*UpdateFromEvent(e),
            J(R"({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}})"));
  e.delta.kind = agent::DeltaKind::kThinking;
  EXPECT_EQ((*UpdateFromEvent(e))["sessionUpdate"].asString(), "agent_thought_chunk");
  e.delta.kind = agent::DeltaKind::kToolCallArgs;
  EXPECT_FALSE(UpdateFromEvent(e).has_value());
}

TEST(CodecTest, ToolLifecycle) {
  Event e;
  e.type = EventType::kToolExecutionStart;
  e.tool_call_id = "c1";
  e.title = "Read a.txt";
  e.kind = agent::ToolKind::kRead;
  e.args = J(R"({"path":"a.txt"})");
  e.locations = {{"/w/a.txt", 3}};
  EXPECT_EQ(*UpdateFromEvent(e), J(R"({"sessionUpdate":"tool_call","toolCallId":"c1",
      "title":"Read a.txt","kind":"read","status":"pending","rawInput":{"path":"a.txt"},
      "locations":[{"path":"/w/a.txt","line":3}]})"));
  agent::ToolOutput out = agent::ToolOutput::Text("ok");
  out.diffs.push_back({"/w/a.txt", std::nullopt, "new"});
  e.type = EventType::kToolExecutionEnd;
  e.output = &out;
  Json::Value end = *UpdateFromEvent(e);
  EXPECT_EQ(end["status"].asString(), "completed");
  EXPECT_EQ(end["content"][0],
            J(R"({"type":"diff","path":"/w/a.txt","oldText":null,"newText":"new"})"));
  EXPECT_EQ(end["content"][1]["content"]["text"].asString(), "ok");
  EXPECT_EQ(end["rawOutput"]["output"].asString(), "ok");
  e.is_error = true;
  EXPECT_EQ((*UpdateFromEvent(e))["status"].asString(), "failed");
}

TEST(CodecTest, PlanModeAndUsage) {
  Event p;
  p.type = EventType::kPlanUpdate;
  p.plan = {{"step", "high", "in_progress"}};
  EXPECT_EQ(*UpdateFromEvent(p), J(R"({"sessionUpdate":"plan","entries":[
      {"content":"step","priority":"high","status":"in_progress"}]})"));
  Event m;
  m.type = EventType::kModeChanged;
  m.mode_id = "plan";
  EXPECT_EQ(*UpdateFromEvent(m),
            J(R"({"sessionUpdate":"current_mode_update","currentModeId":"plan"})"));
  Event u;
  u.type = EventType::kUsageUpdate;
  u.context_used = 10;
  u.context_size = 100;
  u.session_cost = 0.5;
  EXPECT_EQ(*UpdateFromEvent(u), J(R"({"sessionUpdate":"usage_update","used":10,"size":100,
      "cost":{"amount":0.5,"currency":"USD"}})"));
}

TEST(CodecTest, PromptBlocksDegradeRatherThanFail) {
  auto blocks = PromptFromJson(J(R"([{"type":"text","text":"a"},
      {"type":"resource_link","uri":"file:///x.c","name":"x.c"},
      {"type":"resource","resource":{"uri":"file:///y","text":"body"}},
      {"type":"image","data":"AAA","mimeType":"image/png"},
      {"type":"audio","data":"AAA","mimeType":"audio/wav"}])"),
                               /*images_supported=*/false);
  ASSERT_TRUE(blocks.ok());
  ASSERT_EQ(blocks->size(), 5u);
  EXPECT_EQ((*blocks)[1].text, "[x.c](file:///x.c)");
  EXPECT_EQ((*blocks)[2].text, "Contents of file:///y:\n```\nbody\n```");
  EXPECT_EQ((*blocks)[3].type, agent::BlockType::kText);
  EXPECT_NE((*blocks)[4].text.find("audio"), std::string::npos);
  auto with_images =
      PromptFromJson(J(R"([{"type":"image","data":"AAA","mimeType":"image/png"}])"), true);
  EXPECT_EQ((*with_images)[0].type, agent::BlockType::kImage);
  auto bad = PromptFromJson(J(R"([{"type":"resource_link","name":"x"}])"), true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "params.prompt[0].uri: required");
}

TEST(CodecTest, PermissionAnswers) {
  using D = agent::PermissionDecision;
  EXPECT_EQ(PermissionDecisionFromJson(
                J(R"({"outcome":{"outcome":"selected","optionId":"allow_always"}})")),
            D::kAllowAlways);
  EXPECT_EQ(PermissionDecisionFromJson(J(R"({"outcome":{"outcome":"cancelled"}})")), D::kCancelled);
  // An option we never offered is a rejection, never an approval.
  EXPECT_EQ(
      PermissionDecisionFromJson(J(R"({"outcome":{"outcome":"selected","optionId":"yes!"}})")),
      D::kRejectOnce);
  EXPECT_EQ(PermissionDecisionFromJson(Json::Value()), D::kRejectOnce);
  agent::PermissionRequest req;
  req.tool_call_id = "c1";
  req.title = "rm x";
  req.kind = agent::ToolKind::kExecute;
  Json::Value p = PermissionRequestToJson("s1", req);
  EXPECT_EQ(p["toolCall"]["toolCallId"].asString(), "c1");
  ASSERT_EQ(p["options"].size(), 4u);
  EXPECT_EQ(p["options"][0]["kind"].asString(), "allow_once");
}

}  // namespace
}  // namespace lousho::acp

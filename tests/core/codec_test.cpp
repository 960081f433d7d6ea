// Tests of the ACP codec: engine events to updates, prompts to blocks, permission answers.
#include "acp/codec.h"

#include <gtest/gtest.h>

#include "support/json_util.h"

namespace lousho::acp {
namespace {
using agent::Event;
namespace ev = agent::event;

Json::Value J(const char* s) { return *ParseJson(s); }

TEST(CodecTest, TextAndThinkingDeltasBecomeChunks) {
  agent::StreamDelta d;
  d.kind = agent::DeltaKind::kText;
  d.text = "hi";
  const Event e = ev::MessageUpdate{1, &d, nullptr, {}};
  EXPECT_EQ(J(ChunkUpdateParamsJson("s", e)->c_str()),
            J(R"({"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",)"
              R"("content":{"type":"text","text":"hi"}}})"));
  EXPECT_FALSE(UpdateFromEvent(e).has_value());  // the chunk is ChunkUpdateParamsJson's alone
  d.kind = agent::DeltaKind::kThinking;
  EXPECT_EQ(J(ChunkUpdateParamsJson("s", e)->c_str())["update"]["sessionUpdate"].asString(),
            "agent_thought_chunk");
  // Tool-call fragments and block boundaries have no chunk of their own.
  for (auto kind :
       {agent::DeltaKind::kToolCallArgs, agent::DeltaKind::kTextStart, agent::DeltaKind::kTextEnd,
        agent::DeltaKind::kThinkingStart, agent::DeltaKind::kThinkingEnd}) {
    d.kind = kind;
    EXPECT_FALSE(UpdateFromEvent(e).has_value());
    EXPECT_FALSE(ChunkUpdateParamsJson("s", e).has_value());
  }
}

TEST(CodecTest, ToolLifecycle) {
  const Json::Value args = J(R"({"path":"a.txt"})");
  ev::ToolCall call;
  call.id = "c1";
  call.title = "Read a.txt";
  call.kind = agent::ToolKind::kRead;
  call.args = &args;
  call.locations = {{"/w/a.txt", 3}};
  EXPECT_EQ(*UpdateFromEvent(ev::ToolExecutionStart{1, &call}),
            J(R"({"sessionUpdate":"tool_call","toolCallId":"c1",
      "title":"Read a.txt","kind":"read","status":"pending","rawInput":{"path":"a.txt"},
      "locations":[{"path":"/w/a.txt","line":3}]})"));
  agent::ToolOutput out = agent::ToolOutput::Text("ok");
  out.diffs.push_back({"/w/a.txt", std::nullopt, "new"});
  Json::Value end = *UpdateFromEvent(ev::ToolExecutionEnd{1, &call, &out, false});
  EXPECT_EQ(end["status"].asString(), "completed");
  EXPECT_EQ(end["content"][0],
            J(R"({"type":"diff","path":"/w/a.txt","oldText":null,"newText":"new"})"));
  EXPECT_EQ(end["content"][1]["content"]["text"].asString(), "ok");
  EXPECT_EQ(end["rawOutput"]["output"].asString(), "ok");
  EXPECT_EQ((*UpdateFromEvent(ev::ToolExecutionEnd{1, &call, &out, true}))["status"].asString(),
            "failed");
  // Partial output replaces the call's content with the output so far (terminal_output_codec_test).
  EXPECT_EQ((*UpdateFromEvent(
                ev::ToolExecutionUpdate{1, &call, ev::ToolExecutionUpdate::Phase::kPartialOutput,
                                        "", "so far", "so far"}))["content"]
                .size(),
            1u);
}

// A stored branch is shown again: what the user saw, in order, and nothing the user never saw.
TEST(CodecTest, ReplayShowsTheBranchAsItWasShown) {
  std::vector<agent::Entry> branch(8);
  branch[0].message.role = agent::Role::kUser;
  branch[0].message.content = {agent::ContentBlock::Text("fix it"),
                               agent::ContentBlock::Image("image/png", "AAAA")};
  branch[1].message.role = agent::Role::kAssistant;
  agent::ContentBlock hidden = agent::ContentBlock::Thinking("opaque");
  hidden.more.Edit().redacted = true;
  Json::Value args(Json::objectValue);
  args["command"] = "make";
  branch[1].message.content = {agent::ContentBlock::Thinking("Let me build."), hidden,
                               agent::ContentBlock::Text("Building."),
                               agent::ContentBlock::ToolCall("c1", "bash", args)};
  branch[2].message.role = agent::Role::kToolResult;
  branch[2].message.tool_call_id = "c1";
  branch[2].message.is_error = true;
  branch[2].message.content = {agent::ContentBlock::Text("make: *** failed")};
  branch[2].message.tool.Edit().title = "make";
  branch[2].message.tool.Edit().kind = agent::ToolKind::kExecute;
  branch[2].message.tool.Edit().terminal_id = "term-of-a-dead-process";
  branch[3].message.role = agent::Role::kUser;  // a stream rule's hidden reminder
  branch[3].message.custom_type = "ttsr-injection";
  branch[3].message.display = false;
  branch[3].message.content = {agent::ContentBlock::Text("<system-interrupt>")};
  branch[4].kind = agent::EntryKind::kModeChange;
  branch[4].more.Edit().mode = "plan";
  branch[5].kind = agent::EntryKind::kCustom;
  branch[5].more.Edit().custom_type = agent::kPlanEntryType;
  branch[5].more.Edit().data =
      J(R"([{"content":"Build","priority":"high","status":"in_progress"}])");
  branch[6].kind = agent::EntryKind::kSessionInfo;
  branch[6].more.Edit().name = "Build fix";
  branch[7].kind = agent::EntryKind::kBranchSummary;  // a lasting leaf move: no update at all
  branch[7].more.Edit().from_id = "00000002";
  std::vector<const agent::Entry*> ptrs;
  ptrs.reserve(branch.size());
  for (const auto& e : branch) ptrs.push_back(&e);

  const auto updates = ReplayUpdates(ptrs);
  std::vector<std::string> kinds;
  kinds.reserve(updates.size());
  for (const auto& u : updates) kinds.push_back(u["sessionUpdate"].asString());
  EXPECT_EQ(kinds, (std::vector<std::string>{"user_message_chunk", "user_message_chunk",
                                             "agent_thought_chunk", "agent_message_chunk",
                                             "tool_call", "tool_call_update", "current_mode_update",
                                             "plan", "session_info_update"}));
  EXPECT_EQ(updates[1]["content"], J(R"({"type":"image","data":"AAAA","mimeType":"image/png"})"));
  EXPECT_EQ(updates[2]["content"]["text"].asString(), "Let me build.");
  EXPECT_EQ(updates[4]["title"].asString(), "make");
  EXPECT_EQ(updates[4]["kind"].asString(), "execute");
  EXPECT_EQ(updates[4]["rawInput"], args);
  EXPECT_EQ(updates[5]["status"].asString(), "failed");
  // The terminal is gone with the old process: its output comes back as text.
  EXPECT_EQ(updates[5]["content"],
            J(R"([{"type":"content","content":{"type":"text","text":"make: *** failed"}}])"));
  EXPECT_EQ(updates[6]["currentModeId"].asString(), "plan");
  EXPECT_EQ(updates[7]["entries"][0]["content"].asString(), "Build");
  EXPECT_EQ(updates[8]["title"].asString(), "Build fix");
}

TEST(CodecTest, PlanModeAndUsage) {
  ev::PlanUpdate p;
  p.plan = {{"step", "high", "in_progress"}};
  EXPECT_EQ(*UpdateFromEvent(p), J(R"({"sessionUpdate":"plan","entries":[
      {"content":"step","priority":"high","status":"in_progress"}]})"));
  EXPECT_EQ(*UpdateFromEvent(ev::ModeChanged{"plan"}),
            J(R"({"sessionUpdate":"current_mode_update","currentModeId":"plan"})"));
  ev::UsageUpdate u;
  u.context_used = 10;
  u.context_size = 100;
  u.session_cost = 0.5;
  EXPECT_EQ(*UpdateFromEvent(u), J(R"({"sessionUpdate":"usage_update","used":10,"size":100,
      "cost":{"amount":0.5,"currency":"USD"}})"));
}

// A compaction is a think tool call for every client, or a compaction_update for a client that
// declared session.compaction.
TEST(CodecTest, CompactionEventsAsToolCallOrCompactionUpdate) {
  ev::AutoCompactionStart start{"compaction-1", "overflow", 900};
  ev::AutoCompactionEnd done;
  done.id = "compaction-1";
  done.reason = "overflow";
  done.will_retry = true;
  done.summary = "S";
  done.tokens_before = 900;
  done.tokens_after = 120;
  EXPECT_EQ(*UpdateFromEvent(Event(start)),
            J(R"j({"sessionUpdate":"tool_call","toolCallId":"compaction-1","kind":"think",
                  "status":"in_progress","rawInput":{"reason":"overflow","tokensBefore":900},
                  "title":"Compacting the conversation (it no longer fit the model)"})j"));
  const Json::Value end = *UpdateFromEvent(Event(done));
  EXPECT_EQ(end["status"].asString(), "completed");
  EXPECT_EQ(end["content"][0]["content"]["text"].asString(),
            "Compacted: about 900 tokens of context became 120.\n\nS");
  EXPECT_EQ(end["rawOutput"],
            J(R"({"tokensBefore":900,"tokensAfter":120,"aborted":false,"willRetry":true})"));
  ev::AutoCompactionEnd failed = done;
  failed.error = "HTTP 503";
  EXPECT_EQ((*UpdateFromEvent(Event(failed)))["status"].asString(), "failed");

  EXPECT_EQ(*CompactionUpdateFromEvent(Event(start)),
            J(R"({"sessionUpdate":"compaction_update","compactionId":"compaction-1",
                  "status":"in_progress"})"));
  EXPECT_EQ(*CompactionUpdateFromEvent(Event(done)),
            J(R"({"sessionUpdate":"compaction_update","compactionId":"compaction-1",
                  "status":"completed","summary":[{"type":"text","text":"S"}]})"));
  EXPECT_EQ(*CompactionUpdateFromEvent(Event(failed)),
            J(R"({"sessionUpdate":"compaction_update","compactionId":"compaction-1",
                  "status":"failed","error":"The history is unchanged: HTTP 503"})"));
  ev::AutoCompactionEnd aborted = done;
  aborted.aborted = true;
  EXPECT_EQ((*CompactionUpdateFromEvent(Event(aborted)))["status"].asString(), "cancelled");
  EXPECT_FALSE(CompactionUpdateFromEvent(Event(ev::AgentStart{})).has_value());
  EXPECT_TRUE(ClientCapabilitiesFromJson(J(R"({"session":{"compaction":{}}})")).compaction);
  EXPECT_FALSE(ClientCapabilitiesFromJson(J(R"({"session":{"compaction":null}})")).compaction);
  EXPECT_FALSE(ClientCapabilitiesFromJson(J(R"({"session":[]})")).compaction);
}

// Config options: the three selects, the offered models (the current one added when missing).
TEST(CodecTest, ConfigOptions) {
  SessionConfigValues v;
  v.mode = agent::PermissionMode::kPlan;
  v.model = "openai/gpt-4o";
  v.thinking = "high";
  const std::vector<agent::ModelOption> offered = {{"anthropic", "claude-haiku-4-5", "Haiku"}};
  const ThinkingLevelNames levels = {{"off", "Off"}, {"high", "High"}};
  const Json::Value opts = ConfigOptionsToJson(v, offered, levels);
  ASSERT_EQ(opts.size(), 3u);
  EXPECT_EQ(opts[0]["currentValue"].asString(), "plan");
  EXPECT_EQ(opts[1]["category"].asString(), "model");
  EXPECT_EQ(opts[1]["options"], J(R"([{"value":"openai/gpt-4o","name":"openai/gpt-4o"},
                  {"value":"anthropic/claude-haiku-4-5","name":"Haiku",
                   "description":"anthropic/claude-haiku-4-5"}])"));
  EXPECT_EQ(opts[2]["currentValue"].asString(), "high");
  EXPECT_EQ(opts[2]["options"],
            J(R"([{"value":"off","name":"Off"},{"value":"high","name":"High"}])"));
  EXPECT_EQ(ConfigOptionUpdate(v, offered, levels)["sessionUpdate"].asString(),
            "config_option_update");
  EXPECT_EQ(ModelsToJson(v.model, offered)["availableModels"].size(), 2u);
  EXPECT_FALSE(SetConfigOptionParams::FromJson(J(R"({"sessionId":"s","configId":"x"})")).ok());
  EXPECT_FALSE(SetModelParams::FromJson(J(R"({"sessionId":"s"})")).ok());
}

TEST(CodecTest, MalformedPermissionAnswersReject) {
  using D = agent::PermissionDecision;
  EXPECT_EQ(PermissionDecisionFromJson(J(R"({"outcome":{"outcome":"selected",
      "optionId":"allow_once"}})")),
            D::kAllowOnce);
  EXPECT_EQ(PermissionDecisionFromJson(J(R"({"outcome":{"outcome":"cancelled"}})")), D::kCancelled);
  for (const char* bad : {R"([])", R"({})", R"({"outcome":7})", R"({"outcome":{"outcome":1}})",
                          R"({"outcome":{"outcome":"selected"}})",
                          R"({"outcome":{"outcome":"selected","optionId":["allow_once"]}})",
                          R"({"outcome":{"outcome":"selected","optionId":"no_such_option"}})",
                          R"({"outcome":{"optionId":"allow_always"}})"})
    EXPECT_EQ(PermissionDecisionFromJson(J(bad)), D::kRejectOnce) << bad;
  EXPECT_EQ(PermissionDecisionFromJson(Json::Value("x")), D::kRejectOnce);
  EXPECT_EQ(PermissionDecisionFromJson(Json::Value(Json::UInt64(1) << 63)), D::kRejectOnce);
}

TEST(CodecTest, TypedParamsNameTheBadField) {
  auto init = InitializeParams::FromJson(J(R"({"protocolVersion":18446744073709551615})"));
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().message, "params.protocolVersion: integer out of range");
  auto prompt = PromptParams::FromJson(J(R"({"sessionId":"s","prompt":[]})"));
  ASSERT_FALSE(prompt.ok());
  EXPECT_EQ(prompt.error().message, "params.prompt: must not be empty");
  auto mode = SetModeParams::FromJson(J(R"({"sessionId":"s","modeId":3})"));
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.error().message, "params.modeId: expected string");
  auto dirs = NewSessionParams::FromJson(J(R"({"cwd":"/","additionalDirectories":["rel"]})"));
  ASSERT_FALSE(dirs.ok());
  auto ok = NewSessionParams::FromJson(J(R"({"cwd":"/w","mcpServers":[],"extra":1})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->cwd, "/w");
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

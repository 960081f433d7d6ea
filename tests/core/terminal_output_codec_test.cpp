// Tests of how the ACP door shows a running command's output: growing text content by default,
// a display-only terminal (`_meta.terminal_*`) for clients that announce the convention.
#include <gtest/gtest.h>

#include "acp/codec.h"
#include "support/json_util.h"

namespace lousho::acp {
namespace {
namespace ev = agent::event;
using Phase = ev::ToolExecutionUpdate::Phase;

Json::Value J(const char* s) { return *ParseJson(s); }

struct BashCall {
  Json::Value args = J(R"({"command":"make"})");
  ev::ToolCall call;
  BashCall() {
    call.id = "c1";
    call.name = "bash";
    call.title = "make";
    call.kind = agent::ToolKind::kExecute;
    call.args = &args;
  }
};

TEST(TerminalOutputCodecTest, PartialOutputIsTheOutputSoFarAsACodeBlock) {
  BashCall b;
  Json::Value u = *UpdateFromEvent(
      ev::ToolExecutionUpdate{1, &b.call, Phase::kPartialOutput, "", "a\nb", "b\n"});
  EXPECT_EQ(u, J(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[
      {"type":"content","content":{"type":"text","text":"```\na\nb\n```"}}]})"));
  // A fence never closes early on backticks in the output.
  u = *UpdateFromEvent(
      ev::ToolExecutionUpdate{1, &b.call, Phase::kPartialOutput, "", "x\n````\ny", ""});
  EXPECT_EQ(u["content"][0]["content"]["text"].asString(), "`````\nx\n````\ny\n`````");
  // Without the convention, nothing is a terminal.
  const Json::Value start = *UpdateFromEvent(ev::ToolExecutionStart{1, &b.call});
  EXPECT_FALSE(start.isMember("content"));
  EXPECT_FALSE(start.isMember("_meta"));
  EXPECT_EQ(start["rawInput"]["command"].asString(), "make");  // the command line is shown
  EXPECT_EQ(start["title"].asString(), "make");
}

TEST(TerminalOutputCodecTest, TheConventionShowsADisplayTerminal) {
  BashCall b;
  EXPECT_EQ(*TerminalMetaUpdateFromEvent(ev::ToolExecutionStart{1, &b.call}),
            J(R"({"sessionUpdate":"tool_call","toolCallId":"c1","title":"make",
      "kind":"execute","name":"bash","status":"pending","rawInput":{"command":"make"},
      "content":[{"type":"terminal","terminalId":"c1"}],
      "_meta":{"terminal_info":{"terminal_id":"c1"}}})"));
  // Output while it runs: only the new bytes, which the editor appends.
  EXPECT_EQ(*TerminalMetaUpdateFromEvent(
                ev::ToolExecutionUpdate{1, &b.call, Phase::kPartialOutput, "", "a\nb", "b\n"}),
            J(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1",
      "_meta":{"terminal_output":{"terminal_id":"c1","data":"b\n"}}})"));
  // Other phases are shown as usual.
  EXPECT_FALSE(TerminalMetaUpdateFromEvent(
                   ev::ToolExecutionUpdate{1, &b.call, Phase::kInProgress, "", "", ""})
                   .has_value());
  agent::ToolOutput ok = agent::ToolOutput::Text("a\nb");
  ok.details["exitCode"] = 0;
  EXPECT_EQ(*TerminalMetaUpdateFromEvent(ev::ToolExecutionEnd{1, &b.call, &ok, false}),
            J(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
      "content":[{"type":"terminal","terminalId":"c1"}],"rawOutput":{"exitCode":0},
      "_meta":{"terminal_exit":{"terminal_id":"c1","exit_code":0,"signal":null}}})"));
  // A failure keeps its text beside the terminal (a refused call never ran).
  agent::ToolOutput killed = agent::ToolOutput::Error("out\n\nCommand was killed by SIGKILL");
  killed.details["signal"] = "SIGKILL";
  const Json::Value failed =
      *TerminalMetaUpdateFromEvent(ev::ToolExecutionEnd{1, &b.call, &killed, true});
  EXPECT_EQ(failed["status"].asString(), "failed");
  EXPECT_EQ(failed["content"][0]["type"].asString(), "terminal");
  EXPECT_EQ(failed["content"][1]["content"]["text"].asString(),
            "out\n\nCommand was killed by SIGKILL");
  EXPECT_EQ(failed["_meta"]["terminal_exit"],
            J(R"({"terminal_id":"c1","exit_code":null,"signal":"SIGKILL"})"));
}

TEST(TerminalOutputCodecTest, TheConventionIsForTheLocalBashToolOnly) {
  BashCall b;
  b.call.name = "mcp__shell__run";
  EXPECT_FALSE(TerminalMetaUpdateFromEvent(ev::ToolExecutionStart{1, &b.call}).has_value());
  EXPECT_FALSE(TerminalMetaUpdateFromEvent(
                   ev::ToolExecutionUpdate{1, &b.call, Phase::kPartialOutput, "", "x", "x"})
                   .has_value());
  // A command in an editor terminal shows that terminal instead.
  b.call.name = "bash";
  agent::ToolOutput in_editor = agent::ToolOutput::Text("x");
  in_editor.terminal_id = "term-7";
  EXPECT_FALSE(
      TerminalMetaUpdateFromEvent(ev::ToolExecutionEnd{1, &b.call, &in_editor, false}).has_value());
  EXPECT_FALSE(TerminalMetaUpdateFromEvent(ev::PlanUpdate{}).has_value());
}

TEST(TerminalOutputCodecTest, ClientsAnnounceTheConventionInMeta) {
  EXPECT_TRUE(
      ClientCapabilitiesFromJson(J(R"({"_meta":{"terminal_output":true}})")).meta_terminal_output);
  EXPECT_FALSE(
      ClientCapabilitiesFromJson(J(R"({"_meta":{"terminal_output":"yes"}})")).meta_terminal_output);
  EXPECT_FALSE(ClientCapabilitiesFromJson(J(R"({"terminal":true})")).meta_terminal_output);
}

}  // namespace
}  // namespace lousho::acp

// Tests of the history tree (append, branch, seed, leaf moves) and its JSON codec.
#include "agent/history.h"

#include <gtest/gtest.h>

#include "support/json_util.h"

namespace lousho::agent {
namespace {

Entry MessageEntry(Role role, const std::string& text) {
  Entry e;
  e.message.role = role;
  e.message.content.push_back(ContentBlock::Text(text));
  return e;
}

TEST(HistoryTest, AppendsHangOffTheLeafAndBranchingMovesIt) {
  History h;
  const std::string a = h.Append(MessageEntry(Role::kUser, "a")).id;
  const std::string b = h.Append(MessageEntry(Role::kAssistant, "b")).id;
  EXPECT_EQ(a.size(), 8u);
  EXPECT_NE(a, b);
  EXPECT_EQ(h.Find(b)->parent_id, a);
  ASSERT_EQ(h.messages().size(), 2u);
  // Branch from `a`: the new entry's parent is `a`, the old branch stays in the tree.
  ASSERT_TRUE(h.SetLeaf(a).ok());
  EXPECT_EQ(h.messages().size(), 1u);
  const std::string c = h.Append(MessageEntry(Role::kAssistant, "c")).id;
  EXPECT_EQ(h.Find(c)->parent_id, a);
  EXPECT_EQ(h.entries().size(), 3u);
  ASSERT_EQ(h.messages().size(), 2u);
  EXPECT_EQ(h.messages()[1].TextContent(), "c");
  // Non-message entries are in the tree but not among the messages.
  Entry mode;
  mode.kind = EntryKind::kModeChange;
  mode.mode = "plan";
  h.Append(mode);
  EXPECT_EQ(h.messages().size(), 2u);
  EXPECT_EQ(h.Branch().size(), 3u);
  EXPECT_FALSE(h.SetLeaf("missing").ok());
  ASSERT_TRUE(h.SetLeaf("").ok());
  EXPECT_TRUE(h.messages().empty());
}

TEST(HistoryTest, SeedChecksParentsAndIds) {
  Entry a = MessageEntry(Role::kUser, "a");
  a.id = "00000001";
  Entry b = MessageEntry(Role::kAssistant, "b");
  b.id = "00000002";
  b.parent_id = "00000001";
  History h;
  ASSERT_TRUE(h.Seed({a, b}).ok());
  EXPECT_EQ(h.leaf(), "00000002");
  EXPECT_EQ(h.messages().size(), 2u);
  EXPECT_FALSE(History().Seed({b}).ok());     // parent unknown
  EXPECT_FALSE(History().Seed({a, a}).ok());  // duplicate id
  EXPECT_FALSE(History().Seed({a}, "zzz").ok());
}

TEST(HistoryTest, EveryEntryKindRoundTripsThroughJson) {
  std::vector<Entry> entries;
  Entry user = MessageEntry(Role::kUser, "hi \xc3\xa9");
  user.message.content.push_back(ContentBlock::Image("image/png", "AAAA"));
  entries.push_back(user);
  Entry assistant;
  assistant.message.role = Role::kAssistant;
  assistant.message.content = {ContentBlock::Thinking("hmm", "sig"), ContentBlock::Text("ok"),
                               ContentBlock::ToolCall("c1", "read", *ParseJson(R"({"path":"a"})"))};
  assistant.message.stop_reason = StopReason::kCancelled;
  assistant.message.error_message = "stopped";
  assistant.message.usage.input = 12;
  assistant.message.usage.cost = 0.25;
  assistant.message.provider = "openai";
  assistant.message.model = "gpt";
  entries.push_back(assistant);
  Entry result;
  result.message.role = Role::kToolResult;
  result.message.tool_call_id = "c1";
  result.message.tool_name = "read";
  result.message.is_error = true;
  result.message.content.push_back(ContentBlock::Text("nope"));
  result.message.tool.title = "Read a";
  result.message.tool.kind = ToolKind::kRead;
  result.message.tool.locations = {{"/w/a", 3}};
  result.message.tool.diffs = {{"/w/a", std::nullopt, "new"}};
  result.message.tool.details = *ParseJson(R"({"lines":2})");
  result.message.tool.terminal_id = "t1";
  entries.push_back(result);
  Entry custom = MessageEntry(Role::kUser, "<system-interrupt>x</system-interrupt>");
  custom.message.custom_type = "ttsr-injection";
  custom.message.display = false;
  entries.push_back(custom);
  Entry model;
  model.kind = EntryKind::kModelChange;
  model.provider = "anthropic";
  model.model_id = "claude";
  entries.push_back(model);
  Entry thinking;
  thinking.kind = EntryKind::kThinkingChange;
  thinking.thinking_level = "high";
  entries.push_back(thinking);
  Entry label;
  label.kind = EntryKind::kLabel;
  label.target_id = "abc";
  label.label = "start";
  entries.push_back(label);
  Entry compaction;
  compaction.kind = EntryKind::kCompaction;
  compaction.summary = "so far";
  compaction.first_kept_id = "abc";
  compaction.tokens_before = 999;
  entries.push_back(compaction);
  Entry rules;
  rules.kind = EntryKind::kTtsrInjection;
  rules.rules = {"no-todo"};
  entries.push_back(rules);
  Entry info;
  info.kind = EntryKind::kSessionInfo;
  info.name = "my session";
  entries.push_back(info);

  History h;
  for (auto& e : entries) h.Append(e);
  for (const Entry& e : h.entries()) {
    const std::string line = WriteJson(EntryToJson(e));
    auto parsed = ParseJson(line);
    ASSERT_TRUE(parsed.ok()) << line;
    auto back = EntryFromJson(*parsed, "entry");
    ASSERT_TRUE(back.ok()) << back.error().message;
    // Written again, the entry is the same line: nothing was lost on the way.
    EXPECT_EQ(WriteJson(EntryToJson(*back)), line);
    EXPECT_EQ(back->id, e.id);
    EXPECT_EQ(back->parent_id, e.parent_id);
  }
  const Entry& r = h.entries()[2];
  auto back = EntryFromJson(EntryToJson(r), "e");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->message.tool.title, "Read a");
  EXPECT_EQ(back->message.tool.terminal_id, "t1");
  ASSERT_EQ(back->message.tool.locations.size(), 1u);
  EXPECT_EQ(back->message.tool.locations[0].line, 3);
}

TEST(HistoryTest, MalformedEntriesAreErrorsNamingThePath) {
  for (const char* bad :
       {R"({})", R"({"type":"message","id":"x"})", R"({"type":"warp","id":"x"})",
        R"({"type":"message","id":"x","message":{"role":"alien"}})",
        R"({"type":"message","id":"x","message":{"role":"user","content":[{"type":7}]}})",
        R"({"type":"message","id":7})", R"({"type":"model_change","id":"x","provider":[1]})"}) {
    auto v = ParseJson(bad);
    ASSERT_TRUE(v.ok());
    auto e = EntryFromJson(*v, "line 3");
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_NE(e.error().message.find("line 3"), std::string::npos) << bad;
    }
  }
  // Numbers past their range are read as absent, never thrown.
  auto v = ParseJson(
      R"({"type":"message","id":"x","message":{"role":"assistant","content":[],
          "usage":{"input":18446744073709551615,"output":1e300},"timestamp":-1e400}})");
  if (v.ok()) {
    EXPECT_TRUE(EntryFromJson(*v, "e").ok());
  }
}

TEST(HistoryTest, TimestampsRoundTrip) {
  const long long ms = 1764563470123;
  EXPECT_EQ(IsoTimestamp(ms), "2025-12-01T04:31:10.123Z");
  EXPECT_EQ(ParseIsoTimestamp(IsoTimestamp(ms)), ms);
  EXPECT_EQ(ParseIsoTimestamp("not a time"), 0);
}

}  // namespace
}  // namespace lousho::agent

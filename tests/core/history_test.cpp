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
  mode.more.Edit().mode = "plan";
  h.Append(mode);
  EXPECT_EQ(h.messages().size(), 2u);
  EXPECT_EQ(h.Branch().size(), 3u);
  EXPECT_FALSE(h.SetLeaf("missing").ok());
  ASSERT_TRUE(h.SetLeaf("").ok());
  EXPECT_TRUE(h.messages().empty());
}

// A lasting branch: the summary entry hangs off the branch point and becomes the leaf, so the
// entries in file order (what a reload seeds) end on the chosen branch. Nothing is rewritten.
TEST(HistoryTest, BranchToAppendsASummaryThatKeepsTheLeafOnReload) {
  History h;
  const std::string a = h.Append(MessageEntry(Role::kUser, "a")).id;
  const std::string b = h.Append(MessageEntry(Role::kAssistant, "b")).id;
  const std::string c = h.Append(MessageEntry(Role::kUser, "c")).id;
  const std::string d = h.Append(MessageEntry(Role::kAssistant, "d")).id;
  const std::vector<Json::Value> before = [&] {
    std::vector<Json::Value> v;
    for (const Entry& e : h.entries()) v.push_back(EntryToJson(e));
    return v;
  }();

  auto moved = h.BranchTo(b);
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  ASSERT_NE(*moved, nullptr);
  const Entry summary = **moved;
  EXPECT_EQ(summary.kind, EntryKind::kBranchSummary);
  EXPECT_EQ(summary.parent_id, b);
  EXPECT_EQ(summary.more->from_id, b) << "fromId names the branch point, as pi writes it";
  EXPECT_EQ(summary.more->summary, "");
  EXPECT_EQ(StringOr(summary.more->data, "abandonedLeafId"), d);
  EXPECT_EQ(h.leaf(), summary.id);
  ASSERT_EQ(h.messages().size(), 2u) << "an empty summary is never sent to the model";
  EXPECT_EQ(h.message_id(h.messages().size() - 1), b);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(EntryToJson(h.entries()[i]), before[i]) << "entry " << i << " was rewritten";

  // Moving to where the leaf already is appends nothing, also through the marker.
  auto again = h.BranchTo(b);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, nullptr);
  EXPECT_EQ(h.entries().size(), 5u);
  EXPECT_FALSE(h.BranchTo("missing").ok());
  EXPECT_EQ(h.entries().size(), 5u);

  // Reloaded (the entries in order, the last one the leaf): the branch comes back.
  History reloaded;
  ASSERT_TRUE(reloaded.Seed(h.entries().ToVector()).ok());
  EXPECT_EQ(reloaded.leaf(), summary.id);
  ASSERT_EQ(reloaded.messages().size(), 2u);
  EXPECT_EQ(reloaded.messages()[1].TextContent(), "b");
  // The next message hangs off the marker, on the chosen branch.
  const std::string e = reloaded.Append(MessageEntry(Role::kUser, "e")).id;
  EXPECT_EQ(reloaded.Find(e)->parent_id, summary.id);
  ASSERT_EQ(reloaded.messages().size(), 3u);
  EXPECT_EQ(reloaded.messages()[2].TextContent(), "e");
  (void)c;

  // Back to before the first entry: a new root, fromId "root" in the file.
  auto root = reloaded.BranchTo("");
  ASSERT_TRUE(root.ok());
  ASSERT_NE(*root, nullptr);
  EXPECT_EQ((*root)->parent_id, "");
  EXPECT_EQ(StringOr(EntryToJson(**root), "fromId"), "root");
  EXPECT_TRUE(reloaded.messages().empty());
}

// A branch summary with text reaches the model as a hidden user message where it stands.
TEST(HistoryTest, ANonEmptyBranchSummaryIsAHiddenMessage) {
  History h;
  const std::string a = h.Append(MessageEntry(Role::kUser, "a")).id;
  h.Append(MessageEntry(Role::kAssistant, "b"));
  auto moved = h.BranchTo(a, "Tried editing main.cpp; the build broke.");
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(h.messages().size(), 2u);
  const Message& m = h.messages()[1];
  EXPECT_EQ(m.role, Role::kUser);
  EXPECT_EQ(m.custom_type, kBranchSummaryType);
  EXPECT_FALSE(m.display);
  EXPECT_NE(m.TextContent().find("Tried editing main.cpp; the build broke."), std::string::npos);
  EXPECT_EQ(h.message_id(1), (*moved)->id);
  History reloaded;
  ASSERT_TRUE(reloaded.Seed(h.entries().ToVector()).ok());
  ASSERT_EQ(reloaded.messages().size(), 2u) << "rebuilt the same way";
  EXPECT_EQ(reloaded.messages()[1].TextContent(), m.TextContent());
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
  EXPECT_FALSE(History().Seed({a, a}).ok());  // duplicate id
  EXPECT_FALSE(History().Seed({a}, "zzz").ok());
}

// Files written before every append was recorded lack a stream rule's or a compaction's entry
// while the next entry names it: such an entry hangs off the entry before it, with a warning,
// instead of failing the whole file.
TEST(HistoryTest, SeedHangsAnEntryWhoseParentIsMissingOffTheEntryBeforeIt) {
  Entry a = MessageEntry(Role::kUser, "a");
  a.id = "00000001";
  Entry b = MessageEntry(Role::kAssistant, "b");
  b.id = "00000002";
  b.parent_id = "0000dead";  // a ttsr_injection the file never got
  Entry c = MessageEntry(Role::kUser, "c");
  c.id = "00000003";
  c.parent_id = "00000002";
  History h;
  std::vector<std::string> repaired;
  ASSERT_TRUE(h.Seed({a, b, c}, {}, &repaired).ok());
  ASSERT_EQ(repaired.size(), 1u);
  EXPECT_NE(repaired[0].find("0000dead"), std::string::npos) << repaired[0];
  EXPECT_EQ(h.Find("00000002")->parent_id, "00000001");
  ASSERT_EQ(h.messages().size(), 3u);
  EXPECT_EQ(h.messages()[0].content[0].text, "a");
  EXPECT_EQ(h.messages()[2].content[0].text, "c");
  // The first entry has nothing before it: it becomes a root.
  repaired.clear();
  History first;
  ASSERT_TRUE(first.Seed({b}, {}, &repaired).ok());
  EXPECT_EQ(repaired.size(), 1u);
  EXPECT_EQ(first.Find("00000002")->parent_id, "");
}

// The history is the one way into the session file: whatever it takes, the recorder gets, in
// order, including what Append adds for BranchTo.
TEST(HistoryTest, EveryAppendReachesTheRecorder) {
  struct Collect : HistoryRecorder {
    std::vector<Entry> got;
    void Record(const Entry& e) override { got.push_back(e); }
    void Flush() override {}
    void Close() override {}
  };
  auto rec = std::make_shared<Collect>();
  History h(rec);
  h.Append(MessageEntry(Role::kUser, "a"));
  Entry c;
  c.kind = EntryKind::kCompaction;
  c.more.Edit().summary = "s";
  h.Append(c);
  Entry t;
  t.kind = EntryKind::kTtsrInjection;
  t.more.Edit().rules = {"r"};
  h.Append(t);
  ASSERT_TRUE(h.BranchTo(h.entries()[0].id).ok());
  ASSERT_EQ(rec->got.size(), h.entries().size());
  for (size_t i = 0; i < rec->got.size(); ++i) {
    EXPECT_EQ(rec->got[i].id, h.entries()[i].id);
    EXPECT_EQ(rec->got[i].parent_id, h.entries()[i].parent_id);
  }
  History reloaded;
  std::vector<std::string> repaired;
  ASSERT_TRUE(reloaded.Seed(rec->got, {}, &repaired).ok());
  EXPECT_TRUE(repaired.empty());
  EXPECT_EQ(reloaded.leaf(), h.leaf());
}

// One entry of every kind, with every field its kind has.
std::vector<Entry> AllKindsOfEntries() {
  std::vector<Entry> entries;
  Entry user = MessageEntry(Role::kUser, "hi \xc3\xa9");
  user.message.content.push_back(ContentBlock::Image("image/png", "AAAA"));
  entries.push_back(user);
  Entry assistant;
  assistant.message.role = Role::kAssistant;
  assistant.message.content = {ContentBlock::Thinking("hmm", "sig"), ContentBlock::Text("ok"),
                               ContentBlock::ToolCall("c1", "read", *ParseJson(R"({"path":"a"})"))};
  assistant.message.stop_reason = StopReason::kCancelled;
  assistant.message.assistant.Edit().error_message = "stopped";
  assistant.message.assistant.Edit().usage.input = 12;
  assistant.message.assistant.Edit().usage.cost = 0.25;
  assistant.message.assistant.Edit().provider = "openai";
  assistant.message.assistant.Edit().model = "gpt";
  entries.push_back(assistant);
  Entry result;
  result.message.role = Role::kToolResult;
  result.message.tool_call_id = "c1";
  result.message.tool_name = "read";
  result.message.is_error = true;
  result.message.content.push_back(ContentBlock::Text("nope"));
  result.message.tool.Edit().title = "Read a";
  result.message.tool.Edit().kind = ToolKind::kRead;
  result.message.tool.Edit().locations = {{"/w/a", 3}};
  result.message.tool.Edit().diffs = {{"/w/a", std::nullopt, "new"}};
  result.message.tool.Edit().details = *ParseJson(R"({"lines":2})");
  result.message.tool.Edit().terminal_id = "t1";
  entries.push_back(result);
  Entry custom = MessageEntry(Role::kUser, "<system-interrupt>x</system-interrupt>");
  custom.message.custom_type = "ttsr-injection";
  custom.message.display = false;
  entries.push_back(custom);
  Entry model;
  model.kind = EntryKind::kModelChange;
  model.more.Edit().provider = "anthropic";
  model.more.Edit().model_id = "claude";
  entries.push_back(model);
  Entry thinking;
  thinking.kind = EntryKind::kThinkingChange;
  thinking.more.Edit().thinking_level = "high";
  entries.push_back(thinking);
  Entry label;
  label.kind = EntryKind::kLabel;
  label.more.Edit().target_id = "abc";
  label.more.Edit().label = "start";
  entries.push_back(label);
  Entry compaction;
  compaction.kind = EntryKind::kCompaction;
  compaction.more.Edit().summary = "so far";
  compaction.more.Edit().first_kept_id = "abc";
  compaction.more.Edit().tokens_before = 999;
  entries.push_back(compaction);
  Entry rules;
  rules.kind = EntryKind::kTtsrInjection;
  rules.more.Edit().rules = {"no-todo"};
  entries.push_back(rules);
  Entry info;
  info.kind = EntryKind::kSessionInfo;
  info.more.Edit().name = "my session";
  entries.push_back(info);
  Entry mode;
  mode.kind = EntryKind::kModeChange;
  mode.more.Edit().mode = "plan";
  entries.push_back(mode);
  Entry data;
  data.kind = EntryKind::kCustom;
  data.more.Edit().custom_type = "plan";
  data.more.Edit().data = *ParseJson(R"([{"content":"x","status":"pending"}])");
  entries.push_back(data);
  Entry branch;
  branch.kind = EntryKind::kBranchSummary;
  branch.more.Edit().from_id = "abc";
  branch.more.Edit().summary = "tried another way";
  branch.more.Edit().data = *ParseJson(R"({"abandonedLeafId":"def"})");
  entries.push_back(branch);
  return entries;
}

TEST(HistoryTest, EveryEntryKindRoundTripsThroughJson) {
  History h;
  for (auto& e : AllKindsOfEntries()) h.Append(e);
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
  EXPECT_EQ(back->message.tool->title, "Read a");
  EXPECT_EQ(back->message.tool->terminal_id, "t1");
  ASSERT_EQ(back->message.tool->locations.size(), 1u);
  EXPECT_EQ(back->message.tool->locations[0].line, 3);
}

// The reader takes members in any order and skips the ones it does not know: each line written
// with its members reversed and strangers added reads as the same entry.
TEST(HistoryTest, EntryLinesReadInAnyMemberOrder) {
  History h;
  for (auto& e : AllKindsOfEntries()) h.Append(e);
  for (const Entry& e : h.entries()) {
    const Json::Value j = EntryToJson(e);
    std::vector<std::string> names = MemberNames(j);
    std::string line = R"({"zzUnknown":{"deep":[1,{"x":null}]})";
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      line += ",";
      AppendJsonString(*it, &line);
      line += ":" + WriteJson(MemberOrNull(j, *it));
    }
    line += R"(,"aaUnknown":"\u00e9"})";
    auto back = EntryFromText(line, "entry");
    ASSERT_TRUE(back.ok()) << back.error().message << "\n" << line;
    EXPECT_EQ(WriteJson(EntryToJson(*back)), WriteJson(j)) << line;
  }
}

// A line that is JSON to jsoncpp but not strict JSON (a leading zero, "1.") is read through
// jsoncpp and then the same way as any other line.
TEST(HistoryTest, LooseNumbersAreReadAsJsoncppReadsThem) {
  auto e = EntryFromText(
      R"({"type":"compaction","id":"c","summary":"s","firstKeptEntryId":"a","tokensBefore":012})",
      "line 9");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->more->tokens_before, 12);
  auto m = EntryFromText(
      R"({"type":"message","id":"m","message":{"role":"user","content":"hi","timestamp":5.}})",
      "line 9");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->message.timestamp_ms, 5);
  auto bad = EntryFromText(R"({"type":"message","id":"m",)", "line 9");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("line 9: ", 0), 0u) << bad.error().message;
}

TEST(HistoryTest, MalformedEntriesAreErrorsNamingThePath) {
  const std::pair<const char*, const char*> exact[] = {
      {R"({"type":"message","id":"x"})", "line 3.message: required"},
      {R"({"type":"message","id":"x","message":{"role":"user","content":[{"type":7}]}})",
       "line 3.message.content[0].type: expected string"},
      {R"({"type":"message","id":"x","message":{"role":"user","content":[{"text":"a"}]}})",
       "line 3.message.content[0].type: required"},
      {R"({"type":"message","id":"x","message":{"role":"toolResult","toolName":"r"}})",
       "line 3.message.toolCallId: required"},
      {R"({"type":"message","id":7})", "line 3.id: expected string"},
      {R"({"type":"model_change","id":"x","provider":[1]})", "line 3.provider: expected string"},
      {R"({"type":"compaction","id":"x","summary":"s","tokensBefore":1.5})",
       "line 3.tokensBefore: expected integer"},
      {R"({"type":"warp","id":"x"})", "line 3.type: unknown entry type 'warp'"},
  };
  for (const auto& [line, message] : exact) {
    auto e = EntryFromText(line, "line 3");
    ASSERT_FALSE(e.ok()) << line;
    EXPECT_EQ(e.error().message, message) << line;
  }
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

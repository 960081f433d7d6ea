// Tests of the session-line decoder's content blocks and entry members, one branch at a time:
// each block type and what it requires, each kind's members, the members no kind has.
#include <gtest/gtest.h>

#include "agent/history.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {

Result<ContentBlock> DecodeBlock(const char* text) {
  auto v = ParseJson(text);
  if (!v.ok()) return v.error();
  return ContentBlockFromJson(*v, "b");
}

TEST(HistoryDecodeTest, EachBlockTypeTakesItsMembers) {
  auto text = DecodeBlock(R"({"text":"hi","type":"text","zz":[1]})");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->type, BlockType::kText);
  EXPECT_EQ(text->text, "hi");

  auto thinking = DecodeBlock(
      R"({"type":"thinking","thinking":"hm","thinkingSignature":"sig","redacted":true})");
  ASSERT_TRUE(thinking.ok()) << thinking.error().message;
  EXPECT_EQ(thinking->type, BlockType::kThinking);
  EXPECT_EQ(thinking->text, "hm");
  EXPECT_EQ(thinking->signature(), "sig");
  EXPECT_TRUE(thinking->redacted());

  auto call = DecodeBlock(R"({"type":"toolCall","id":"c1","name":"read","arguments":{"p":"a"}})");
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(call->type, BlockType::kToolCall);
  EXPECT_EQ(call->id(), "c1");
  EXPECT_EQ(call->name(), "read");
  EXPECT_EQ(WriteJson(call->arguments()), R"({"p":"a"})");
  // Without arguments a call has an empty object of them.
  auto bare = DecodeBlock(R"({"type":"toolCall","id":"c2","name":"ls"})");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(WriteJson(bare->arguments()), "{}");

  auto image = DecodeBlock(R"({"mimeType":"image/png","data":"AAA","type":"image"})");
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->type, BlockType::kImage);
  EXPECT_EQ(image->mime_type(), "image/png");
  EXPECT_EQ(image->data(), "AAA");
}

TEST(HistoryDecodeTest, ABlockMissingWhatItsTypeNeedsNamesTheMember) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"text":"a"})", "b.type: required"},
      {R"({"type":"text","text":null})", "b.text: required"},
      {R"({"type":"thinking","text":"a"})", "b.thinking: required"},
      {R"({"type":"toolCall","name":"read"})", "b.id: required"},
      {R"({"type":"toolCall","id":"c"})", "b.name: required"},
      {R"({"type":"image","mimeType":"image/png"})", "b.data: required"},
      {R"({"type":"image","data":"AAA"})", "b.mimeType: required"},
      {R"({"type":"video"})", "b.type: unknown block type 'video'"},
      {R"({"type":"thinking","thinking":"a","redacted":"yes"})", "b.redacted: expected boolean"},
      {R"({"type":"image","data":"AAA","mimeType":4})", "b.mimeType: expected string"},
      {R"([1])", "b: expected object"},
  };
  for (const auto& [text, message] : cases) {
    auto b = DecodeBlock(text);
    EXPECT_FALSE(b.ok()) << text;
    if (!b.ok()) {
      EXPECT_EQ(b.error().message, message) << text;
    }
  }
  auto null_block = ContentBlockFromJson(Json::Value(), "b");
  ASSERT_FALSE(null_block.ok());
  EXPECT_EQ(null_block.error().message, "b: expected object");
  auto e = EntryFromText(
      R"({"type":"message","id":"m","message":{"role":"user","content":[null]}})", "line 2");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "line 2.message.content[0]: expected object");
}

Entry MustDecode(const std::string& line) {
  Entry e;
  const Status s = DecodeEntryLine(line, "line 1", &e);
  EXPECT_TRUE(s.ok()) << line << ": " << s.error().message;
  return e;
}

TEST(HistoryDecodeTest, EachKindTakesItsMembers) {
  const std::string head = R"({"id":"e","parentId":"p","timestamp":"2025-12-01T04:31:10.123Z",)";
  Entry model = MustDecode(head + R"("type":"model_change","provider":"x","modelId":"m"})");
  EXPECT_EQ(model.kind, EntryKind::kModelChange);
  EXPECT_EQ(model.id, "e");
  EXPECT_EQ(model.parent_id, "p");
  EXPECT_EQ(model.timestamp_ms, 1764563470123);
  EXPECT_EQ(model.more->provider, "x");
  EXPECT_EQ(model.more->model_id, "m");
  EXPECT_EQ(MustDecode(head + R"("type":"thinking_level_change","thinkingLevel":"high"})")
                .more->thinking_level,
            "high");
  EXPECT_EQ(MustDecode(head + R"("type":"mode_change","mode":"plan"})").more->mode, "plan");
  Entry custom = MustDecode(head + R"("type":"custom","customType":"todo","data":[1]})");
  EXPECT_EQ(custom.more->custom_type, "todo");
  EXPECT_EQ(WriteJson(custom.more->data), "[1]");
  Entry label = MustDecode(head + R"("type":"label","targetId":"t","label":"start"})");
  EXPECT_EQ(label.more->target_id, "t");
  EXPECT_EQ(label.more->label, "start");
  Entry compaction = MustDecode(
      head + R"("type":"compaction","summary":"s","firstKeptEntryId":"k","tokensBefore":7,)" +
      R"("details":{"n":1}})");
  EXPECT_EQ(compaction.more->summary, "s");
  EXPECT_EQ(compaction.more->first_kept_id, "k");
  EXPECT_EQ(compaction.more->tokens_before, 7);
  EXPECT_EQ(WriteJson(compaction.more->data), R"({"n":1})");
  Entry branch = MustDecode(head + R"("type":"branch_summary","summary":"b","fromId":"f"})");
  EXPECT_EQ(branch.more->summary, "b");
  EXPECT_EQ(branch.more->from_id, "f");
  EXPECT_EQ(MustDecode(head + R"("type":"session_info","name":"mine"})").more->name, "mine");
  // Rule names that are not strings are skipped.
  Entry rules = MustDecode(head + R"("type":"ttsr_injection","injectedRules":["a",3,null,"b"]})");
  EXPECT_EQ(rules.more->rules, (std::vector<std::string>{"a", "b"}));
}

TEST(HistoryDecodeTest, KindMembersAreTypedAndRequired) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type":"model_change","id":"x","provider":"p","modelId":1})",
       "line 1.modelId: expected string"},
      {R"({"type":"model_change","id":"x","provider":"p"})", "line 1.modelId: required"},
      {R"({"type":"label","id":"x","label":"l"})", "line 1.targetId: required"},
      {R"({"type":"label","id":"x","targetId":"t","label":[]})", "line 1.label: expected string"},
      {R"({"type":"compaction","id":"x","summary":"s","firstKeptEntryId":2})",
       "line 1.firstKeptEntryId: expected string"},
      {R"({"type":"branch_summary","id":"x","summary":"s","fromId":{}})",
       "line 1.fromId: expected string"},
      {R"({"type":"session_info","id":"x","name":true})", "line 1.name: expected string"},
      {R"({"type":"ttsr_injection","id":"x","injectedRules":"a"})",
       "line 1.injectedRules: expected array"},
      {R"({"type":"ttsr_injection","id":"x"})", "line 1.injectedRules: required"},
      {R"({"type":"custom","id":"x"})", "line 1.customType: required"},
      {R"({"type":"mode_change","id":"x","mode":null})", "line 1.mode: required"},
      {R"({"type":"thinking_level_change","id":"x","thinkingLevel":5})",
       "line 1.thinkingLevel: expected string"},
  };
  for (const auto& [line, message] : cases) {
    Entry e;
    const Status s = DecodeEntryLine(line, "line 1", &e);
    EXPECT_FALSE(s.ok()) << line;
    if (!s.ok()) {
      EXPECT_EQ(s.error().message, message) << line;
    }
  }
}

}  // namespace
}  // namespace lousho::agent

// Tests of the one accumulator of streamed assistant messages (engine and providers).
#include "core/message_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho::agent {
namespace {

// Records what a builder emits, one token per delta: "TS0" text start at content index 0,
// "T0:x" text, "TE0" text end, "RS"/"R"/"RE" the same for thinking, "S1:id/name" tool call
// start, "A1:..." argument fragment, "E1:..." tool call end.
struct UpdateLog {
  std::vector<StreamDelta> deltas;
  std::vector<std::string> texts_seen;  // message().TextContent() when each delta left

  MessageBuilder::Emit Sink(const MessageBuilder& builder) {
    return [this, &builder](const StreamDelta& d) {
      deltas.push_back(d);
      texts_seen.push_back(builder.message().TextContent());
    };
  }

  std::string Trace() const {
    std::string out;
    for (const auto& d : deltas) {
      const std::string i = std::to_string(d.index);
      switch (d.kind) {
        case DeltaKind::kTextStart:
          out += "TS" + i;
          break;
        case DeltaKind::kText:
          out += "T" + i + ":" + d.text;
          break;
        case DeltaKind::kTextEnd:
          out += "TE" + i;
          break;
        case DeltaKind::kThinkingStart:
          out += "RS" + i;
          break;
        case DeltaKind::kThinking:
          out += "R" + i + ":" + d.text;
          break;
        case DeltaKind::kThinkingEnd:
          out += "RE" + i;
          break;
        case DeltaKind::kToolCallStart:
          out += "S" + i + ":" + d.id + "/" + d.name;
          break;
        case DeltaKind::kServerToolStart:
          out += "W" + i + ":" + d.id;
          break;
        case DeltaKind::kServerToolEnd:
          out += "Z" + i + ":" + d.id;
          break;
        case DeltaKind::kToolCallArgs:
          out += "A" + i + ":" + d.text;
          break;
        case DeltaKind::kToolCallEnd:
          out += "E" + i + ":" + d.text;
          break;
      }
      out += "|";
    }
    return out;
  }
};

StreamDelta Text(const std::string& t) { return StreamDelta{DeltaKind::kText, 0, t, "", ""}; }
StreamDelta Thinking(const std::string& t) {
  return StreamDelta{DeltaKind::kThinking, 0, t, "", ""};
}
StreamDelta CallStart(int key, const std::string& id, const std::string& name) {
  return StreamDelta{DeltaKind::kToolCallStart, key, "", id, name};
}
StreamDelta CallArgs(int key, const std::string& fragment) {
  return StreamDelta{DeltaKind::kToolCallArgs, key, fragment, "", ""};
}
StreamDelta CallEnd(int key, const std::string& whole = "") {
  return StreamDelta{DeltaKind::kToolCallEnd, key, whole, "", ""};
}

TEST(MessageBuilderTest, TextThinkingTextEachGetStartDeltasAndEnd) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(Text("Hel"), emit);
  b.Apply(Text("lo"), emit);
  b.Apply(Thinking("hmm"), emit);
  b.Apply(Text("done"), emit);
  b.Close(emit);
  EXPECT_EQ(r.Trace(), "TS0|T0:Hel|T0:lo|TE0|RS1|R1:hmm|RE1|TS2|T2:done|TE2|");
  const Message& m = b.message();
  EXPECT_EQ(m.role, Role::kAssistant);
  ASSERT_EQ(m.content.size(), 3u);
  EXPECT_EQ(m.content[0].type, BlockType::kText);
  EXPECT_EQ(m.content[0].text, "Hello");
  EXPECT_EQ(m.content[1].type, BlockType::kThinking);
  EXPECT_EQ(m.content[1].text, "hmm");
  EXPECT_EQ(m.content[2].text, "done");
  // Every delta leaves with the message already holding it.
  EXPECT_EQ(r.texts_seen[1], "Hel");
  EXPECT_EQ(r.texts_seen[2], "Hello");
}

TEST(MessageBuilderTest, CloseWithoutOpenBlockEmitsNothingAndProviderBoundariesAreIgnored) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Close(emit);
  b.Apply(StreamDelta{DeltaKind::kTextStart, 0, "", "", ""}, emit);
  b.Apply(StreamDelta{DeltaKind::kThinkingEnd, 3, "", "", ""}, emit);
  EXPECT_EQ(r.Trace(), "");
  EXPECT_TRUE(b.message().content.empty());
  b.Apply(Text("a"), emit);
  b.Close(emit);
  b.Close(emit);  // already closed: no second end
  EXPECT_EQ(r.Trace(), "TS0|T0:a|TE0|");
}

TEST(MessageBuilderTest, ToolCallsInterleavedByProviderIndex) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(Text("Reading both."), emit);
  b.Apply(CallStart(7, "call_a", "read"), emit);
  b.Apply(CallStart(3, "call_b", "grep"), emit);
  b.Apply(CallArgs(7, "{\"path\":"), emit);
  b.Apply(CallArgs(3, "{\"q\":2}"), emit);
  b.Apply(CallArgs(7, "\"x.cc\"}"), emit);
  b.Apply(CallEnd(3), emit);
  b.Apply(CallEnd(7), emit);
  // The text block ends before the first call; calls leave with their content index.
  EXPECT_EQ(r.Trace(),
            "TS0|T0:Reading both.|TE0|S1:call_a/read|S2:call_b/grep|A1:{\"path\":|A2:{\"q\":2}|"
            "A1:\"x.cc\"}|E2:|E1:|");
  const Message& m = b.message();
  ASSERT_EQ(m.content.size(), 3u);
  EXPECT_EQ(m.content[1].id(), "call_a");
  EXPECT_EQ(m.content[1].arguments()["path"].asString(), "x.cc");
  EXPECT_EQ(m.content[2].id(), "call_b");
  EXPECT_EQ(m.content[2].arguments()["q"].asInt(), 2);
  EXPECT_EQ(b.ToolCallBlock(7), 1);
  EXPECT_EQ(b.ToolCallBlock(3), 2);
  EXPECT_EQ(b.ToolCallBlock(5), -1);
  EXPECT_TRUE(b.UnendedToolCalls().empty());
}

TEST(MessageBuilderTest, EndCarryingWholeArgumentsWinsOverFragments) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(CallStart(0, "c", "t"), emit);
  b.Apply(CallArgs(0, "{\"a\":1"), emit);
  b.Apply(CallEnd(0, "{\"a\":2}"), emit);
  EXPECT_EQ(b.message().content[0].arguments()["a"].asInt(), 2);
}

TEST(MessageBuilderTest, FragmentsOfCallsThatNeverStartedAreDropped) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(CallArgs(4, "{}"), emit);
  b.Apply(CallEnd(4), emit);
  EXPECT_EQ(r.Trace(), "");
  EXPECT_TRUE(b.message().content.empty());
}

TEST(MessageBuilderTest, PartialTakeDropsCallsWhoseArgumentsDidNotEnd) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(Text("Two calls."), emit);
  b.Apply(CallStart(0, "done", "read"), emit);
  b.Apply(CallArgs(0, "{\"path\":\"a\"}"), emit);
  b.Apply(CallEnd(0), emit);
  b.Apply(CallStart(1, "cut", "bash"), emit);
  b.Apply(CallArgs(1, "{\"command\":\"rm -rf /tm"), emit);
  EXPECT_EQ(b.UnendedToolCalls(), std::vector<int>{1});

  Message partial = b.Take(/*partial=*/true);
  ASSERT_EQ(partial.content.size(), 2u);
  EXPECT_EQ(partial.content[0].text, "Two calls.");
  EXPECT_EQ(partial.content[1].id(), "done");

  // Without `partial` the call stays, never with the cut-off arguments.
  Message whole = b.Take(/*partial=*/false);
  ASSERT_EQ(whole.content.size(), 3u);
  EXPECT_EQ(whole.content[2].id(), "cut");
  EXPECT_FALSE(whole.content[2].arguments().isMember("command"));
  // Taking leaves the builder as it was.
  EXPECT_EQ(b.message().content.size(), 3u);
}

TEST(MessageBuilderTest, UnparsableArgumentsAreKeptAsTheRawString) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(CallStart(0, "c1", "edit"), emit);
  b.Apply(CallArgs(0, "{\"path\": \"a\", oops"), emit);
  b.Apply(CallEnd(0), emit);
  const Json::Value& args = b.message().content[0].arguments();
  ASSERT_TRUE(args.isString());
  EXPECT_EQ(args.asString(), "{\"path\": \"a\", oops");

  // The provider-side end does the same and emits the raw text.
  b.Apply(CallStart(1, "c2", "edit"), emit);
  b.Apply(CallArgs(1, "not json"), emit);
  b.EndToolCall(1, emit);
  ASSERT_TRUE(b.message().content[1].arguments().isString());
  EXPECT_EQ(b.message().content[1].arguments().asString(), "not json");
  EXPECT_EQ(r.deltas.back().kind, DeltaKind::kToolCallEnd);
  EXPECT_EQ(r.deltas.back().text, "not json");
}

TEST(MessageBuilderTest, EndToolCallParsesFragmentsOnceAndEmitsCompactJson) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  b.Apply(CallStart(2, "c", ""), emit);
  b.Apply(CallStart(0, "d", "read"), emit);
  b.NameToolCall(2, "grep");   // late name fills the empty one
  b.NameToolCall(0, "other");  // never replaces a name
  b.Apply(CallArgs(2, "{ \"b\": 1,"), emit);
  b.Apply(CallArgs(2, " \"a\": [true] }"), emit);
  EXPECT_EQ(b.UnendedToolCalls(), (std::vector<int>{0, 2}));
  b.EndToolCall(2, emit);
  b.EndToolCall(2, emit);  // already ended: nothing more
  b.EndToolCall(9, emit);  // unknown: nothing
  EXPECT_TRUE(b.ToolCallEnded(2));
  EXPECT_FALSE(b.ToolCallEnded(0));
  b.EndToolCall(0, emit);  // no fragments: empty object
  EXPECT_EQ(r.Trace(),
            "S0:c/|S1:d/read|A0:{ \"b\": 1,|A0: \"a\": [true] }|E0:{\"a\":[true],\"b\":1}|E1:{}|");
  EXPECT_EQ(b.message().content[0].name(), "grep");
  EXPECT_EQ(b.message().content[1].name(), "read");
  EXPECT_EQ(r.deltas[4].id, "c");
  EXPECT_EQ(r.deltas[4].name, "grep");
  EXPECT_TRUE(b.message().content[1].arguments().isObject());
  EXPECT_TRUE(b.UnendedToolCalls().empty());
}

TEST(MessageBuilderTest, OpenMakesABlockWithoutDeltasAndRedactedThinkingIsNeverOpen) {
  MessageBuilder b;
  UpdateLog r;
  auto emit = r.Sink(b);
  EXPECT_EQ(b.open_block(), -1);
  const int sig_only = b.Open(BlockType::kThinking, emit);
  b.AddSignature(sig_only, "sig-");
  b.AddSignature(sig_only, "nature");
  EXPECT_EQ(b.open_block(), sig_only);
  const int redacted = b.AddRedactedThinking("opaque", emit);
  EXPECT_EQ(b.open_block(), -1);
  // A second text block even right after another text block.
  b.Apply(Text("one"), emit);
  const int second = b.Open(BlockType::kText, emit);
  b.Apply(Text("two"), emit);
  b.Close(emit);
  EXPECT_EQ(r.Trace(), "RS0|RE0|TS2|T2:one|TE2|TS3|T3:two|TE3|");
  const Message& m = b.message();
  ASSERT_EQ(m.content.size(), 4u);
  EXPECT_EQ(m.content[sig_only].type, BlockType::kThinking);
  EXPECT_EQ(m.content[sig_only].text, "");
  EXPECT_EQ(m.content[sig_only].signature(), "sig-nature");
  EXPECT_EQ(redacted, 1);
  EXPECT_TRUE(m.content[redacted].redacted());
  EXPECT_EQ(m.content[redacted].text, "opaque");
  EXPECT_EQ(second, 3);
  EXPECT_EQ(m.content[3].text, "two");
}

}  // namespace
}  // namespace lousho::agent

// The frames written by the JsonWriter on the hot paths: ACP chunk params (golden lines, and
// strings of every escape class at their place), the RPC door's message_update lines (golden
// lines, the frame's members for every delta kind, its message the very one message_end
// carries, the line limit), Peer::NotifySerialized against Notify, and the batching FdTransport.
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "acp/codec.h"
#include "acp/methods.h"
#include "agent/history.h"
#include "rpc_compat/codec.h"
#include "support/json_util.h"
#include "support/jsonrpc.h"
#include "support/transport.h"

namespace lousho {
namespace {

// Pieces of strings: escapes, control characters, valid and invalid UTF-8.
const std::vector<std::string>& Pieces() {
  static const std::vector<std::string> pieces = {"a",
                                                  "/",
                                                  "\"",
                                                  "\\",
                                                  "\n",
                                                  "\t",
                                                  std::string(1, '\0'),
                                                  "\x01",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x98\x80",
                                                  "\xed\xa0\x80",
                                                  "\xc0\x80",
                                                  "\x80",
                                                  "\xc3",
                                                  "\xff",
                                                  "hello",
                                                  "\\u0041"};
  return pieces;
}

// A string value as the writer writes it alone (tests/core/json_writer_test.cpp holds it to
// jsoncpp's bytes).
std::string Quoted(const std::string& s) { return WriteJson(Json::Value(s)); }

agent::StreamDelta Delta(agent::DeltaKind kind, std::string text) {
  agent::StreamDelta d;
  d.kind = kind;
  d.text = std::move(text);
  return d;
}

TEST(AcpChunkLine, GoldenLines) {
  agent::Message partial;
  agent::StreamDelta d = Delta(agent::DeltaKind::kText, "hi \"you\"\n\xc3\xa9");
  auto line =
      acp::ChunkUpdateParamsJson("sess-1", agent::event::MessageUpdate{1, &d, &partial, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(
      *line,
      R"({"sessionId":"sess-1","update":{"content":{"text":"hi \"you\"\n\u00e9","type":"text"},)"
      R"("sessionUpdate":"agent_message_chunk"}})");
  agent::StreamDelta t = Delta(agent::DeltaKind::kThinking, "");
  line = acp::ChunkUpdateParamsJson("s\"", agent::event::MessageUpdate{1, &t, &partial, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, R"({"sessionId":"s\"","update":{"content":{"text":"","type":"text"},)"
                   R"("sessionUpdate":"agent_thought_chunk"}})");
}

// For any text the line is the chunk's members in order with the text escaped at its place, and
// it parses back to itself.
TEST(AcpChunkLine, EveryTextAtItsPlace) {
  agent::Message partial;
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, Pieces().size() - 1);
  for (auto kind : {agent::DeltaKind::kText, agent::DeltaKind::kThinking}) {
    const std::string name =
        kind == agent::DeltaKind::kText ? "agent_message_chunk" : "agent_thought_chunk";
    for (int i = 0; i < 500; ++i) {
      std::string text;
      for (int n = i % 9; n > 0; --n) text += Pieces()[pick(rng)];
      const std::string sid = i % 2 ? "sess-\"1\"" : "0123abcd";
      agent::StreamDelta d = Delta(kind, text);
      auto line = acp::ChunkUpdateParamsJson(sid, agent::event::MessageUpdate{1, &d, &partial, {}});
      ASSERT_TRUE(line.has_value());
      ASSERT_EQ(*line, "{\"sessionId\":" + Quoted(sid) +
                           ",\"update\":{\"content\":{\"text\":" + Quoted(text) +
                           ",\"type\":\"text\"},\"sessionUpdate\":\"" + name + "\"}}")
          << "case " << i;
      auto parsed = ParseJson(*line);
      ASSERT_TRUE(parsed.ok()) << *line;
      ASSERT_EQ(WriteJson(*parsed), *line);
    }
  }
}

TEST(AcpChunkLine, OtherEventsHaveNone) {
  agent::Message partial;
  agent::StreamDelta d = Delta(agent::DeltaKind::kToolCallArgs, "{}");
  EXPECT_FALSE(acp::ChunkUpdateParamsJson("s", agent::event::MessageUpdate{1, &d, &partial, {}})
                   .has_value());
  agent::StreamDelta start = Delta(agent::DeltaKind::kTextStart, "");
  EXPECT_FALSE(acp::ChunkUpdateParamsJson("s", agent::event::MessageUpdate{1, &start, &partial, {}})
                   .has_value());
  EXPECT_FALSE(acp::ChunkUpdateParamsJson("s", agent::event::TurnStart{1}).has_value());
  // A chunk is written one way only: the DOM path has no update for a delta.
  agent::StreamDelta text = Delta(agent::DeltaKind::kText, "x");
  EXPECT_FALSE(
      acp::UpdateFromEvent(agent::event::MessageUpdate{1, &text, &partial, {}}).has_value());
}

TEST(AcpUpdateParams, SessionIdThenTheUpdate) {
  Json::Value update(Json::objectValue);
  update["sessionUpdate"] = "plan";
  update["entries"] = Json::Value(Json::arrayValue);
  EXPECT_EQ(acp::UpdateParamsJson("s\n", update),
            R"({"sessionId":"s\n","update":{"entries":[],"sessionUpdate":"plan"}})");
}

std::string RandomText(std::mt19937& rng, int max_pieces) {
  std::uniform_int_distribution<size_t> pick(0, Pieces().size() - 1);
  std::uniform_int_distribution<int> n(0, max_pieces);
  std::string s;
  for (int k = n(rng); k > 0; --k) s += Pieces()[pick(rng)];
  return s;
}

// A partial assistant message as the engine streams it: text and thinking blocks (signed,
// redacted), sometimes a tool call or an image, an error message, usage with integer and
// fractional costs, every stop reason.
agent::Message RandomAssistant(std::mt19937& rng) {
  agent::Message m;
  m.role = agent::Role::kAssistant;
  std::uniform_int_distribution<int> die(0, 5);
  m.assistant.Edit().provider = die(rng) == 0 ? RandomText(rng, 3) : "anthropic";
  m.assistant.Edit().model = die(rng) == 0 ? RandomText(rng, 3) : "claude-sonnet-4-5";
  for (int k = die(rng); k > 0; --k) {
    switch (die(rng)) {
      case 0:
      case 1:
      case 2:
        m.content.push_back(agent::ContentBlock::Text(RandomText(rng, 12)));
        break;
      case 3: {
        auto b = agent::ContentBlock::Thinking(RandomText(rng, 12),
                                               die(rng) < 3 ? "" : RandomText(rng, 4));
        b.more.Edit().redacted = die(rng) == 0;
        m.content.push_back(b);
        break;
      }
      case 4: {
        Json::Value args(Json::objectValue);
        args["path"] = RandomText(rng, 3);
        args["n"] = die(rng);
        m.content.push_back(agent::ContentBlock::ToolCall(RandomText(rng, 2), "read", args));
        break;
      }
      default:
        m.content.push_back(agent::ContentBlock::Image("image/png", "iVBORw0KGgo="));
        break;
    }
  }
  if (die(rng) == 0) m.assistant.Edit().error_message = RandomText(rng, 4);
  const double costs[] = {0.0, -0.0, 0.5, 1e-7, 123.456, 0.1 + 0.2, 3e21, 1.0 / 3.0};
  std::uniform_int_distribution<size_t> cost(0, std::size(costs) - 1);
  std::uniform_int_distribution<long long> tokens(0, 2000000);
  m.assistant.Edit().usage.input = tokens(rng);
  m.assistant.Edit().usage.output = die(rng) == 0 ? 0 : tokens(rng);
  m.assistant.Edit().usage.cache_read = tokens(rng);
  m.assistant.Edit().usage.cache_write = die(rng) == 0 ? -1 : tokens(rng);
  m.assistant.Edit().usage.cost = costs[cost(rng)];
  m.stop_reason = static_cast<agent::StopReason>(die(rng));
  std::uniform_int_distribution<long long> ts(-1, 1LL << 50);
  m.timestamp_ms = ts(rng);
  return m;
}

TEST(RpcMessageUpdateLine, GoldenLine) {
  agent::Message m;
  m.role = agent::Role::kAssistant;
  m.assistant.Edit().provider = "anthropic";
  m.assistant.Edit().model = "claude";
  m.content.push_back(agent::ContentBlock::Thinking("hm", "sig"));
  m.content.push_back(agent::ContentBlock::Text("Hi \"x\""));
  m.assistant.Edit().usage.input = 3;
  m.assistant.Edit().usage.output = 2;
  m.assistant.Edit().usage.cost = 0.5;
  m.timestamp_ms = 1796000000000;
  agent::StreamDelta d = Delta(agent::DeltaKind::kText, "\"x\"");
  d.index = 1;
  auto line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &m, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(
      *line,
      R"({"assistantMessageEvent":{"contentIndex":1,"delta":"\"x\"","type":"text_delta"},)"
      R"("message":{"api":"anthropic","content":[{"thinking":"hm","thinkingSignature":"sig",)"
      R"("type":"thinking"},{"text":"Hi \"x\"","type":"text"}],"model":"claude",)"
      R"("provider":"anthropic","role":"assistant","stopReason":"stop",)"
      R"("timestamp":1796000000000,"usage":{"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5},)"
      R"("input":3,"output":2,"totalTokens":5}},"type":"message_update"})");
  d = Delta(agent::DeltaKind::kTextEnd, "");
  d.index = 1;
  line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &m, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_TRUE(line->starts_with(
      R"({"assistantMessageEvent":{"content":"Hi \"x\"","contentIndex":1,"type":"text_end"},)"))
      << *line;
}

const char* EventType(agent::DeltaKind kind) {
  using agent::DeltaKind;
  switch (kind) {
    case DeltaKind::kTextStart:
      return "text_start";
    case DeltaKind::kText:
      return "text_delta";
    case DeltaKind::kTextEnd:
      return "text_end";
    case DeltaKind::kThinkingStart:
      return "thinking_start";
    case DeltaKind::kThinking:
      return "thinking_delta";
    case DeltaKind::kThinkingEnd:
      return "thinking_end";
    case DeltaKind::kToolCallStart:
      return "toolcall_start";
    case DeltaKind::kToolCallArgs:
      return "toolcall_delta";
    case DeltaKind::kToolCallEnd:
      return "toolcall_end";
    case DeltaKind::kServerToolStart:  // no message_update line (tool_execution frames)
    case DeltaKind::kServerToolEnd:
      return "";
  }
  return "";
}

// The members of one line's assistantMessageEvent, checked against the delta and the message.
void CheckEvent(const Json::Value& ev, const agent::StreamDelta& d, const agent::Message& m,
                const std::string& message_json) {
  using agent::DeltaKind;
  const bool tool = d.kind == DeltaKind::kToolCallStart || d.kind == DeltaKind::kToolCallArgs ||
                    d.kind == DeltaKind::kToolCallEnd;
  const bool has_delta = d.kind == DeltaKind::kText || d.kind == DeltaKind::kThinking ||
                         d.kind == DeltaKind::kToolCallArgs;
  const bool end = d.kind == DeltaKind::kTextEnd || d.kind == DeltaKind::kThinkingEnd;
  std::vector<std::string> want;
  if (end) want.emplace_back("content");
  want.emplace_back("contentIndex");
  if (has_delta) want.emplace_back("delta");
  if (tool) want.emplace_back("partial");
  if (d.kind == DeltaKind::kToolCallEnd) want.emplace_back("toolCall");
  want.emplace_back("type");
  ASSERT_EQ(MemberNames(ev), want);
  EXPECT_EQ(StringOr(ev, "type"), EventType(d.kind));
  EXPECT_EQ(IntOr(ev, "contentIndex", -99), d.index);
  const agent::ContentBlock* block = d.index >= 0 && static_cast<size_t>(d.index) < m.content.size()
                                         ? &m.content[d.index]
                                         : nullptr;
  if (has_delta) {
    EXPECT_EQ(WriteJson(ev["delta"]), Quoted(d.text));
  }
  if (tool) {
    EXPECT_EQ(WriteJson(ev["partial"]), message_json);
  }
  if (d.kind == DeltaKind::kToolCallEnd) {
    EXPECT_EQ(WriteJson(ev["toolCall"]),
              block ? WriteJson(agent::ContentBlockToJson(*block)) : std::string("null"));
  }
  if (end) {
    const auto want_type =
        d.kind == DeltaKind::kTextEnd ? agent::BlockType::kText : agent::BlockType::kThinking;
    const std::string text = block && block->type == want_type ? block->text : std::string();
    EXPECT_EQ(WriteJson(ev["content"]), Quoted(text));
  }
}

// Every delta kind of random partial messages: the line ends with the message exactly as
// message_end carries it (MessageToRpc), and its event has the members the kind has.
TEST(RpcMessageUpdateLine, EveryDeltaKindOfRandomMessages) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> index(-1, 6);
  for (int i = 0; i < 3000; ++i) {
    agent::Message partial = RandomAssistant(rng);
    if (i % 10 == 0) partial.role = agent::Role::kUser;  // another role: MessageToRpc's members
    const std::string message_json = WriteJson(rpc_compat::MessageToRpc(partial));
    for (int k = 0; k <= static_cast<int>(agent::DeltaKind::kThinkingEnd); ++k) {
      agent::StreamDelta d = Delta(static_cast<agent::DeltaKind>(k), RandomText(rng, 8));
      d.index = index(rng);
      auto line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &partial, {}});
      ASSERT_TRUE(line.has_value());
      ASSERT_TRUE(line->ends_with(",\"message\":" + message_json + ",\"type\":\"message_update\"}"))
          << "case " << i << " kind " << k;
      auto parsed = ParseJson(*line);
      ASSERT_TRUE(parsed.ok()) << *line;
      ASSERT_EQ(WriteJson(*parsed), *line);  // members in jsoncpp's order, nothing else
      ASSERT_EQ(MemberNames(*parsed),
                (std::vector<std::string>{"assistantMessageEvent", "message", "type"}));
      CheckEvent(MemberOrNull(*parsed, "assistantMessageEvent"), d, partial, message_json);
      if (HasFailure()) return;
    }
  }
}

TEST(RpcMessageUpdateLine, LongTextOfEveryByte) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  std::string all;
  for (int rep = 0; rep < 4; ++rep)
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  partial.content.push_back(agent::ContentBlock::Thinking(all, all));
  partial.content.push_back(agent::ContentBlock::Text(all + all));
  agent::StreamDelta d = Delta(agent::DeltaKind::kText, all);
  d.index = 1;
  auto line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{3, &d, &partial, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, "{\"assistantMessageEvent\":{\"contentIndex\":1,\"delta\":" + Quoted(all) +
                       ",\"type\":\"text_delta\"},\"message\":" +
                       WriteJson(rpc_compat::MessageToRpc(partial)) +
                       ",\"type\":\"message_update\"}");
}

// A line over the door's frame limit is the rpc_frame_error the ready frame promises instead.
TEST(RpcMessageUpdateLine, OverTheLimitBecomesAFrameError) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  partial.content.push_back(
      agent::ContentBlock::Text(std::string(rpc_compat::kMaxFrameBytes, 'a')));
  agent::StreamDelta d = Delta(agent::DeltaKind::kText, "a");
  auto line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &partial, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line,
            R"({"error":"RPC frame exceeded the transport limit","originalType":"message_update",)"
            R"("type":"rpc_frame_error"})");
  partial.content[0].text.resize(rpc_compat::kMaxFrameBytes - 400);
  line = rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &partial, {}});
  ASSERT_TRUE(line.has_value());
  EXPECT_LE(line->size() + 1, static_cast<size_t>(rpc_compat::kMaxFrameBytes));
  EXPECT_TRUE(line->starts_with(R"({"assistantMessageEvent":)"));
}

TEST(RpcMessageUpdateLine, OtherEventsHaveNone) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  agent::StreamDelta text = Delta(agent::DeltaKind::kText, "x");
  EXPECT_FALSE(rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &text, nullptr, {}})
                   .has_value());
  EXPECT_FALSE(rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, nullptr, &partial, {}})
                   .has_value());
  EXPECT_FALSE(rpc_compat::MessageUpdateLine(agent::event::TurnStart{1}).has_value());
  // A message_update frame is written one way only: FramesFromEvent makes none.
  EXPECT_TRUE(
      rpc_compat::FramesFromEvent(agent::event::MessageUpdate{1, &text, &partial, {}}).empty());
}

TEST(JsonRpcNotifySerialized, SameLineAsNotify) {
  MemoryTransport t;
  jsonrpc::Peer peer(&t, {});
  Json::Value params(Json::objectValue);
  params["sessionId"] = "s\xc3\xa9";
  params["update"]["sessionUpdate"] = "agent_message_chunk";
  params["update"]["content"]["type"] = "text";
  params["update"]["content"]["text"] = "a\nb\x01\xff";
  peer.Notify(acp::method::kSessionUpdate, params);
  peer.NotifySerialized(acp::method::kSessionUpdate, WriteJson(params));
  auto out = t.Output();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], out[1]);
}

// Lines from many threads through one FdTransport arrive whole, each thread's in its order.
TEST(FdTransportBatch, LinesFromManyThreadsArriveWholeAndInOrder) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string received;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) received.append(buf, n);
  });
  constexpr int kThreads = 6;
  constexpr int kLines = 3000;
  {
    FdTransport t(-1, fds[1], 1 << 20);
    std::vector<std::thread> writers;
    writers.reserve(kThreads);
    for (int w = 0; w < kThreads; ++w) {
      writers.emplace_back([&t, w] {
        for (int i = 0; i < kLines; ++i)
          t.WriteLine(std::to_string(w) + ":" + std::to_string(i) + std::string(i % 50, 'x'));
      });
    }
    for (auto& th : writers) th.join();
  }
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  std::vector<int> next(kThreads, 0);
  size_t start = 0;
  int lines = 0;
  for (size_t nl; (nl = received.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = received.substr(start, nl - start);
    size_t colon = line.find(':');
    ASSERT_NE(colon, std::string::npos) << line;
    int w = std::stoi(line.substr(0, colon));
    int i = std::stoi(line.substr(colon + 1));
    ASSERT_EQ(i, next[w]) << "writer " << w;
    ASSERT_EQ(line, std::to_string(w) + ":" + std::to_string(i) + std::string(i % 50, 'x'));
    ++next[w];
    ++lines;
  }
  EXPECT_EQ(start, received.size());
  EXPECT_EQ(lines, kThreads * kLines);
}

}  // namespace
}  // namespace lousho

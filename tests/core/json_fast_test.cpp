// The hot-path JSON writers (AppendJsonString, ChunkUpdateParamsJson, the RPC door's
// MessageUpdateLine, Peer::NotifySerialized) against jsoncpp's own output, byte for byte, and the
// batching FdTransport.
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "acp/codec.h"
#include "acp/methods.h"
#include "rpc_compat/codec.h"
#include "support/json_util.h"
#include "support/jsonrpc.h"
#include "support/transport.h"

namespace lousho {
namespace {

std::string Fast(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string Slow(const std::string& s) { return WriteJson(Json::Value(s)); }

// Pieces that exercise every branch of the escaper: escapes with short forms, other control
// characters, DEL, valid 2/3/4-byte UTF-8, surrogates and overlong forms, stray continuation
// bytes, truncated sequences, and lead bytes jsoncpp does not know.
const std::vector<std::string>& Pieces() {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  " ",
                                                  "~",
                                                  "/",
                                                  "\"",
                                                  "\\",
                                                  "\b",
                                                  "\f",
                                                  "\n",
                                                  "\r",
                                                  "\t",
                                                  std::string(1, '\0'),
                                                  "\x01",
                                                  "\x1f",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xc2\x80",
                                                  "\xdf\xbf",
                                                  "\xe2\x82\xac",
                                                  "\xef\xbf\xbf",
                                                  "\xef\xbb\xbf",
                                                  "\xf0\x9f\x98\x80",
                                                  "\xf4\x8f\xbf\xbf",
                                                  "\xed\xa0\x80",
                                                  "\xed\xbf\xbf",
                                                  "\xc0\x80",
                                                  "\xc1\xbf",
                                                  "\xe0\x80\x80",
                                                  "\xf0\x80\x80\x80",
                                                  "\x80",
                                                  "\xbf",
                                                  "\xa0\x41",
                                                  "\xc3",
                                                  "\xe2\x82",
                                                  "\xf0\x9f\x98",
                                                  "\xf8\x88\x80\x80\x80",
                                                  "\xfe",
                                                  "\xff",
                                                  "\xf5\x80\x80\x80",
                                                  "\xe2\x28\xa1",
                                                  "\xc3\x28",
                                                  "hello",
                                                  "</script>",
                                                  "\\u0041"};
  return pieces;
}

TEST(JsonFastString, EveryPieceAloneAndInPairs) {
  for (const auto& a : Pieces()) {
    EXPECT_EQ(Fast(a), Slow(a)) << "piece of " << a.size() << " bytes";
    for (const auto& b : Pieces()) EXPECT_EQ(Fast(a + b), Slow(a + b));
  }
}

TEST(JsonFastString, EveryOneAndTwoByteString) {
  for (int a = 0; a < 256; ++a) {
    std::string one(1, static_cast<char>(a));
    ASSERT_EQ(Fast(one), Slow(one)) << "byte " << a;
    for (int b = 0; b < 256; ++b) {
      std::string two = one + static_cast<char>(b);
      ASSERT_EQ(Fast(two), Slow(two)) << "bytes " << a << " " << b;
    }
  }
}

// Every four-byte sequence led by 0xF0-0xFF with tails from a spread of bytes.
TEST(JsonFastString, FourByteLeads) {
  const int tails[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0xa5, 0xbf, 0xc0, 0xe0, 0xff};
  for (int lead = 0xf0; lead <= 0xff; ++lead)
    for (int a : tails)
      for (int b : tails)
        for (int c : tails) {
          std::string s = {static_cast<char>(lead), static_cast<char>(a), static_cast<char>(b),
                           static_cast<char>(c)};
          ASSERT_EQ(Fast(s), Slow(s)) << lead << " " << a << " " << b << " " << c;
        }
}

TEST(JsonFastString, RandomStringsOfPiecesAndBytes) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> len(0, 40);
  std::uniform_int_distribution<size_t> pick(0, Pieces().size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> coin(0, 2);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = len(rng); n > 0; --n) {
      if (coin(rng) == 0) {
        s.push_back(static_cast<char>(byte(rng)));
      } else {
        s += Pieces()[pick(rng)];
      }
    }
    ASSERT_EQ(Fast(s), Slow(s)) << "case " << i;
  }
}

TEST(JsonFastString, AppendsAfterWhatIsThere) {
  std::string out = "x=";
  AppendJsonString("a\"b", &out);
  EXPECT_EQ(out, "x=\"a\\\"b\"");
}

agent::StreamDelta Delta(agent::DeltaKind kind, std::string text) {
  agent::StreamDelta d;
  d.kind = kind;
  d.text = std::move(text);
  return d;
}

// What the DOM path writes for the same event.
std::string DomParams(const std::string& sid, const agent::Event& e) {
  auto update = acp::UpdateFromEvent(e);
  if (!update) return "(none)";
  Json::Value p(Json::objectValue);
  p["sessionId"] = sid;
  p["update"] = *update;
  return WriteJson(p);
}

TEST(AcpChunkFast, MatchesTheDomPathForTextAndThinking) {
  agent::Message partial;
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, Pieces().size() - 1);
  for (auto kind : {agent::DeltaKind::kText, agent::DeltaKind::kThinking}) {
    for (int i = 0; i < 500; ++i) {
      std::string text;
      for (int n = i % 9; n > 0; --n) text += Pieces()[pick(rng)];
      const std::string sid = i % 2 ? "sess-\"1\"" : "0123abcd";
      agent::StreamDelta d = Delta(kind, text);
      agent::Event e = agent::event::MessageUpdate{1, &d, &partial};
      auto fast = acp::ChunkUpdateParamsJson(sid, e);
      ASSERT_TRUE(fast.has_value());
      ASSERT_EQ(*fast, DomParams(sid, e)) << "case " << i;
    }
  }
}

TEST(AcpChunkFast, OtherEventsTakeTheDomPath) {
  agent::Message partial;
  agent::StreamDelta d = Delta(agent::DeltaKind::kToolCallArgs, "{}");
  EXPECT_FALSE(
      acp::ChunkUpdateParamsJson("s", agent::event::MessageUpdate{1, &d, &partial}).has_value());
  agent::StreamDelta start = Delta(agent::DeltaKind::kTextStart, "");
  EXPECT_FALSE(acp::ChunkUpdateParamsJson("s", agent::event::MessageUpdate{1, &start, &partial})
                   .has_value());
  EXPECT_FALSE(acp::ChunkUpdateParamsJson("s", agent::event::TurnStart{1}).has_value());
}

// What the RPC door's DOM path writes for the event (its one frame).
std::string RpcDomLine(const agent::Event& e) {
  auto frames = rpc_compat::FramesFromEvent(e);
  if (frames.size() != 1) return "(" + std::to_string(frames.size()) + " frames)";
  return WriteJson(frames[0]);
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
  m.provider = die(rng) == 0 ? RandomText(rng, 3) : "anthropic";
  m.model = die(rng) == 0 ? RandomText(rng, 3) : "claude-sonnet-4-5";
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
        b.redacted = die(rng) == 0;
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
  if (die(rng) == 0) m.error_message = RandomText(rng, 4);
  const double costs[] = {0.0, -0.0, 0.5, 1e-7, 123.456, 0.1 + 0.2, 3e21, 1.0 / 3.0};
  std::uniform_int_distribution<size_t> cost(0, std::size(costs) - 1);
  std::uniform_int_distribution<long long> tokens(0, 2000000);
  m.usage.input = tokens(rng);
  m.usage.output = die(rng) == 0 ? 0 : tokens(rng);
  m.usage.cache_read = tokens(rng);
  m.usage.cache_write = die(rng) == 0 ? -1 : tokens(rng);
  m.usage.cost = costs[cost(rng)];
  m.stop_reason = static_cast<agent::StopReason>(die(rng));
  std::uniform_int_distribution<long long> ts(-1, 1LL << 50);
  m.timestamp_ms = ts(rng);
  return m;
}

TEST(RpcMessageUpdateFast, MatchesTheDomPathForTextAndThinking) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> index(0, 40);
  for (auto kind : {agent::DeltaKind::kText, agent::DeltaKind::kThinking}) {
    for (int i = 0; i < 3000; ++i) {
      agent::Message partial = RandomAssistant(rng);
      agent::StreamDelta d = Delta(kind, RandomText(rng, 8));
      d.index = index(rng);
      agent::Event e = agent::event::MessageUpdate{1, &d, &partial};
      auto fast = rpc_compat::MessageUpdateLine(e);
      ASSERT_TRUE(fast.has_value());
      ASSERT_EQ(*fast, RpcDomLine(e)) << "case " << i;
    }
  }
}

TEST(RpcMessageUpdateFast, LongTextOfEveryByte) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  std::string all;
  for (int rep = 0; rep < 4; ++rep)
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  partial.content.push_back(agent::ContentBlock::Thinking(all, all));
  partial.content.push_back(agent::ContentBlock::Text(all + all));
  agent::StreamDelta d = Delta(agent::DeltaKind::kText, all);
  d.index = 1;
  agent::Event e = agent::event::MessageUpdate{3, &d, &partial};
  auto fast = rpc_compat::MessageUpdateLine(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, RpcDomLine(e));
}

TEST(RpcMessageUpdateFast, OtherEventsTakeTheDomPath) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  for (auto kind :
       {agent::DeltaKind::kTextStart, agent::DeltaKind::kTextEnd, agent::DeltaKind::kThinkingStart,
        agent::DeltaKind::kThinkingEnd, agent::DeltaKind::kToolCallStart,
        agent::DeltaKind::kToolCallArgs, agent::DeltaKind::kToolCallEnd}) {
    agent::StreamDelta d = Delta(kind, "{}");
    EXPECT_FALSE(
        rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &d, &partial}).has_value());
  }
  // A text delta of another role's message (MessageToRpc adds `api` to assistants only).
  agent::Message user;
  user.role = agent::Role::kUser;
  agent::StreamDelta text = Delta(agent::DeltaKind::kText, "x");
  EXPECT_FALSE(
      rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &text, &user}).has_value());
  EXPECT_FALSE(
      rpc_compat::MessageUpdateLine(agent::event::MessageUpdate{1, &text, nullptr}).has_value());
  EXPECT_FALSE(rpc_compat::MessageUpdateLine(agent::event::TurnStart{1}).has_value());
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

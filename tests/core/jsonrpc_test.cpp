// Tests of the JSON-RPC peer over the in-memory transport.
#include "support/jsonrpc.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "support/json_util.h"

namespace lousho::jsonrpc {
namespace {

class JsonRpcTest : public ::testing::Test {
 protected:
  void Start() {
    thread_ = std::thread([this] { peer_.Run(); });
  }
  void TearDown() override {
    transport_.Close();
    if (thread_.joinable()) thread_.join();
  }
  Json::Value Out(size_t i) {
    auto lines = transport_.WaitForOutput(i + 1, 2000);
    EXPECT_GT(lines.size(), i);
    if (lines.size() <= i) return Json::Value();
    return *ParseJson(lines[i]);
  }
  MemoryTransport transport_;
  Peer peer_{&transport_, PeerOptions{}};
  std::thread thread_;
};

TEST_F(JsonRpcTest, ParseErrorHasNullId) {
  Start();
  transport_.Push("{not json");
  Json::Value v = Out(0);
  EXPECT_EQ(v["error"]["code"].asInt(), kParseError);
  EXPECT_TRUE(v["id"].isNull());
  EXPECT_EQ(v["jsonrpc"].asString(), "2.0");
}

TEST_F(JsonRpcTest, UnknownMethodIsMethodNotFoundAndIdEchoed) {
  Start();
  transport_.Push(R"({"jsonrpc":"2.0","id":"abc","method":"nope","params":{}})");
  Json::Value v = Out(0);
  EXPECT_EQ(v["error"]["code"].asInt(), kMethodNotFound);
  EXPECT_EQ(v["id"].asString(), "abc");
}

TEST_F(JsonRpcTest, InvalidRequestShapes) {
  Start();
  transport_.Push(R"([1,2])");
  transport_.Push(R"({"jsonrpc":"2.0","id":7,"method":5})");
  transport_.Push(R"({"jsonrpc":"1.0","id":8,"method":"x"})");
  EXPECT_EQ(Out(0)["error"]["code"].asInt(), kInvalidRequest);
  Json::Value v1 = Out(1);
  EXPECT_EQ(v1["error"]["code"].asInt(), kInvalidRequest);
  EXPECT_EQ(v1["id"].asInt(), 7);
  EXPECT_EQ(Out(2)["error"]["code"].asInt(), kInvalidRequest);
}

TEST_F(JsonRpcTest, HandlerRepliesAndDroppedReplyStillAnswers) {
  peer_.OnRequest("echo", [](const Json::Value& p, Reply r) { r.Result(p); });
  peer_.OnRequest("drop", [](const Json::Value&, Reply) {});
  Start();
  transport_.Push(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}})");
  transport_.Push(R"({"jsonrpc":"2.0","id":2,"method":"drop","params":{}})");
  Json::Value a = Out(0);
  EXPECT_EQ(a["result"]["x"].asInt(), 1);
  EXPECT_EQ(a["id"].asInt(), 1);
  Json::Value b = Out(1);
  EXPECT_EQ(b["error"]["code"].asInt(), kInternalError);
  EXPECT_EQ(b["id"].asInt(), 2);
}

TEST_F(JsonRpcTest, UnknownNotificationIsIgnored) {
  int seen = 0;
  peer_.OnNotification("note", [&](const Json::Value&) { ++seen; });
  peer_.OnRequest("ping",
                  [](const Json::Value&, Reply r) { r.Result(Json::Value(Json::objectValue)); });
  Start();
  transport_.Push(R"({"jsonrpc":"2.0","method":"whatever","params":{}})");
  transport_.Push(R"({"jsonrpc":"2.0","method":"note","params":{}})");
  transport_.Push(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");
  Json::Value v = Out(0);
  EXPECT_EQ(v["id"].asInt(), 3);
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(transport_.Output().size(), 1u);
}

TEST_F(JsonRpcTest, OutgoingCallGetsResponse) {
  Start();
  std::thread caller([&] {
    auto r = peer_.Call("client/thing", Json::Value(Json::objectValue), CancelToken());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)["ok"].asBool(), true);
  });
  Json::Value req = Out(0);
  EXPECT_EQ(req["method"].asString(), "client/thing");
  transport_.Push(R"({"jsonrpc":"2.0","id":)" + std::to_string(req["id"].asInt64()) +
                  R"(,"result":{"ok":true}})");
  caller.join();
}

TEST_F(JsonRpcTest, OutgoingCallCancelledSendsCancelRequest) {
  Start();
  CancelSource src;
  std::thread caller([&] {
    auto r = peer_.Call("slow", Json::Value(Json::objectValue), src.token());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  });
  Json::Value req = Out(0);
  src.Cancel();
  caller.join();
  Json::Value cancel = Out(1);
  EXPECT_EQ(cancel["method"].asString(), "$/cancel_request");
  EXPECT_EQ(cancel["params"]["requestId"].asInt64(), req["id"].asInt64());
}

TEST_F(JsonRpcTest, OutgoingCallFailsOnDisconnect) {
  Start();
  std::thread caller([&] {
    auto r = peer_.Call("x", Json::Value(Json::objectValue), CancelToken());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kDisconnected);
  });
  Out(0);
  transport_.Close();
  caller.join();
}

TEST(FdTransportTest, SkipsOverlongLineAndKeepsGoing) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string big(1000, 'x');
  std::string input = "short\r\n" + big + "\nafter\n";
  ASSERT_EQ(write(fds[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(fds[1]);
  FdTransport t(fds[0], -1, 100);
  std::string line;
  size_t size = 0;
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kLine);
  EXPECT_EQ(line, "short");
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kTooLong);
  EXPECT_EQ(size, 1000u);
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kLine);
  EXPECT_EQ(line, "after");
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kEof);
  close(fds[0]);
}

// A peer that does not answer malformed lines (an MCP server's stdout) drops every line that is
// no JSON-RPC message, however many, and still answers real requests and takes real responses.
TEST(JsonRpcPeerTest, MalformedLinesFromAServerAreDroppedNotAnswered) {
  MemoryTransport transport;
  PeerOptions o;
  o.answer_malformed = false;
  o.name = "MCP server 'chatty'";
  Peer peer(&transport, o);
  peer.OnRequest("ping", [](const Json::Value&, Reply reply) {
    reply.Result(Json::Value(Json::objectValue));
  });
  std::thread reader([&] { peer.Run(); });
  Result<Json::Value> got = MakeError(ErrorCode::kTimeout, "not called");
  std::thread caller([&] { got = peer.Call("initialize", Json::Value(), CancelToken(), 10000); });
  ASSERT_EQ(transport.WaitForOutput(1, 10000).size(), 1u) << "the call's request";
  for (int i = 0; i < 2000; ++i) transport.Push("INFO starting up, step " + std::to_string(i));
  for (const char* bad : {"[1,2]", "{}", R"({"jsonrpc":"1.0","id":8,"method":"x"})",
                          R"({"jsonrpc":"2.0","id":7,"method":5})", R"({"jsonrpc":"2.0","id":1.5})",
                          R"({"jsonrpc":"2.0","method":"x","id":[1]})", "\x00\xff{{{"})
    transport.Push(bad);
  transport.Push(R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
  transport.Push(R"({"jsonrpc":"2.0","id":0,"result":{"ok":true}})");
  caller.join();
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(BoolOr(*got, "ok", false));
  auto out = transport.WaitForOutput(2, 10000);
  transport.Close();
  reader.join();
  // The request, then the ping's answer: nothing for the 2,007 other lines.
  ASSERT_EQ(out.size(), 2u);
  auto ping = ParseJson(out[1]);
  ASSERT_TRUE(ping.ok());
  EXPECT_EQ(StringOr(*ping, "id"), "p");
  EXPECT_NE(FindMember(*ping, "result"), nullptr);
}

// A line over the transport's limit that answers a pending call fails that call at once, naming
// the size and the limit, instead of leaving it to its timeout; the reader goes on.
TEST(JsonRpcPeerTest, OverLongAnswerFailsItsCallAtOnce) {
  int to_peer[2];
  ASSERT_EQ(pipe(to_peer), 0);
  // Reads from the pipe (1 KiB lines at most); what the peer sends is counted.
  struct PipeIn : LineTransport {
    explicit PipeIn(int fd) : in(fd, -1, 1024) {}
    ReadStatus ReadLine(std::string* line, size_t* size) override {
      return in.ReadLine(line, size);
    }
    void WriteLine(std::string) override {
      std::lock_guard<std::mutex> lock(mu);
      ++sent;
      cv.notify_all();
    }
    size_t max_line_bytes() const override { return in.max_line_bytes(); }
    void WaitSent(int n) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return sent >= n; });
    }
    FdTransport in;
    std::mutex mu;
    std::condition_variable cv;
    int sent = 0;
  } transport(to_peer[0]);
  PeerOptions o;
  o.answer_malformed = false;
  Peer peer(&transport, o);
  std::thread reader([&] { peer.Run(); });
  auto answer = [&](const std::string& line) {
    ssize_t n = write(to_peer[1], line.data(), line.size());
    EXPECT_EQ(n, static_cast<ssize_t>(line.size()));
  };
  // The timeout only ends the test if the call is not failed at once.
  Result<Json::Value> big = MakeError(ErrorCode::kUsage, "not called");
  std::thread c0([&] { big = peer.Call("a", Json::Value(), CancelToken(), 30000); });
  transport.WaitSent(1);
  std::string line =
      R"({"jsonrpc":"2.0","id":0,"result":{"text":")" + std::string(50000, 'x') + "\"}}\n";
  std::thread writer([&] { answer(line); });
  c0.join();
  writer.join();
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kToolTooLarge) << big.error().message;
  EXPECT_NE(big.error().message.find("over the limit of 1 KiB"), std::string::npos)
      << big.error().message;
  // The next call is answered as usual.
  Result<Json::Value> next = MakeError(ErrorCode::kUsage, "not called");
  std::thread c1([&] { next = peer.Call("b", Json::Value(), CancelToken(), 30000); });
  transport.WaitSent(2);
  answer(R"({"jsonrpc":"2.0","id":1,"result":{"n":1}})"
         "\n");
  c1.join();
  close(to_peer[1]);
  reader.join();
  close(to_peer[0]);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(IntOr(*next, "n", 0), 1);
}

// An answer with more items than max_items (a million tiny content blocks) is not parsed: its
// call fails at once, and the next one is answered as usual.
TEST(JsonRpcPeerTest, AnswerWithTooManyItemsFailsItsCall) {
  MemoryTransport transport;
  PeerOptions o;
  o.answer_malformed = false;
  o.max_items = 100;
  Peer peer(&transport, o);
  std::thread reader([&] { peer.Run(); });
  Result<Json::Value> many = MakeError(ErrorCode::kUsage, "not called");
  std::thread c0([&] { many = peer.Call("a", Json::Value(), CancelToken(), 30000); });
  ASSERT_EQ(transport.WaitForOutput(1, 10000).size(), 1u);
  std::string blocks;
  for (int i = 0; i < 101; ++i) blocks += std::string(i ? "," : "") + R"({"t":"a,b[{"})";
  transport.Push(R"({"jsonrpc":"2.0","id":0,"result":{"content":[)" + blocks + "]}}");
  c0.join();
  // EXPECT, not ASSERT: the threads below must still be joined.
  EXPECT_FALSE(many.ok());
  if (!many.ok()) {
    EXPECT_EQ(many.error().code, ErrorCode::kToolTooLarge);
    EXPECT_NE(many.error().message.find("more than 100 JSON items"), std::string::npos)
        << many.error().message;
  }
  // 40 items, with commas and brackets inside strings that do not count.
  blocks.clear();
  for (int i = 0; i < 40; ++i) blocks += std::string(i ? "," : "") + R"("a,\",[{")";
  Result<Json::Value> few = MakeError(ErrorCode::kUsage, "not called");
  std::thread c1([&] { few = peer.Call("b", Json::Value(), CancelToken(), 30000); });
  ASSERT_EQ(transport.WaitForOutput(2, 10000).size(), 2u);
  transport.Push(R"({"jsonrpc":"2.0","id":1,"result":[)" + blocks + "]}");
  c1.join();
  transport.Close();
  reader.join();
  ASSERT_TRUE(few.ok()) << few.error().message;
  EXPECT_EQ(few->size(), 40u);
}

// The ACP door's case: a client floods the peer with lines that are not JSON and does not read
// the answers. JSON-RPC asks for a -32700 answer to each, but the reading thread never waits in
// a write: it reaches the request that follows while nothing has been read, and every answer
// is written afterwards, in order, once the client reads.
TEST(JsonRpcPeerTest, AnswersNeverStopTheReaderWhenTheClientDoesNotRead) {
  int in[2], out[2];
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  FdTransport transport(in[0], out[1], 1 << 20);
  Peer peer(&transport, PeerOptions{});
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false;
  peer.OnRequest("mark", [&](const Json::Value&, Reply reply) {
    reply.Result(Json::Value(Json::objectValue));
    std::lock_guard<std::mutex> lock(mu);
    reached = true;
    cv.notify_all();
  });
  std::thread reader([&] { peer.Run(); });
  constexpr int kLines = 50000;  // about 5 MiB of answers; a pipe holds 64 KiB
  std::thread client([&] {
    std::string all;
    for (int i = 0; i < kLines; ++i) all += "garbage " + std::to_string(i) + "\n";
    all += R"({"jsonrpc":"2.0","id":"m","method":"mark"})"
           "\n";
    for (size_t done = 0; done < all.size();) {
      ssize_t n = write(in[1], all.data() + done, all.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return reached; }))
        << "the reader stopped in a write";
  }
  // Now the client reads: every answer arrives, in order, the mark's last.
  std::string got;
  int lines = 0;
  char buf[1 << 16];
  while (lines < kLines + 1) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    for (ssize_t i = 0; i < n; ++i) lines += buf[i] == '\n';
  }
  client.join();
  close(in[1]);
  reader.join();
  EXPECT_EQ(lines, kLines + 1);
  EXPECT_NE(got.rfind(R"("id":"m")"), std::string::npos);
  EXPECT_GT(got.rfind(R"("id":"m")"), got.rfind("-32700"));
  close(in[0]);
  close(out[0]);
  close(out[1]);
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t from = 0, nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1)
    lines.push_back(text.substr(from, nl - from));
  return lines;
}

// A batch (WriteLines) reaches the other side whole and in order while another thread writes
// lines one by one: none of them lands inside a batch, and nothing is lost.
TEST(FdTransportTest, ABatchIsWrittenWholeAmongOtherWriters) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  FdTransport transport(-1, out[1], 1 << 20);
  constexpr int kBatches = 200, kPerBatch = 50, kSingles = 5000;
  std::string got;
  std::thread drain([&] {
    char buf[1 << 16];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<size_t>(n));
  });
  std::thread batches([&] {
    for (int b = 0; b < kBatches; ++b) {
      std::vector<std::string> lines(kPerBatch);
      for (int i = 0; i < kPerBatch; ++i)
        lines[i] = "a" + std::to_string(b) + "-" + std::to_string(i);
      transport.WriteLines(std::move(lines));
    }
  });
  std::thread singles([&] {
    for (int i = 0; i < kSingles; ++i) transport.WriteLine("b" + std::to_string(i));
  });
  batches.join();
  singles.join();
  close(out[1]);  // every writer has returned: what they wrote is in the pipe
  drain.join();
  close(out[0]);
  std::vector<std::string> lines = SplitLines(got);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kBatches * kPerBatch + kSingles));
  int next_single = 0;
  int next_batch = 0;
  for (size_t at = 0; at < lines.size();) {
    if (lines[at][0] == 'b') {
      EXPECT_EQ(lines[at], "b" + std::to_string(next_single++));
      ++at;
      continue;
    }
    for (int i = 0; i < kPerBatch; ++i, ++at)
      ASSERT_EQ(lines[at], "a" + std::to_string(next_batch) + "-" + std::to_string(i));
    ++next_batch;
  }
  EXPECT_EQ(next_batch, kBatches);
  EXPECT_EQ(next_single, kSingles);
}

// A batch of notifications is, line for line, what the same notifications sent one by one are.
TEST(JsonRpcPeerTest, ABatchOfNotificationsIsTheSameLines) {
  MemoryTransport one, many;
  Peer a(&one, PeerOptions{});
  Peer b(&many, PeerOptions{});
  const std::vector<std::string> params = {R"({"x":1})", R"({"y":"\u00e9"})", "[]"};
  for (const auto& p : params) a.NotifySerialized("session/update", p);
  b.NotifySerializedBatch("session/update", params);
  EXPECT_EQ(one.Output(), many.Output());
  EXPECT_EQ(many.Output().size(), 3u);
}

TEST(FdTransportTest, OverlongLineKeepsItsHead) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string big = R"({"id":42,"x":")" + std::string(100000, 'x') + "\"}\n";
  std::thread writer([&] {
    ssize_t ignored = write(fds[1], big.data(), big.size());
    (void)ignored;
    close(fds[1]);
  });
  FdTransport t(fds[0], -1, 1000);
  std::string line;
  size_t size = 0;
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kTooLong);
  EXPECT_EQ(size, big.size() - 1);
  EXPECT_EQ(line, big.substr(0, LineTransport::kTooLongHeadBytes));
  EXPECT_EQ(t.ReadLine(&line, &size), ReadStatus::kEof);
  writer.join();
  close(fds[0]);
}

TEST(JsonUtilTest, StrictParsingAndFieldPaths) {
  EXPECT_FALSE(ParseJson(R"({"a":1} trailing)").ok());
  auto v = ParseJson(R"({"s":"x","n":3,"b":true,"o":{}})");
  ASSERT_TRUE(v.ok());
  FieldReader r(*v, "params");
  EXPECT_EQ(*r.String("s", true), "x");
  EXPECT_EQ(*r.Int("n", true), 3);
  EXPECT_TRUE(r.ok());
  r.String("n", true);
  EXPECT_EQ(r.error(), "params.n: expected string");
  FieldReader r2(*v, "params");
  r2.String("missing", true);
  EXPECT_EQ(r2.error(), "params.missing: required");
}

}  // namespace
}  // namespace lousho::jsonrpc

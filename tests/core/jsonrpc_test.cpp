// Tests of the JSON-RPC peer over the in-memory transport.
#include "support/jsonrpc.h"

#include <gtest/gtest.h>
#include <unistd.h>

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

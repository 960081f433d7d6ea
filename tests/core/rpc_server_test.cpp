// Tests of the RPC door over an in-memory transport where a transcript cannot go: commands that
// take ids the engine makes (branch / fork from an entry id) and the queue's hand-over between
// runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/tool.h"
#include "host/session_host.h"
#include "rpc_compat/server.h"
#include "support/env.h"
#include "support/json_util.h"

namespace lousho::rpc_compat {
namespace {
namespace fs = std::filesystem;

class RpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(""); }
  // Serves tests/transcripts/rpc/agent.yaml; sessions are saved under `session_dir` (empty: not
  // at all).
  void Start(const std::string& session_dir) {
    host::HostOptions ho;
    ho.choice = {config::AgentSource::kArgument,
                 (fs::path(LOUSHO_SOURCE_DIR) / "tests/transcripts/rpc/agent.yaml").string(), ""};
    ho.env = ProcessEnv;
    ho.session_dir = session_dir;
    ho.no_session = session_dir.empty();
    ho.test_ids = true;
    host_ = std::make_unique<host::SessionHost>(std::move(ho));
    Status loaded = host_->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    ServerOptions options;
    options.cwd = fs::temp_directory_path();
    server_ = std::make_unique<Server>(&transport_, host_.get(), options);
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    transport_.Close();
    if (thread_.joinable()) thread_.join();
  }

  // Sends a command and returns the first frame after `seen` lines that `pred` accepts.
  Json::Value SendAndWait(const std::string& line,
                          const std::function<bool(const Json::Value&)>& pred) {
    transport_.Push(line);
    for (size_t n = seen_ + 1;; ++n) {
      auto out = transport_.WaitForOutput(n, 10000);
      if (out.size() < n) break;
      for (; seen_ < out.size(); ++seen_) {
        auto j = ParseJson(out[seen_]);
        if (j.ok() && pred(*j)) {
          ++seen_;
          return *j;
        }
      }
    }
    ADD_FAILURE() << "no frame for " << line;
    return Json::Value();
  }
  static std::function<bool(const Json::Value&)> ResponseTo(const std::string& id) {
    return [id](const Json::Value& j) {
      return StringOr(j, "type") == "response" && StringOr(j, "id") == id;
    };
  }
  static bool Settled(const Json::Value& j) { return StringOr(j, "type") == "agent_settled"; }

  MemoryTransport transport_;
  std::unique_ptr<host::SessionHost> host_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  size_t seen_ = 0;
};

TEST_F(RpcServerTest, BranchAndForkStartFromTheHistoryBeforeAUserMessage) {
  SendAndWait(R"({"id":"p1","type":"prompt","message":"hello"})", Settled);
  SendAndWait(R"({"id":"p2","type":"prompt","message":"echo two"})", Settled);

  Json::Value listed = SendAndWait(R"({"id":"b1","type":"get_branch_messages"})", ResponseTo("b1"));
  const Json::Value& msgs = MemberOrNull(MemberOrNull(listed, "data"), "messages");
  ASSERT_EQ(msgs.size(), 2u) << WriteJson(listed);
  EXPECT_EQ(StringOr(ElementOrNull(msgs, 0), "text"), "hello");
  EXPECT_EQ(StringOr(ElementOrNull(msgs, 1), "text"), "echo two");
  const std::string first = StringOr(ElementOrNull(msgs, 0), "entryId");
  const std::string second = StringOr(ElementOrNull(msgs, 1), "entryId");
  EXPECT_EQ(first.size(), 8u);
  EXPECT_NE(first, second);

  // branch at the second prompt: the text comes back, the history keeps the first exchange.
  Json::Value b =
      SendAndWait(R"({"id":"b2","type":"branch","entryId":")" + second + R"("})", ResponseTo("b2"));
  EXPECT_TRUE(BoolOr(b, "success", false)) << WriteJson(b);
  EXPECT_EQ(StringOr(MemberOrNull(b, "data"), "text"), "echo two");
  EXPECT_EQ(BoolOr(MemberOrNull(b, "data"), "cancelled", true), false);
  Json::Value m = SendAndWait(R"({"id":"m1","type":"get_messages"})", ResponseTo("m1"));
  const Json::Value& kept = MemberOrNull(MemberOrNull(m, "data"), "messages");
  ASSERT_EQ(kept.size(), 2u) << WriteJson(m);
  EXPECT_EQ(StringOr(ElementOrNull(kept, 1), "role"), "assistant");
  Json::Value left = SendAndWait(R"({"id":"b3","type":"get_fork_messages"})", ResponseTo("b3"));
  EXPECT_EQ(MemberOrNull(MemberOrNull(left, "data"), "messages").size(), 1u) << WriteJson(left);

  // The branch goes on from there: a new prompt follows the first exchange.
  SendAndWait(R"({"id":"p3","type":"prompt","message":"echo three"})", Settled);
  Json::Value m2 = SendAndWait(R"({"id":"m2","type":"get_messages"})", ResponseTo("m2"));
  EXPECT_EQ(MemberOrNull(MemberOrNull(m2, "data"), "messages").size(), 4u) << WriteJson(m2);

  // fork (pi's name) at the very first prompt: an empty history.
  Json::Value f =
      SendAndWait(R"({"id":"f1","type":"fork","entryId":")" + first + R"("})", ResponseTo("f1"));
  EXPECT_EQ(StringOr(f, "command"), "fork");
  EXPECT_EQ(StringOr(MemberOrNull(f, "data"), "text"), "hello");
  Json::Value m3 = SendAndWait(R"({"id":"m3","type":"get_messages"})", ResponseTo("m3"));
  EXPECT_EQ(MemberOrNull(MemberOrNull(m3, "data"), "messages").size(), 0u) << WriteJson(m3);
}

TEST_F(RpcServerTest, BranchRefusesWhileStreamingAndUnknownEntries) {
  SendAndWait(R"({"id":"p1","type":"prompt","message":"slow"})",
              [](const Json::Value& j) { return StringOr(j, "type") == "turn_start"; });
  Json::Value busy =
      SendAndWait(R"({"id":"b1","type":"branch","entryId":"00000000"})", ResponseTo("b1"));
  EXPECT_EQ(StringOr(busy, "error"), "Cannot branch while a response is in progress");
  SendAndWait(R"({"id":"a1","type":"abort"})", ResponseTo("a1"));
  Json::Value missing =
      SendAndWait(R"({"id":"b2","type":"branch","entryId":"00000000"})", ResponseTo("b2"));
  EXPECT_EQ(StringOr(missing, "error"), "Entry not found: 00000000");
}

TEST_F(RpcServerTest, FramesAreOneJsonObjectPerLineWithIdsEchoedAsSent) {
  Json::Value r = SendAndWait(R"({"id":42,"type":"nope"})", [](const Json::Value& j) {
    return StringOr(j, "type") == "response";
  });
  EXPECT_EQ(AsInt64(MemberOrNull(r, "id")).value_or(0), 42);
  EXPECT_EQ(StringOr(r, "error"), "Unknown command: nope");
  for (const auto& line : transport_.Output()) {
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_TRUE(ParseJson(line).ok()) << line;
  }
}

// The ready frame promises maxFrameBytes (1 MiB): a longer response becomes a failure, a longer
// agent_end drops the messages already streamed one by one.
TEST_F(RpcServerTest, FramesOverTheLimitAreMadeToFit) {
  const std::string big(size_t{600} * 1024, 'x');
  Json::Value end =
      SendAndWait(R"({"id":"p1","type":"prompt","message":"echo )" + big + R"("})",
                  [](const Json::Value& j) { return StringOr(j, "type") == "agent_end"; });
  EXPECT_EQ(MemberOrNull(end, "messages").size(), 0u);
  EXPECT_EQ(IntOr(end, "messageCount", 0), 2);
  Json::Value m = SendAndWait(R"({"id":"m1","type":"get_messages"})", ResponseTo("m1"));
  EXPECT_FALSE(BoolOr(m, "success", true));
  EXPECT_EQ(StringOr(m, "error"), "RPC response exceeded the transport limit");
  EXPECT_EQ(StringOr(m, "command"), "get_messages");
  for (const auto& line : transport_.Output()) EXPECT_LE(line.size() + 1, 1048576u);
  // Under the limit nothing changes: the stats still answer.
  Json::Value st = SendAndWait(R"({"id":"s1","type":"get_session_stats"})", ResponseTo("s1"));
  EXPECT_TRUE(BoolOr(st, "success", false));
}

// The session-file and compaction commands reach the files through the session host.
class RpcSessionFilesTest : public RpcServerTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-rpc-files-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    Start(dir_.string());
  }
  void TearDown() override {
    RpcServerTest::TearDown();
    fs::remove_all(dir_);
  }
  std::string Data(const Json::Value& response, const char* key) {
    return StringOr(MemberOrNull(response, "data"), key);
  }
  fs::path dir_;
};

TEST_F(RpcSessionFilesTest, CommandsUseTheHostsSessionFiles) {
  SendAndWait(R"({"id":"p1","type":"prompt","message":"hello"})", Settled);
  Json::Value st = SendAndWait(R"({"id":"s1","type":"get_state"})", ResponseTo("s1"));
  const std::string first = Data(st, "sessionFile");
  EXPECT_EQ(fs::path(first).parent_path().parent_path(), dir_) << WriteJson(st);
  EXPECT_TRUE(fs::exists(first));
  ASSERT_EQ(host_->List(fs::temp_directory_path().string()).size(), 1u);

  Json::Value n = SendAndWait(R"({"id":"n1","type":"new_session"})", ResponseTo("n1"));
  EXPECT_TRUE(BoolOr(n, "success", false)) << WriteJson(n);
  Json::Value sw = SendAndWait(
      R"({"id":"w1","type":"switch_session","sessionPath":")" + first + R"("})", ResponseTo("w1"));
  EXPECT_TRUE(BoolOr(sw, "success", false)) << WriteJson(sw);
  Json::Value st2 = SendAndWait(R"({"id":"s2","type":"get_state"})", ResponseTo("s2"));
  EXPECT_EQ(Data(st2, "sessionFile"), first);
  EXPECT_EQ(IntOr(MemberOrNull(st2, "data"), "messageCount", 0), 2);

  Json::Value ex = SendAndWait(R"({"id":"e1","type":"export_html"})", ResponseTo("e1"));
  EXPECT_TRUE(fs::exists(Data(ex, "path"))) << WriteJson(ex);
  Json::Value c = SendAndWait(R"({"id":"c1","type":"compact","customInstructions":"keep todos"})",
                              ResponseTo("c1"));
  EXPECT_EQ(Data(c, "summary"), "Summary: the user said hello.") << WriteJson(c);
  SendAndWait(R"({"id":"a1","type":"set_auto_compaction","enabled":false})", ResponseTo("a1"));
  Json::Value st3 = SendAndWait(R"({"id":"s3","type":"get_state"})", ResponseTo("s3"));
  EXPECT_FALSE(BoolOr(MemberOrNull(st3, "data"), "autoCompactionEnabled", true));
  if (fs::exists(Data(ex, "path"))) fs::remove(Data(ex, "path"));
}

}  // namespace
}  // namespace lousho::rpc_compat

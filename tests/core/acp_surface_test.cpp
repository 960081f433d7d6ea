// Tests of the newer ACP surface (issue 21): messageId on chunks, live and replayed; the tool's
// own name; the prompt's usage; notices chosen by the client's capabilities; the params of
// session/fork and logout; deleting a session file under its lock; forgetting stored
// credentials; and the RPC door's setStatus requests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "acp/codec.h"
#include "agent/session_store.h"
#include "config/credentials.h"
#include "rpc_compat/codec.h"
#include "support/json_util.h"

namespace lousho {
namespace {
using agent::Event;
namespace ev = agent::event;
namespace fs = std::filesystem;

Json::Value Parsed(const std::string& s) { return *ParseJson(s); }

TEST(AcpSurfaceTest, ReplayedChunksCarryTheirEntryId) {
  std::vector<agent::Entry> branch(2);
  branch[0].id = "u1";
  branch[0].message.role = agent::Role::kUser;
  branch[0].message.content = {agent::ContentBlock::Text("hello")};
  branch[1].id = "a1";
  branch[1].message.role = agent::Role::kAssistant;
  branch[1].message.content = {agent::ContentBlock::Thinking("hm"),
                               agent::ContentBlock::Text("hi")};
  const auto updates = acp::ReplayUpdates({&branch[0], &branch[1]});
  ASSERT_EQ(updates.size(), 3U);
  EXPECT_EQ(updates[0]["messageId"].asString(), "u1");
  EXPECT_EQ(updates[1]["messageId"].asString(), "a1");
  EXPECT_EQ(updates[2]["messageId"].asString(), "a1");
}

TEST(AcpSurfaceTest, LiveChunksCarryTheIdTheirMessageIsRecordedWith) {
  agent::Message partial;
  partial.role = agent::Role::kAssistant;
  agent::StreamDelta d;
  d.kind = agent::DeltaKind::kThinking;
  d.text = "hm";
  const Json::Value got =
      Parsed(*acp::ChunkUpdateParamsJson("s", ev::MessageUpdate{1, &d, &partial, "0a1b2c3d"}));
  EXPECT_EQ(got["update"]["messageId"].asString(), "0a1b2c3d");
  EXPECT_EQ(got["update"]["sessionUpdate"].asString(), "agent_thought_chunk");
  // None known: no member (a null would be a message of its own to some clients).
  EXPECT_FALSE(
      Parsed(*acp::ChunkUpdateParamsJson("s", ev::MessageUpdate{1, &d, &partial, {}}))["update"]
          .isMember("messageId"));
}

TEST(AcpSurfaceTest, ToolCallNamesTheTool) {
  const Json::Value args = Parsed(R"({"command":"ls"})");
  ev::ToolCall call;
  call.id = "c1";
  call.name = "mcp__files__list";
  call.title = "List files";
  call.args = &args;
  const Json::Value u = *acp::UpdateFromEvent(ev::ToolExecutionStart{1, &call});
  EXPECT_EQ(u["name"].asString(), "mcp__files__list");
  EXPECT_EQ(u["title"].asString(), "List files");
}

TEST(AcpSurfaceTest, PromptUsageCountsEveryInputToken) {
  agent::Usage usage;
  usage.input = 100;
  usage.output = 20;
  usage.cache_read = 300;
  usage.cache_write = 5;
  EXPECT_EQ(Parsed(WriteJson(acp::PromptUsageToJson(usage))),
            Parsed(R"({"inputTokens":405,"outputTokens":20,"totalTokens":425,)"
                   R"("cachedReadTokens":300,"cachedWriteTokens":5})"));
}

std::vector<std::string> KindsFor(const Event& e, bool notices, bool compaction) {
  acp::ClientCapabilities caps;
  caps.notices = notices;
  caps.compaction = compaction;
  std::vector<std::string> kinds;
  acp::ForEachSessionUpdate(
      e, caps, [&](const Json::Value& u) { kinds.push_back(u["sessionUpdate"].asString()); });
  return kinds;
}

TEST(AcpSurfaceTest, NoticesReplacePlaceholdersOnlyForClientsThatTakeThem) {
  ev::TtsrTriggered ttsr;
  ttsr.rules = {"no-rm"};
  ttsr.id = "ttsr-1";
  using Kinds = std::vector<std::string>;
  EXPECT_EQ(KindsFor(ttsr, false, false), Kinds{"tool_call"});
  EXPECT_EQ(KindsFor(ttsr, true, false), Kinds{"notice"});
  ttsr.interrupted = false;  // no placeholder and no notice: the tool's result carries it
  EXPECT_EQ(KindsFor(ttsr, true, false), KindsFor(ttsr, false, false));

  const ev::AutoCompactionStart start{"cmp-1", "manual", 900};
  EXPECT_EQ(KindsFor(start, false, false), Kinds{"tool_call"});
  EXPECT_EQ(KindsFor(start, true, false), Kinds{"notice"});
  EXPECT_EQ(KindsFor(start, true, true), Kinds{"compaction_update"});
  ev::AutoCompactionEnd end;
  end.id = "cmp-1";
  end.error = "no summary";
  EXPECT_EQ(KindsFor(end, true, false), Kinds{"notice"});
  Json::Value notice;
  acp::ClientCapabilities caps;
  caps.notices = true;
  acp::ForEachSessionUpdate(end, caps, [&](const Json::Value& u) { notice = u; });
  EXPECT_EQ(notice["severity"].asString(), "warning");
  EXPECT_NE(notice["description"].asString().find("no summary"), std::string::npos);

  // A warning keeps its agent message and gets a notice beside it.
  const ev::Warning w{"session-file", "cannot save", "Saving failed", false};
  EXPECT_EQ(KindsFor(w, true, false), (Kinds{"agent_message_chunk", "notice"}));
  EXPECT_EQ(KindsFor(w, false, false), Kinds{"agent_message_chunk"});
}

TEST(AcpSurfaceTest, CompactionSummaryChunksOnlyForClientsThatTakeCompactionUpdates) {
  const ev::CompactionSummaryDelta delta{"compaction-2", "The user asked"};
  using Kinds = std::vector<std::string>;
  EXPECT_EQ(KindsFor(delta, true, true), Kinds{"compaction_summary_chunk"});
  EXPECT_EQ(KindsFor(delta, true, false), Kinds{});
  EXPECT_EQ(KindsFor(delta, false, false), Kinds{});
  const Json::Value u = *acp::CompactionUpdateFromEvent(delta);
  EXPECT_EQ(u["compactionId"].asString(), "compaction-2");
  EXPECT_EQ(u["content"]["type"].asString(), "text");
  EXPECT_EQ(u["content"]["text"].asString(), "The user asked");
}

TEST(AcpSurfaceTest, ForkAndLogoutParams) {
  auto fork = acp::ForkSessionParams::FromJson(
      Parsed(R"({"sessionId":"s1","cwd":"/w","_meta":{"messageId":"ab12"}})"));
  ASSERT_TRUE(fork.ok());
  EXPECT_EQ(fork->session_id, "s1");
  EXPECT_EQ(fork->message_id, "ab12");
  EXPECT_EQ(fork->session.cwd, "/w");
  auto whole = acp::ForkSessionParams::FromJson(Parsed(R"({"sessionId":"s1","cwd":"/w"})"));
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->message_id.empty());
  auto bad = acp::ForkSessionParams::FromJson(
      Parsed(R"({"sessionId":"s1","cwd":"/w","_meta":{"messageId":3}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("params._meta.messageId"), std::string::npos);
  EXPECT_FALSE(acp::ForkSessionParams::FromJson(Parsed(R"({"cwd":"/w"})")).ok());
  EXPECT_TRUE(acp::LogoutParams::FromJson(Json::Value()).ok());
  EXPECT_TRUE(acp::LogoutParams::FromJson(Parsed(R"({"_meta":{}})")).ok());
  EXPECT_FALSE(acp::LogoutParams::FromJson(Parsed("[1]")).ok());
}

class AcpSurfaceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-surface-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AcpSurfaceFiles, DeletingASessionFileRespectsItsLock) {
  const fs::path path = dir_ / "s.jsonl";
  agent::SessionHeader header;
  header.id = "s";
  header.cwd = dir_.string();
  auto writer = agent::SessionWriter::ForNew(path, header);
  agent::Entry e;
  e.kind = agent::EntryKind::kMessage;
  e.id = "e1";
  writer->Record(e);
  writer->Flush();
  ASSERT_TRUE(fs::exists(path));
  // Held by a writer (as an open session holds it): refused, and the file stays.
  Status held = agent::DeleteSessionFile(path);
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.error().code, ErrorCode::kSessionLocked);
  EXPECT_TRUE(fs::exists(path));
  writer->Close();
  EXPECT_TRUE(agent::DeleteSessionFile(path).ok());
  EXPECT_FALSE(fs::exists(path));
  Status gone = agent::DeleteSessionFile(path);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kSessionNotFound);
}

TEST_F(AcpSurfaceFiles, ForgettingCredentialsRemovesOnlyTheStoredFile) {
  const std::string path = (dir_ / "credentials.json").string();
  config::StoredCredentials c;
  c.env["ANTHROPIC_API_KEY"] = "sk-test";
  ASSERT_TRUE(config::SaveCredentials(path, c).ok());
  auto forgot = config::ForgetCredentials(path);
  ASSERT_TRUE(forgot.ok());
  EXPECT_TRUE(*forgot);
  EXPECT_FALSE(fs::exists(path));
  auto again = config::ForgetCredentials(path);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_TRUE(config::LoadCredentials(path)->env.empty());
}

TEST(AcpSurfaceTest, RpcStatusFollowsACompactionAndNamedStates) {
  auto start = rpc_compat::StatusRequestFromEvent(ev::AutoCompactionStart{"c", "threshold", 9});
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ((*start)["method"].asString(), "setStatus");
  EXPECT_EQ((*start)["statusKey"].asString(), rpc_compat::kCompactionStatusKey);
  EXPECT_FALSE((*start)["statusText"].asString().empty());
  ev::AutoCompactionEnd end;
  end.id = "c";
  auto cleared = rpc_compat::StatusRequestFromEvent(end);
  ASSERT_TRUE(cleared.has_value());
  EXPECT_EQ((*cleared)["statusKey"].asString(), rpc_compat::kCompactionStatusKey);
  EXPECT_EQ((*cleared)["statusText"].asString(), "");
  EXPECT_FALSE(rpc_compat::StatusRequestFromEvent(ev::TodoAutoClear{}).has_value());
}

}  // namespace
}  // namespace lousho

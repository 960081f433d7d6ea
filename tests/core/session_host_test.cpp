// The session host: the agent loaded with the stored credentials under the environment's, the
// offers computed once, and sessions made, listed, found, opened, forked and deleted in one folder.
#include "host/session_host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "agent/checkpoints.h"

namespace lousho::host {
namespace {
namespace fs = std::filesystem;

class SessionHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-host-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home/.config/lousho");
    fs::create_directories(dir_ / "ws");
    std::ofstream(dir_ / "home/.config/lousho/credentials.json")
        << R"({"provider":"openai","model":"","env":{"STORED_KEY":"sk-stored"}})";
    std::ofstream(dir_ / "agent.yaml")
        << "name: host-test\nmodel: script/t\ntools: [read]\n"
           "scripts:\n  t:\n    - {match: '', text: 'Hi.', chunkSize: 100}\n"
           "providers:\n"
           "  stored: {api: openai-chat, baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: STORED_KEY,"
           " models: [{id: alpha, name: Alpha, reasoning: true}]}\n"
           "  nokey: {api: openai-chat, baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: NO_KEY,"
           " models: [{id: delta}]}\n";
    env_ = {{"HOME", (dir_ / "home").string()}};
    HostOptions o;
    o.choice = {config::AgentSource::kArgument, (dir_ / "agent.yaml").string(), ""};
    o.env = [this](const std::string& k) -> std::optional<std::string> {
      auto it = env_.find(k);
      return it == env_.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    o.session_dir = (dir_ / "sessions").string();
    o.test_ids = true;
    host_ = std::make_unique<SessionHost>(std::move(o));
  }
  void TearDown() override { fs::remove_all(dir_); }

  agent::SessionOptions Options() {
    agent::SessionOptions so;
    so.id = host_->NewSessionId();
    so.cwd = dir_ / "ws";
    return so;
  }

  fs::path dir_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<SessionHost> host_;
};

TEST_F(SessionHostTest, LoadsWithTheStoredKeyAndOffersOnlyUsableModels) {
  EXPECT_FALSE(host_->agent()->model.provider);  // a stand-in before Load
  ASSERT_TRUE(host_->Load().ok());
  EXPECT_TRUE(host_->agent()->model.provider);
  // The agent's own model first; stored/alpha for its key in the credentials file; nokey/delta
  // has no key anywhere.
  const std::vector<ModelOffer> offers = host_->models();
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offers[0].option.id(), "script/t");
  EXPECT_EQ(offers[0].api, "script");
  EXPECT_EQ(offers[1].option.id(), "stored/alpha");
  EXPECT_EQ(offers[1].catalog_name, "Alpha");
  EXPECT_TRUE(offers[1].reasoning);
  EXPECT_EQ(offers[1].api, "openai-chat");
  EXPECT_TRUE(host_->ResolveModel("stored", "alpha").ok());
  ASSERT_EQ(SessionHost::ThinkingLevels().size(), 6u);
  EXPECT_EQ(SessionHost::ThinkingLevels().front().id, "off");
  EXPECT_EQ(SessionHost::ThinkingLevels().back().id, "xhigh");
}

TEST_F(SessionHostTest, SessionsAreMadeListedFoundOpenedAndForkedInOneFolder) {
  ASSERT_TRUE(host_->Load().ok());
  EXPECT_TRUE(host_->saves_sessions());
  auto made = host_->New(Options());
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& s = **made;
  std::vector<agent::ContentBlock> hello;
  hello.push_back(agent::ContentBlock::Text("hello"));
  ASSERT_TRUE(s.Prompt(std::move(hello), [](const Result<agent::TurnResult>&) {}).ok());
  s.WaitIdle();
  ASSERT_TRUE(s.branches().SetName("first").ok());
  s.WaitIdle();
  const std::string file = s.info().session_file;
  EXPECT_EQ(fs::path(file).parent_path().parent_path(), dir_ / "sessions");

  auto listed = host_->List((dir_ / "ws").string());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, "sess-1");
  auto found = host_->Find("sess-1", (dir_ / "ws").string());
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->string(), file);

  // A fork names its parent and starts from the history up to the leaf given.
  auto fork = host_->Fork(s, s.transcript().Leaf(), Options());
  ASSERT_TRUE(fork.ok()) << fork.error().message;
  EXPECT_EQ((*fork)->transcript().Entries().size(), s.transcript().Entries().size());
  (*fork)->Close(nullptr);
  s.Close(nullptr);
  s.WaitIdle();

  // Opened again: the file's id, whatever id the caller had in mind.
  auto opened = host_->Open(Options(), file);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ((*opened)->info().id, "sess-1");
  EXPECT_EQ((*opened)->branches().Name(), "first");
  (*opened)->Close(nullptr);
  (*opened)->WaitIdle();

  // Deleted: the file and its checkpoints are gone, and the list no longer holds it.
  const fs::path checkpoints = agent::CheckpointDirFor(file);
  fs::create_directories(checkpoints / "objects");
  std::ofstream(checkpoints / "index.jsonl") << "{}\n";
  ASSERT_TRUE(host_->Delete("sess-1", (dir_ / "ws").string()).ok());
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(checkpoints));
  for (const auto& listed_now : host_->List((dir_ / "ws").string()))
    EXPECT_NE(listed_now.id, "sess-1");  // the fork is listed still
}

}  // namespace
}  // namespace lousho::host

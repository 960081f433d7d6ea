// The id a streamed message's chunks carry (ACP messageId) is the id of the history entry that
// stores it, and a compaction's summary streams as it is written: the offline model, a session
// with its file, the history and the file read back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>

#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "agent/session_store.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

config::ScriptStep StreamedStep(std::string thinking, std::string text,
                                std::vector<config::ScriptToolCall> calls = {}) {
  config::ScriptStep s;
  s.thinking = std::move(thinking);
  s.text = std::move(text);
  s.tool_calls = std::move(calls);
  s.chunk_size = 3;  // several chunks per block
  return s;
}

class MessageIdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-message-ids-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "notes.txt") << "alpha\n";
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    fs::remove_all(dir_);
  }
  void Make(std::vector<config::ScriptReply> replies) {
    config::Script script;
    script.name = "t";
    script.replies = std::move(replies);
    auto agent = std::make_shared<AgentConfig>();
    agent->model.provider = std::make_shared<ScriptProvider>(script);
    agent->max_steps = 5;
    agent->compaction.keep_recent_tokens = 1;
    agent->tools.push_back(MakeBuiltinTool("read"));
    SessionOptions o;
    o.id = "s1";
    o.cwd = dir_;
    SessionHeader header;
    header.id = "s1";
    header.timestamp_ms = 1764567890123;
    header.cwd = dir_.string();
    o.session_file = (dir_ / "s1.jsonl").string();
    o.recorder = SessionWriter::ForNew(dir_ / "s1.jsonl", header);
    o.sink = [this](const Event& e) {
      std::lock_guard<std::mutex> lock(mu_);
      if (const auto* u = std::get_if<event::MessageUpdate>(&e)) {
        if (u->delta->kind == DeltaKind::kText || u->delta->kind == DeltaKind::kThinking)
          chunks_.emplace_back(std::string(u->message_id), u->delta->text);
      } else if (const auto* d = std::get_if<event::CompactionSummaryDelta>(&e)) {
        summary_chunks_.push_back(*d);
      } else if (const auto* end = std::get_if<event::AutoCompactionEnd>(&e)) {
        compaction_ends_.push_back(*end);
      }
    };
    session_ = *Session::Create(agent, std::move(o));
  }
  void Prompt(const std::string& text) {
    std::promise<Result<TurnResult>> done;
    ASSERT_TRUE(session_
                    ->Prompt({ContentBlock::Text(text)},
                             [&done](Result<TurnResult> r) { done.set_value(std::move(r)); })
                    .ok());
    auto r = done.get_future().get();
    ASSERT_TRUE(r.ok()) << r.error().message;
    session_->WaitIdle();
  }

  fs::path dir_;
  std::shared_ptr<Session> session_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> chunks_;  // (message id, text)
  std::vector<event::CompactionSummaryDelta> summary_chunks_;
  std::vector<event::AutoCompactionEnd> compaction_ends_;
};

TEST_F(MessageIdsTest, ChunksCarryTheIdOfTheEntryThatStoresTheirMessage) {
  config::ScriptToolCall read;
  read.name = "read";
  read.arguments["path"] = "notes.txt";
  Make({config::ScriptReply{
      "", {StreamedStep("let me look", "reading it", {read}), StreamedStep("", "it says alpha")}}});
  Prompt("what is in notes.txt?");

  // Each assistant entry's id and its text and thinking, from the file read back.
  std::map<std::string, std::string> stored;
  session_->WaitIdle();
  session_.reset();  // the file is closed: what a new process would read
  auto loaded = ReadSessionFile(dir_ / "s1.jsonl");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  for (const Entry& e : loaded->entries) {
    if (e.kind != EntryKind::kMessage || e.message.role != Role::kAssistant) continue;
    std::string all;
    for (const ContentBlock& b : e.message.content)
      if (b.type == BlockType::kThinking || b.type == BlockType::kText) all += b.text;
    stored[e.id] = all;
  }
  ASSERT_EQ(stored.size(), 2u);

  // The chunks, joined per id, are exactly the stored messages.
  std::map<std::string, std::string> streamed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_GT(chunks_.size(), 4u);
    for (const auto& [id, text] : chunks_) streamed[id] += text;
  }
  EXPECT_EQ(streamed, stored);
}

TEST_F(MessageIdsTest, ACompactionSummaryStreamsAsItIsWritten) {
  // The summary request's message starts with the conversation it summarizes.
  Make({config::ScriptReply{"^<conversation>", {StreamedStep("", "the user asked twice")}},
        config::ScriptReply{"", {StreamedStep("", "noted")}}});
  Prompt("first question");
  Prompt("second question");
  Prompt("/compact");
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(compaction_ends_.size(), 1u);
  ASSERT_TRUE(compaction_ends_[0].error.empty()) << compaction_ends_[0].error;
  ASSERT_GT(summary_chunks_.size(), 1u);
  std::string joined;
  for (const auto& d : summary_chunks_) {
    EXPECT_EQ(d.id, compaction_ends_[0].id);
    joined += d.text;
  }
  EXPECT_EQ(joined, compaction_ends_[0].summary);
}

}  // namespace
}  // namespace lousho::agent

// Session saves that fail: the user is told once per outage, every later entry retries, and when
// a write succeeds again everything missed is written in order, so the file reloads complete.
// Real files throughout; the failures are ones root meets too (a file where the folder should
// be, RLIMIT_FSIZE), not permission bits.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>

#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "agent/session_store.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

class SessionSaveFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-savefail-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ws");
  }
  void TearDown() override { fs::remove_all(dir_); }

  SessionHeader Header() const {
    SessionHeader h;
    h.id = "savefail";
    h.timestamp_ms = 1764567890123;
    h.cwd = (dir_ / "ws").string();
    h.agent = "tester";
    return h;
  }

  // Entries as a history numbers them: a chain.
  Entry Next(EntryKind kind, const std::string& text) {
    Entry e;
    e.kind = kind;
    if (kind == EntryKind::kMessage) {
      e.message.role = count_ % 2 == 0 ? Role::kUser : Role::kAssistant;
      e.message.content.push_back(ContentBlock::Text(text));
      e.message.timestamp_ms = 1764567890000 + count_;
    } else {
      e.more.Edit().mode = text;
    }
    char id[24];
    std::snprintf(id, sizeof id, "%08x", ++count_);
    e.parent_id = last_id_;
    e.id = last_id_ = id;
    e.timestamp_ms = 1764567890000 + count_;
    recorded_.push_back(e);
    return e;
  }

  // Every entry recorded is in the file, in order, as recorded.
  void ExpectFileHoldsEverything(const fs::path& path) {
    auto read = ReadSessionFile(path);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_TRUE(read->warnings.empty()) << read->warnings[0];
    EXPECT_EQ(read->header.id, "savefail");
    ASSERT_EQ(read->entries.size(), recorded_.size());
    for (size_t i = 0; i < recorded_.size(); ++i)
      EXPECT_EQ(EntryToJson(read->entries[i]), EntryToJson(recorded_[i])) << "entry " << i;
  }

  fs::path dir_;
  int count_ = 0;
  std::string last_id_;
  std::vector<Entry> recorded_;
};

TEST_F(SessionSaveFailureTest, AFolderThatIsAFileIsToldOnceRetriedAndTheMissedEntriesWritten) {
  // The sessions folder is a regular file: the session's folder cannot be made (as root too).
  const fs::path root = dir_ / "sessions";
  std::ofstream(root) << "not a folder";
  const fs::path path = root / "--ws--" / "s.jsonl";
  auto writer = SessionWriter::ForNew(path, Header());

  writer->Record(Next(EntryKind::kModeChange, "plan"));
  EXPECT_FALSE(writer->HasReports()) << "no file is due before the first message";
  writer->Record(Next(EntryKind::kMessage, "hello"));
  ASSERT_TRUE(writer->HasReports());
  auto reports = writer->TakeReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_FALSE(reports[0].resumed);
  EXPECT_EQ(reports[0].path, path.string());
  EXPECT_NE(reports[0].message.find(path.string()), std::string::npos) << reports[0].message;
  EXPECT_NE(reports[0].message.find(std::strerror(ENOTDIR)), std::string::npos)
      << reports[0].message;
  EXPECT_NE(reports[0].message.find("lousho will retry"), std::string::npos) << reports[0].message;
  EXPECT_NE(reports[0].message.find("move it away"), std::string::npos) << reports[0].message;
  EXPECT_FALSE(reports[0].title.empty());
  EXPECT_FALSE(writer->HasReports());

  // Still failing: retried with each entry (and at the turn's end), told no more.
  writer->Record(Next(EntryKind::kMessage, "answer"));
  writer->Flush();
  writer->Record(Next(EntryKind::kMessage, "again"));
  EXPECT_FALSE(writer->HasReports());
  EXPECT_TRUE(writer->TakeReports().empty());
  EXPECT_FALSE(writer->created());

  // The file makes way for a folder: the next entry creates the session file with all of it.
  fs::remove(root);
  fs::create_directories(root);
  writer->Record(Next(EntryKind::kMessage, "after the fix"));
  EXPECT_TRUE(writer->created());
  reports = writer->TakeReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].resumed);
  EXPECT_NE(reports[0].message.find("5 entries"), std::string::npos) << reports[0].message;
  EXPECT_NE(reports[0].message.find(path.string()), std::string::npos) << reports[0].message;
  writer->Record(Next(EntryKind::kMessage, "later"));
  EXPECT_FALSE(writer->HasReports()) << "told once that saving resumed";
  writer->Close();
  ExpectFileHoldsEverything(path);

  // And it opens again for appending, as any session file.
  auto opened = SessionWriter::OpenExisting(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ(opened->second.entries.size(), recorded_.size());
}

// Lowers this process's file size limit (RLIMIT_FSIZE, which binds root too) for its lifetime:
// writes past `bytes` fail with EFBIG (SIGXFSZ ignored meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &lower) == 0;
  }
  ~FileSizeLimit() { Lift(); }
  void Lift() {
    if (lifted_) return;
    lifted_ = true;
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = SIG_DFL;
  bool ok_ = false;
  bool lifted_ = false;
};

TEST_F(SessionSaveFailureTest, AFullDiskIsToldOnceAndTheMissedEntriesAreWrittenWhenSpaceIsBack) {
  const fs::path path = dir_ / "s.jsonl";
  auto writer = SessionWriter::ForNew(path, Header());
  writer->Record(Next(EntryKind::kMessage, "hello"));
  writer->Record(Next(EntryKind::kMessage, "hi"));
  const auto size = fs::file_size(path);
  {
    // Room for a part of the next line only: the write stops inside it.
    FileSizeLimit limit(size + 10);
    ASSERT_TRUE(limit.ok());
    for (int i = 0; i < 3; ++i) writer->Record(Next(EntryKind::kMessage, std::string(500, 'x')));
    writer->Flush();
    limit.Lift();
    EXPECT_EQ(fs::file_size(path), size + 10) << "the write went as far as it could";
    auto reports = writer->TakeReports();
    ASSERT_EQ(reports.size(), 1u) << "three entries and a flush failed; told once";
    EXPECT_FALSE(reports[0].resumed);
    EXPECT_NE(reports[0].message.find(std::strerror(EFBIG)), std::string::npos)
        << reports[0].message;
    EXPECT_NE(reports[0].message.find("cannot write to " + path.string()), std::string::npos)
        << reports[0].message;
  }
  // A crash now would lose only the torn line: everything before it reads back.
  auto torn = ReadSessionFile(path);
  ASSERT_TRUE(torn.ok()) << torn.error().message;
  EXPECT_EQ(torn->entries.size(), 2u);
  EXPECT_EQ(torn->warnings.size(), 1u);

  // Space is back: the next entry writes the rest of the torn line and every missed one.
  writer->Record(Next(EntryKind::kMessage, "space is back"));
  auto reports = writer->TakeReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].resumed);
  EXPECT_NE(reports[0].message.find("4 entries"), std::string::npos) << reports[0].message;
  writer->Close();
  ExpectFileHoldsEverything(path);
}

// Through a real session: the engine emits one event per outage, in order with the turn.
TEST_F(SessionSaveFailureTest, ASessionTellsItsSinkOncePerOutage) {
  config::Script script;
  script.name = "t";
  config::ScriptStep step;
  step.text = "You said: {{input}}";
  step.chunk_size = 1000;
  script.replies.push_back({"", {step}});
  auto agent = std::make_shared<AgentConfig>();
  agent->name = "tester";
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  agent->model.provider_name = "script";
  agent->model.model_id = "t";

  const fs::path root = dir_ / "sessions";
  std::ofstream(root) << "not a folder";
  const fs::path path = root / "--ws--" / "s.jsonl";
  std::vector<std::string> seen;  // written on the worker, read after each prompt's answer
  SessionOptions o;
  o.id = "savefail";
  o.cwd = dir_ / "ws";
  o.session_file = path.string();
  o.recorder = SessionWriter::ForNew(path, Header());
  o.sink = [&seen](const Event& e) {
    if (const auto* save = std::get_if<event::Warning>(&e); save && save->source == "session-file")
      seen.push_back(save->info ? "resumed" : "failed: " + save->text);
    else if (std::holds_alternative<event::AgentEnd>(e))
      seen.push_back("agent_end");
  };
  auto created = Session::Create(agent, std::move(o));
  ASSERT_TRUE(created.ok()) << created.error().message;
  std::shared_ptr<Session> session = *created;
  auto run = [&](const std::string& text) {
    std::promise<Result<TurnResult>> p;
    auto f = p.get_future();
    Status st = session->Prompt({ContentBlock::Text(text)},
                                [&](Result<TurnResult> r) { p.set_value(std::move(r)); });
    ASSERT_TRUE(st.ok()) << st.error().message;
    auto r = f.get();
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  run("one");
  run("two");
  fs::remove(root);
  run("three");
  session->WaitIdle();
  ASSERT_EQ(seen.size(), 5u) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[0].rfind("failed: This session is not being saved: cannot create the folder " +
                              (root / "--ws--").string(),
                          0),
            0u)
      << seen[0];
  EXPECT_EQ(seen[1], "agent_end") << "told at the first prompt, before it ended";
  EXPECT_EQ(seen[2], "agent_end") << "not told again";
  EXPECT_EQ(seen[3], "resumed") << "the third prompt's message was saved, with all before it";
  EXPECT_EQ(seen[4], "agent_end");
  std::promise<void> closed;
  session->Close([&] { closed.set_value(); });
  closed.get_future().wait();
  session->WaitIdle();
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  int users = 0;
  for (const Entry& e : read->entries)
    users += e.kind == EntryKind::kMessage && e.message.role == Role::kUser;
  EXPECT_EQ(users, 3) << "every prompt is in the file";
}

}  // namespace
}  // namespace lousho::agent

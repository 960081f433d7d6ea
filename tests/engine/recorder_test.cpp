// Tests of the recorder (every entry that reaches the history reaches the file) and of the notice
// board and emitter (events in order on the worker).
#include "agent/recorder.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "agent/outbox.h"
#include "agent/turn.h"

namespace lousho::agent {
namespace {

// The session file as a list of the ids recorded, and how often it was flushed and closed.
class FileLog : public HistoryRecorder {
 public:
  void Record(const Entry& entry) override { ids.push_back(entry.id); }
  void Flush() override { ++flushes; }
  void Close() override { ++closes; }
  bool HasReports() const override { return !reports.empty(); }
  std::vector<SaveReport> TakeReports() override {
    std::vector<SaveReport> out;
    out.swap(reports);
    return out;
  }
  std::vector<std::string> ids;
  int flushes = 0;
  int closes = 0;
  std::vector<SaveReport> reports;
};

Entry Info(const std::string& name) {
  Entry e;
  e.kind = EntryKind::kSessionInfo;
  e.more.Edit().name = name;
  return e;
}

Message UserText(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.content.push_back(ContentBlock::Text(text));
  return m;
}

std::vector<std::string> HistoryIds(const Recorder& r) {
  std::vector<std::string> ids;
  r.Read([&](const History& h) {
    for (const Entry& e : h.entries()) ids.push_back(e.id);
  });
  return ids;
}

TEST(RecorderTest, EveryAppendReachesTheFileInOrder) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  const std::string a = r.Append(Info("a"));
  r.AppendMessage(UserText("hi"));
  Turn t;
  const Message& kept = RecordTurnMessage(r, t, UserText("again"));
  EXPECT_EQ(kept.TextContent(), "again");
  ASSERT_EQ(t.added.size(), 1u);
  EXPECT_GT(t.added[0].timestamp_ms, 0);
  EXPECT_EQ(HistoryIds(r), file->ids);
  ASSERT_EQ(file->ids.size(), 3u);
  EXPECT_EQ(file->ids[0], a);
  r.Flush();
  r.Close();
  EXPECT_EQ(file->flushes, 1);
  EXPECT_EQ(file->closes, 1);
}

TEST(RecorderTest, HooksSeeAppendsAndBranchesUnderTheLock) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  std::vector<std::string> named;
  size_t branch_size = 0;
  r.OnAppend([&](const Entry& e) {
    EXPECT_FALSE(mu.try_lock()) << "hooks run under the session's lock";
    if (e.kind == EntryKind::kSessionInfo) named.push_back(e.more->name);
  });
  r.OnBranch([&](const std::vector<const Entry*>& branch) { branch_size = branch.size(); });
  const std::string first = r.Append(Info("one"));
  r.Append(Info("two"));
  ASSERT_TRUE(r.BranchTo([&](const History&) -> Result<std::string> { return first; }).ok());
  EXPECT_EQ((std::vector<std::string>{"one", "two"}), named);
  // The branch: the first entry and the branch summary that records the move.
  EXPECT_EQ(branch_size, 2u);
  EXPECT_EQ(HistoryIds(r), file->ids) << "the branch summary reached the file";
}

TEST(RecorderTest, ARefusedBranchMovesNothing) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  r.Append(Info("one"));
  bool restored = false;
  r.OnBranch([&](const std::vector<const Entry*>&) { restored = true; });
  Status st = r.BranchTo([](const History&) -> Result<std::string> {
    return MakeError(ErrorCode::kSessionBusy, "no");
  });
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(restored);
  EXPECT_EQ(file->ids.size(), 1u);
  EXPECT_FALSE(
      r.BranchTo([](const History&) -> Result<std::string> { return std::string("nope"); }).ok());
  EXPECT_EQ(file->ids.size(), 1u);
}

TEST(RecorderTest, AppendMessageIfAsksUnderTheLock) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  EXPECT_FALSE(r.AppendMessageIf(UserText("no"), [] { return false; }));
  EXPECT_TRUE(file->ids.empty());
  EXPECT_TRUE(r.AppendMessageIf(UserText("yes"), [&] { return !mu.try_lock(); }));
  EXPECT_EQ(file->ids.size(), 1u);
}

TEST(RecorderTest, SeedWritesNothingAndRestoreCallsTheBranchHooks) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  Entry e = Info("stored");
  e.id = "e1";
  ASSERT_TRUE(r.Seed({e}, "", nullptr).ok());
  EXPECT_TRUE(file->ids.empty());
  std::string name;
  r.OnBranch([&](const std::vector<const Entry*>& branch) { name = branch.back()->more->name; });
  r.Restore();
  EXPECT_EQ(name, "stored");
}

TEST(RecorderTest, SavingReportsBecomeWarnings) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  file->reports.push_back(SaveReport{false, "/x", "Saving failed", "disk full"});
  std::vector<Event> seen;
  r.TellSaving([&](const Event& e) { seen.push_back(e); });
  ASSERT_EQ(seen.size(), 1u);
  const auto* w = std::get_if<event::Warning>(&seen[0]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->text, "disk full");
  seen.clear();
  r.TellSaving([&](const Event& e) { seen.push_back(e); });
  EXPECT_TRUE(seen.empty()) << "each report is told once";
}

TEST(NoticeBoardTest, OffTheWorkerANoticeIsPostedAndItsEntriesRecordedOnFlush) {
  std::mutex mu;
  auto file = std::make_shared<FileLog>();
  Recorder r(mu, file);
  NoticeBoard board(mu, r);
  std::vector<Event> seen;
  int posts = 0;
  board.Attach([] { return false; },
               [&](const std::function<void()>& task) {
                 ++posts;
                 task();
                 return Status::Ok();
               },
               [&](const Event& e) { seen.push_back(e); });
  bool done = false;
  ASSERT_TRUE(board
                  .Push([&] { done = true; },
                        [](std::vector<Entry>* entries) -> std::optional<Event> {
                          entries->push_back(Info("n"));
                          return event::SessionInfoChanged{"n"};
                        })
                  .ok());
  EXPECT_EQ(posts, 1);
  EXPECT_TRUE(file->ids.empty()) << "recorded on the worker, not by the caller";
  board.Flush();
  EXPECT_TRUE(done);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<event::SessionInfoChanged>(seen[0]));
  EXPECT_EQ(file->ids.size(), 1u);
}

TEST(NoticeBoardTest, RefusesPastTheLimitAndChangesNothing) {
  std::mutex mu;
  Recorder r(mu, nullptr);
  NoticeBoard board(mu, r);
  board.Attach([] { return true; }, [](const std::function<void()>&) { return Status::Ok(); },
               nullptr);
  size_t changes = 0;
  auto change = [&](std::vector<Entry>*) -> std::optional<Event> {
    ++changes;
    return std::nullopt;
  };
  for (size_t i = 0; i < NoticeBoard::kMaxPending; ++i)
    ASSERT_TRUE(board.Push(nullptr, change).ok());
  EXPECT_FALSE(board.Push(nullptr, change).ok());
  EXPECT_EQ(changes, NoticeBoard::kMaxPending);
  board.Flush();
  EXPECT_TRUE(board.Push(nullptr, change).ok());
}

TEST(EmitterTest, WaitingNoticesGoOutBeforeTheEvent) {
  std::mutex mu;
  Recorder r(mu, nullptr);
  NoticeBoard board(mu, r);
  std::vector<std::string> order;
  EventSink sink = [&](const Event& e) {
    if (std::holds_alternative<event::ModeChanged>(e)) order.push_back("mode");
    if (std::holds_alternative<event::TurnStart>(e)) order.push_back("turn");
    if (std::holds_alternative<event::MessageStart>(e)) order.push_back("start");
    if (std::holds_alternative<event::MessageUpdate>(e)) order.push_back("update");
    if (std::holds_alternative<event::MessageEnd>(e)) order.push_back("end");
  };
  board.Attach([] { return true; }, [](const std::function<void()>&) { return Status::Ok(); },
               sink);
  Emitter emitter(sink, board, r);
  ASSERT_TRUE(
      board.Push(nullptr, [](std::vector<Entry>*) -> Event { return event::ModeChanged{"plan"}; })
          .ok());
  emitter.Emit(event::TurnStart{1});
  emitter.Note(1, "hello");
  EXPECT_EQ((std::vector<std::string>{"mode", "turn", "start", "update", "end"}), order);
}

}  // namespace
}  // namespace lousho::agent

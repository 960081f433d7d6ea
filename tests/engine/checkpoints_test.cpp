// The checkpoint store (objects by SHA-256, the index, the cap, removal, a corrupt store), the
// git snapshot of a working tree, and the rewinder that puts files back.
#include "agent/checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "agent/git_snapshot.h"
#include "agent/recorder.h"
#include "agent/rewind.h"
#include "agent/turn_gate.h"
#include "support/sha256.h"
#include "support/subprocess.h"

namespace lousho::agent {
namespace {

namespace fs = std::filesystem;

class CheckpointDir {
 public:
  CheckpointDir() {
    std::string tmpl = (fs::temp_directory_path() / "lousho-ckpt-XXXXXX").string();
    base_ = fs::canonical(mkdtemp(tmpl.data()));
  }
  ~CheckpointDir() {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;
  const fs::path& base() const { return base_; }
  fs::path Write(const std::string& rel, const std::string& text) const {
    fs::path p = base_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(base_ / rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  fs::path base_;
};

size_t CountObjects(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "objects", ec)) n += e.is_regular_file();
  return n;
}

TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(CheckpointStoreTest, KeepsContentAndAbsenceAndReadsThemBackInANewStore) {
  CheckpointDir d;
  const fs::path file = d.Write("ws/a.txt", "one\n");
  const fs::path store_dir = CheckpointDirFor(d.base() / "s.jsonl");
  EXPECT_EQ(store_dir, d.base() / "s.checkpoints");
  {
    CheckpointStore store(store_dir);
    const std::string after = "two\n";
    ASSERT_TRUE(store.KeepBefore("e1", file, &after).ok());
    ASSERT_TRUE(store.KeepBefore("e2", d.base() / "ws/new.txt", nullptr).ok());
  }
  CheckpointStore reopened(store_dir);  // a restart
  auto records = reopened.Records();
  ASSERT_TRUE(records.ok()) << records.error().message;
  ASSERT_EQ(records->size(), 2U);
  const CheckpointRecord& kept = (*records)[0];
  EXPECT_EQ(kept.entry_id, "e1");
  EXPECT_EQ(kept.path, file.string());
  EXPECT_EQ(kept.before.kind, FileState::Kind::kStored);
  EXPECT_EQ(kept.before.id, Sha256Hex("one\n"));
  EXPECT_EQ(kept.after.kind, FileState::Kind::kStored);
  EXPECT_EQ(kept.after.id, Sha256Hex("two\n"));
  auto object = reopened.Object(kept.before.id);
  ASSERT_TRUE(object.ok());
  EXPECT_EQ(*object, "one\n");
  EXPECT_EQ((*records)[1].before.kind, FileState::Kind::kAbsent);
  EXPECT_EQ((*records)[1].after.kind, FileState::Kind::kUnknown);
}

TEST(CheckpointStoreTest, TheSameContentIsStoredOnce) {
  CheckpointDir d;
  const fs::path a = d.Write("ws/a.txt", "same\n");
  const fs::path b = d.Write("ws/b.txt", "same\n");
  const fs::path c = d.Write("ws/c.txt", "other\n");
  CheckpointStore store(d.base() / "s.checkpoints");
  ASSERT_TRUE(store.KeepBefore("e1", a, nullptr).ok());
  ASSERT_TRUE(store.KeepBefore("e2", b, nullptr).ok());
  ASSERT_TRUE(store.KeepBefore("e3", a, nullptr).ok());
  EXPECT_EQ(CountObjects(store.dir()), 1U);
  ASSERT_TRUE(store.KeepBefore("e4", c, nullptr).ok());
  EXPECT_EQ(CountObjects(store.dir()), 2U);
  EXPECT_EQ(store.Records()->size(), 4U);
}

TEST(CheckpointStoreTest, AFileOverTheCapIsRecordedAsNotKept) {
  CheckpointDir d;
  const fs::path big = d.Write("ws/big.bin", std::string(100, 'x'));
  const fs::path small = d.Write("ws/small.txt", std::string(10, 'y'));
  CheckpointStore store(d.base() / "s.checkpoints", 64);
  ASSERT_TRUE(store.KeepBefore("e1", big, nullptr).ok());
  ASSERT_TRUE(store.KeepBefore("e1", small, nullptr).ok());
  auto records = store.Records();
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[0].before.kind, FileState::Kind::kNotKept);
  EXPECT_EQ((*records)[0].before.size, 100U);
  EXPECT_NE((*records)[0].before.note.find("limit"), std::string::npos);
  EXPECT_EQ((*records)[1].before.kind, FileState::Kind::kStored);
  EXPECT_EQ(CountObjects(store.dir()), 1U);  // only the small one
}

TEST(CheckpointStoreTest, RemovingASessionsCheckpointsDeletesTheFolder) {
  CheckpointDir d;
  const fs::path session = d.base() / "s.jsonl";
  const fs::path file = d.Write("ws/a.txt", "x");
  {
    CheckpointStore store(CheckpointDirFor(session));
    ASSERT_TRUE(store.KeepBefore("e1", file, nullptr).ok());
  }
  ASSERT_TRUE(fs::exists(CheckpointDirFor(session)));
  ASSERT_TRUE(RemoveCheckpoints(session).ok());
  EXPECT_FALSE(fs::exists(CheckpointDirFor(session)));
  EXPECT_TRUE(RemoveCheckpoints(session).ok());  // nothing there: fine
  EXPECT_TRUE(fs::exists(file));
}

TEST(CheckpointStoreTest, ACorruptIndexIsAClearErrorAndNewChangesAreStillKept) {
  CheckpointDir d;
  const fs::path file = d.Write("ws/a.txt", "x");
  const fs::path dir = d.base() / "s.checkpoints";
  {
    CheckpointStore store(dir);
    ASSERT_TRUE(store.KeepBefore("e1", file, nullptr).ok());
  }
  std::ofstream(dir / "index.jsonl", std::ios::app) << "{not json\n";
  CheckpointStore store(dir);
  auto records = store.Records();
  ASSERT_FALSE(records.ok());
  EXPECT_NE(records.error().message.find("index.jsonl:2"), std::string::npos)
      << records.error().message;
  EXPECT_TRUE(store.KeepBefore("e2", file, nullptr).ok());
}

TEST(CheckpointStoreTest, ATornLastLineIsSkipped) {
  CheckpointDir d;
  const fs::path file = d.Write("ws/a.txt", "x");
  const fs::path dir = d.base() / "s.checkpoints";
  {
    CheckpointStore store(dir);
    ASSERT_TRUE(store.KeepBefore("e1", file, nullptr).ok());
  }
  std::ofstream(dir / "index.jsonl", std::ios::app) << "{\"entry\":\"e2\",\"ki";
  CheckpointStore store(dir);
  auto records = store.Records();
  ASSERT_TRUE(records.ok()) << records.error().message;
  EXPECT_EQ(records->size(), 1U);
}

TEST(CheckpointStoreTest, AnObjectWhoseContentChangedIsRefused) {
  CheckpointDir d;
  const fs::path file = d.Write("ws/a.txt", "original");
  CheckpointStore store(d.base() / "s.checkpoints");
  ASSERT_TRUE(store.KeepBefore("e1", file, nullptr).ok());
  const std::string sha = Sha256Hex("original");
  std::ofstream(store.dir() / "objects" / sha, std::ios::trunc) << "tampered";
  auto object = store.Object(sha);
  ASSERT_FALSE(object.ok());
  EXPECT_NE(object.error().message.find("corrupt"), std::string::npos);
  EXPECT_FALSE(store.Object("../../etc/passwd").ok());
}

TEST(CheckpointStoreTest, AStoreWithoutAFolderKeepsInMemory) {
  CheckpointDir d;
  const fs::path file = d.Write("ws/a.txt", "mem");
  CheckpointStore store{fs::path()};
  ASSERT_TRUE(store.KeepBefore("e1", file, nullptr).ok());
  auto object = store.Object(Sha256Hex("mem"));
  ASSERT_TRUE(object.ok());
  EXPECT_EQ(*object, "mem");
}

// --- git snapshots ---

std::string Git(const fs::path& repo, std::vector<std::string> args) {
  SubprocessOptions o;
  o.argv = {"git", "-C", repo.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.timeout_ms = 20000;
  auto r = RunSubprocess(o);
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->output : r.error().message);
  return r.ok() ? r->output : "";
}

bool HaveGit() {
  SubprocessOptions o;
  o.argv = {"git", "--version"};
  auto r = RunSubprocess(o);
  return r.ok() && r->exit_code == 0;
}

// A repository with one commit of a.txt (and .gitignore ignoring *.log).
fs::path MakeRepo(const CheckpointDir& d) {
  fs::path repo = d.base() / "repo";
  fs::create_directories(repo);
  Git(repo, {"init", "-q"});
  Git(repo, {"config", "user.email", "t@example.com"});
  Git(repo, {"config", "user.name", "t"});
  d.Write("repo/a.txt", "a1\n");
  d.Write("repo/.gitignore", "*.log\n");
  Git(repo, {"add", "-A"});
  Git(repo, {"commit", "-q", "-m", "init"});
  return repo;
}

TEST(GitSnapshotTest, TreesAroundAChangeNameWhatChangedAndLeaveTheIndexAndRefsAlone) {
  if (!HaveGit()) GTEST_SKIP() << "no git";
  CheckpointDir d;
  const fs::path repo = MakeRepo(d);
  d.Write("repo/staged.txt", "s\n");
  Git(repo, {"add", "staged.txt"});
  const std::string status_before = Git(repo, {"status", "--porcelain"});
  const std::string refs_before = Git(repo, {"show-ref"});
  EXPECT_EQ(GitTopLevel(repo / ".."), std::nullopt);
  fs::create_directories(repo / "sub");
  ASSERT_EQ(GitTopLevel(repo / "sub"), repo.string());
  auto before = GitSnapshotTree(repo.string());
  ASSERT_TRUE(before.ok()) << before.error().message;
  d.Write("repo/a.txt", "a2\n");
  d.Write("repo/new.txt", "n\n");
  d.Write("repo/x.log", "ignored\n");
  fs::remove(repo / "staged.txt");
  auto after = GitSnapshotTree(repo.string());
  ASSERT_TRUE(after.ok()) << after.error().message;
  auto changes = GitTreeChanges(repo.string(), *before, *after);
  ASSERT_TRUE(changes.ok()) << changes.error().message;
  std::map<std::string, GitChange> by_path;
  for (auto& c : *changes) by_path[c.path] = c;
  ASSERT_EQ(by_path.size(), 3U);
  EXPECT_EQ(by_path["new.txt"].before.kind, FileState::Kind::kAbsent);
  EXPECT_EQ(by_path["staged.txt"].after.kind, FileState::Kind::kAbsent);
  const FileState& a_before = by_path["a.txt"].before;
  ASSERT_EQ(a_before.kind, FileState::Kind::kGitBlob);
  auto text = GitReadBlob(repo.string(), a_before.id, "a.txt", 1 << 20);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "a1\n");
  auto now = GitHashFile(repo.string(), "a.txt");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, by_path["a.txt"].after.id);
  // The user's staging and refs are as they were (only the files changed).
  d.Write("repo/a.txt", "a1\n");
  d.Write("repo/staged.txt", "s\n");
  fs::remove(repo / "new.txt");
  EXPECT_EQ(Git(repo, {"status", "--porcelain"}), status_before);
  EXPECT_EQ(Git(repo, {"show-ref"}), refs_before);
  EXPECT_EQ(Git(repo, {"stash", "list"}), "");
}

// --- the rewinder ---

// Answers the question of a changed file as told, and counts the questions.
class ScriptedDialogs : public Dialogs {
 public:
  explicit ScriptedDialogs(std::optional<bool> answer) : answer_(answer) {}
  Result<std::optional<std::string>> Select(const std::string&, const std::string&,
                                            const std::vector<std::string>&,
                                            const CancelToken&) override {
    return std::optional<std::string>();
  }
  Result<std::optional<bool>> Confirm(const std::string&, const std::string&,
                                      const std::string& message, const CancelToken&) override {
    ++asked;
    last_message = message;
    return answer_;
  }
  Result<std::optional<std::string>> Input(const std::string&, const std::string&,
                                           const std::string&, const CancelToken&) override {
    return std::optional<std::string>();
  }
  Result<std::optional<std::string>> Editor(const std::string&, const std::string&,
                                            const std::string&, const CancelToken&) override {
    return std::optional<std::string>();
  }
  void SetEditorText(const std::string&, const std::string& text) override { editor = text; }
  int asked = 0;
  std::string last_message;
  std::string editor;

 private:
  std::optional<bool> answer_;
};

// A history of prompts, each followed by an assistant message that changes files; the store
// keeps what each change replaced, as the tool runner does.
class RewindFixture {
 public:
  explicit RewindFixture(Dialogs* dialogs)
      : store_(d_.base() / "s.checkpoints"),
        recorder_(mu_, nullptr),
        gate_(mu_),
        rewinder_(recorder_, gate_, &store_, ClientServices{nullptr, nullptr, nullptr, dialogs},
                  "s1") {}
  // A user message; returns its entry id.
  std::string User(const std::string& text) {
    Message m;
    m.role = Role::kUser;
    m.content.push_back(ContentBlock::Text(text));
    recorder_.AppendMessage(std::move(m));
    return Leaf();
  }
  // An assistant message that writes `files` (path → content) through the store.
  std::string WriteFiles(const std::map<std::string, std::string>& files) {
    Message m;
    m.role = Role::kAssistant;
    m.content.push_back(ContentBlock::Text("ok"));
    recorder_.AppendMessage(std::move(m));
    std::string entry = Leaf();
    for (const auto& [rel, text] : files) {
      EXPECT_TRUE(store_.KeepBefore(entry, d_.base() / rel, &text).ok());
      d_.Write(rel, text);
    }
    return entry;
  }
  std::string Leaf() const {
    std::string leaf;
    recorder_.Read([&](const History& h) { leaf = h.leaf(); });
    return leaf;
  }
  std::string ParentOf(const std::string& id) const {
    std::string parent;
    recorder_.Read([&](const History& h) { parent = h.Find(id)->parent_id; });
    return parent;
  }
  Result<RewindOutcome> Rewind(const std::string& id) {
    RewindRequest r;
    r.entry_id = id;
    r.prefill_editor = true;
    return rewinder_.Rewind(r);
  }
  CheckpointDir& dir() { return d_; }
  CheckpointStore& store() { return store_; }
  TurnGate& gate() { return gate_; }

 private:
  CheckpointDir d_;
  CheckpointStore store_;
  std::mutex mu_;
  Recorder recorder_;
  TurnGate gate_;
  Rewinder rewinder_;
};

TEST(RewinderTest, PutsBackEveryFileChangedAfterTheMessageAndMovesTheHistory) {
  ScriptedDialogs dialogs(true);
  RewindFixture f(&dialogs);
  f.dir().Write("a.txt", "a0");
  const std::string first = f.User("first");
  f.WriteFiles({{"a.txt", "a1"}});
  const std::string second = f.User("second prompt");
  f.WriteFiles({{"a.txt", "a2"}, {"b.txt", "b2"}});
  f.WriteFiles({{"a.txt", "a3"}, {"sub/c.txt", "c3"}});
  auto out = f.Rewind(second);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(f.dir().Read("a.txt"), "a1");
  EXPECT_FALSE(fs::exists(f.dir().base() / "b.txt"));
  EXPECT_FALSE(fs::exists(f.dir().base() / "sub/c.txt"));
  EXPECT_EQ(out->restored.size(), 3U);
  EXPECT_EQ(out->text, "second prompt");
  EXPECT_EQ(dialogs.editor, "second prompt");
  EXPECT_EQ(dialogs.asked, 0);
  // The leaf hangs off the message's parent (a branch summary recording the move).
  std::string leaf_parent = f.ParentOf(f.Leaf());
  EXPECT_EQ(leaf_parent, f.ParentOf(second));
  EXPECT_NE(DescribeRewind(*out).find("Restored 3 files"), std::string::npos);
  (void)first;
}

TEST(RewinderTest, AFileChangedOutsideTheAgentIsOverwrittenOnlyWhenTheUserSaysSo) {
  for (bool yes : {false, true}) {
    ScriptedDialogs dialogs(yes);
    RewindFixture f(&dialogs);
    f.dir().Write("a.txt", "a0");
    f.dir().Write("b.txt", "b0");
    const std::string msg = f.User("change them");
    f.WriteFiles({{"a.txt", "a1"}, {"b.txt", "b1"}});
    f.dir().Write("a.txt", "the user's own edit");
    auto out = f.Rewind(msg);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(dialogs.asked, 1);
    EXPECT_NE(dialogs.last_message.find("a.txt"), std::string::npos);
    EXPECT_EQ(dialogs.last_message.find("b.txt"), std::string::npos);
    EXPECT_EQ(f.dir().Read("b.txt"), "b0");
    EXPECT_EQ(f.dir().Read("a.txt"), yes ? "a0" : "the user's own edit");
    EXPECT_EQ(out->kept.size(), yes ? 0U : 1U);
  }
}

TEST(RewinderTest, ADismissedQuestionChangesNothing) {
  ScriptedDialogs dialogs(std::nullopt);
  RewindFixture f(&dialogs);
  f.dir().Write("a.txt", "a0");
  const std::string msg = f.User("change it");
  f.WriteFiles({{"a.txt", "a1"}});
  f.dir().Write("a.txt", "mine");
  const std::string leaf = f.Leaf();
  auto out = f.Rewind(msg);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(f.Leaf(), leaf);
  EXPECT_EQ(f.dir().Read("a.txt"), "mine");
}

TEST(RewinderTest, RefusesWhatIsNoUserMessageARunningPromptAndACorruptStore) {
  RewindFixture f(nullptr);
  const std::string msg = f.User("hello");
  const std::string reply = f.WriteFiles({{"a.txt", "a1"}});
  EXPECT_FALSE(f.Rewind(reply).ok());
  EXPECT_FALSE(f.Rewind("nope").ok());
  auto claimed = f.gate().Begin();
  ASSERT_TRUE(claimed.ok());
  auto busy = f.Rewind(msg);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kSessionBusy);
  f.gate().End();
}

TEST(RewinderTest, ACorruptStoreStopsTheRewindWithAClearErrorAndMovesNothing) {
  RewindFixture f(nullptr);
  const std::string msg = f.User("hello");
  fs::create_directories(f.store().dir());
  std::ofstream(f.store().dir() / "index.jsonl") << "]\n";
  const std::string leaf = f.Leaf();
  auto out = f.Rewind(msg);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("corrupt"), std::string::npos) << out.error().message;
  EXPECT_EQ(f.Leaf(), leaf);
}

TEST(RewinderTest, ANotKeptFileIsNamedAndTheOthersAreRestored) {
  RewindFixture f(nullptr);
  f.dir().Write("a.txt", "a0");
  const std::string msg = f.User("go");
  const std::string entry = f.WriteFiles({{"a.txt", "a1"}});
  // A hook changed a FIFO-like special file the store could not keep.
  ASSERT_TRUE(f.store().KeepBefore(entry, f.dir().base(), nullptr).ok());  // a folder
  auto out = f.Rewind(msg);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(f.dir().Read("a.txt"), "a0");
  ASSERT_EQ(out->notes.size(), 1U);
  EXPECT_NE(out->notes[0].find("not kept"), std::string::npos) << out->notes[0];
}

}  // namespace
}  // namespace lousho::agent

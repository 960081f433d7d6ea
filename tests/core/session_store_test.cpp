// Tests of session files (round trip of every entry kind, torn-line recovery, the lock, the
// store's layout and list) and of the engine operations built on them (recording, loading,
// branching, names, stats, todo phases, HTML export).
#include "agent/session_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>

#include "agent/builtin_commands.h"
#include "agent/html_export.h"
#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "host/session_host.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {
using host::CreateRecordedSession;
using host::OpenSessionFile;
namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-store-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ws");
  }
  void TearDown() override { fs::remove_all(dir_); }

  SessionHeader Header(const std::string& id) const {
    SessionHeader h;
    h.id = id;
    h.timestamp_ms = 1764567890123;
    h.cwd = (dir_ / "ws").string();
    h.agent = "tester";
    return h;
  }

  fs::path dir_;
};

Entry MessageEntry(Role role, const std::string& text) {
  Entry e;
  e.kind = EntryKind::kMessage;
  e.message.role = role;
  e.message.content.push_back(ContentBlock::Text(text));
  return e;
}

// One entry of every kind, each field set to something other than its default.
std::vector<Entry> EveryKind() {
  std::vector<Entry> v;
  Entry user = MessageEntry(Role::kUser, "read notes.txt \"please\"\n");
  user.message.content.push_back(ContentBlock::Image("image/png", "iVBORw0KGgo="));
  v.push_back(user);
  Entry assistant = MessageEntry(Role::kAssistant, "Reading it.");
  assistant.message.content.insert(assistant.message.content.begin(),
                                   ContentBlock::Thinking("The user wants it.", "sig-1"));
  Json::Value args(Json::objectValue);
  args["path"] = "notes.txt";
  assistant.message.content.push_back(ContentBlock::ToolCall("call_1", "read", args));
  assistant.message.stop_reason = StopReason::kToolUse;
  assistant.message.assistant.Edit().usage = Usage{100, 20, 5, 3, 0.25};
  assistant.message.assistant.Edit().provider = "openai";
  assistant.message.assistant.Edit().model = "gpt-4o-mini";
  v.push_back(assistant);
  Entry result = MessageEntry(Role::kToolResult, "alpha\nbeta\n");
  result.message.tool_call_id = "call_1";
  result.message.tool_name = "read";
  result.message.tool.Edit().title = "Read notes.txt";
  result.message.tool.Edit().kind = ToolKind::kRead;
  result.message.tool.Edit().args = args;
  result.message.tool.Edit().locations.push_back({"/ws/notes.txt", 1});
  result.message.tool.Edit().diffs.push_back({"/ws/notes.txt", std::string("a\n"), "b\n"});
  result.message.tool.Edit().details["totalLines"] = 2;
  v.push_back(result);
  Entry custom_msg = MessageEntry(Role::kUser, "<system-interrupt>stop</system-interrupt>");
  custom_msg.message.custom_type = "ttsr-injection";
  custom_msg.message.display = false;
  v.push_back(custom_msg);
  Entry model;
  model.kind = EntryKind::kModelChange;
  model.more.Edit().provider = "anthropic";
  model.more.Edit().model_id = "claude-sonnet-4-5";
  v.push_back(model);
  Entry thinking;
  thinking.kind = EntryKind::kThinkingChange;
  thinking.more.Edit().thinking_level = "high";
  v.push_back(thinking);
  Entry mode;
  mode.kind = EntryKind::kModeChange;
  mode.more.Edit().mode = "plan";
  v.push_back(mode);
  Entry custom;
  custom.kind = EntryKind::kCustom;
  custom.more.Edit().custom_type = "lousho.todo_phases";
  custom.more.Edit().data["x"] = 1;
  v.push_back(custom);
  Entry label;
  label.kind = EntryKind::kLabel;
  label.more.Edit().target_id = "00000001";
  label.more.Edit().label = "checkpoint";
  v.push_back(label);
  Entry compaction;
  compaction.kind = EntryKind::kCompaction;
  compaction.more.Edit().summary = "Earlier: read notes.";
  compaction.more.Edit().first_kept_id = "00000002";
  compaction.more.Edit().tokens_before = 12345;
  compaction.more.Edit().data["files"] = "notes.txt";
  v.push_back(compaction);
  Entry branch;
  branch.kind = EntryKind::kBranchSummary;
  branch.more.Edit().from_id = "00000003";
  branch.more.Edit().summary = "Tried another way.";
  v.push_back(branch);
  Entry info;
  info.kind = EntryKind::kSessionInfo;
  info.more.Edit().name = "Notes — ünïcode";
  v.push_back(info);
  Entry ttsr;
  ttsr.kind = EntryKind::kTtsrInjection;
  ttsr.more.Edit().rules = {"no-forbidden", "be-brief"};
  v.push_back(ttsr);
  // Ids, parents and timestamps as a history assigns them: a chain.
  for (size_t i = 0; i < v.size(); ++i) {
    char id[24];
    std::snprintf(id, sizeof id, "%08zx", i + 1);
    v[i].id = id;
    v[i].parent_id = i == 0 ? "" : v[i - 1].id;
    v[i].timestamp_ms = 1764567890000 + static_cast<long long>(i);
    if (v[i].kind == EntryKind::kMessage) v[i].message.timestamp_ms = v[i].timestamp_ms;
  }
  return v;
}

TEST_F(SessionStoreTest, EveryEntryKindRoundTripsThroughAFile) {
  const fs::path path = dir_ / "s.jsonl";
  auto writer = SessionWriter::ForNew(path, Header("abc"));
  const auto entries = EveryKind();
  for (const Entry& e : entries) writer->Record(e);
  writer->Flush();
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_TRUE(read->warnings.empty());
  EXPECT_EQ(read->header.id, "abc");
  EXPECT_EQ(read->header.cwd, (dir_ / "ws").string());
  EXPECT_EQ(read->header.agent, "tester");
  EXPECT_EQ(read->header.timestamp_ms, 1764567890123);
  EXPECT_EQ(read->header.version, kSessionFormatVersion);
  ASSERT_EQ(read->entries.size(), entries.size());
  std::set<EntryKind> kinds;
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(EntryToJson(read->entries[i]), EntryToJson(entries[i])) << "entry " << i;
    kinds.insert(read->entries[i].kind);
  }
  EXPECT_EQ(kinds.size(), 10u) << "every kind of entry is covered";
  // One line per entry plus the header, each a whole JSON object.
  const std::string text = Slurp(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(entries.size() + 1));
}

TEST_F(SessionStoreTest, NothingIsWrittenBeforeTheFirstMessage) {
  const fs::path path = dir_ / "deep" / "er" / "s.jsonl";
  auto writer = SessionWriter::ForNew(path, Header("lazy"));
  Entry mode;
  mode.kind = EntryKind::kModeChange;
  mode.more.Edit().mode = "plan";
  mode.id = "00000001";
  writer->Record(mode);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(writer->created());
  Entry user = MessageEntry(Role::kUser, "hi");
  user.id = "00000002";
  user.parent_id = "00000001";
  writer->Record(user);
  EXPECT_TRUE(writer->created());
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->entries.size(), 2u);
  EXPECT_EQ(read->entries[0].kind, EntryKind::kModeChange);
  EXPECT_EQ((fs::status(path).permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SessionStoreTest, ATornLastLineIsSkippedAndCutBeforeTheNextAppend) {
  const fs::path path = dir_ / "s.jsonl";
  {
    auto writer = SessionWriter::ForNew(path, Header("torn"));
    auto entries = EveryKind();
    writer->Record(entries[0]);
    writer->Record(entries[1]);
  }
  const std::string whole = Slurp(path);
  // A crash in the middle of the third line.
  std::ofstream(path, std::ios::app) << R"({"type":"message","id":"0000000)";
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->entries.size(), 2u);
  ASSERT_EQ(read->warnings.size(), 1u);
  EXPECT_NE(read->warnings[0].find("s.jsonl:4: skipped a torn last line"), std::string::npos)
      << read->warnings[0];
  EXPECT_EQ(read->valid_bytes, whole.size());

  auto opened = SessionWriter::OpenExisting(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ(Slurp(path), whole) << "the torn tail is cut, nothing before it";
  Entry next = MessageEntry(Role::kUser, "again");
  next.id = "00000009";
  next.parent_id = opened->second.entries.back().id;
  opened->first->Record(next);
  opened->first->Close();
  auto reread = ReadSessionFile(path);
  ASSERT_TRUE(reread.ok()) << reread.error().message;
  EXPECT_TRUE(reread->warnings.empty());
  ASSERT_EQ(reread->entries.size(), 3u);
  EXPECT_EQ(reread->entries[2].message.TextContent(), "again");
}

// A crash can leave a file longer than what reached the disk, the rest zeros (NUL): they are
// reported as zeros, not as a torn line, and cut before the next append.
TEST_F(SessionStoreTest, AZeroFilledTailIsReportedAsZerosAndCut) {
  const fs::path path = dir_ / "s.jsonl";
  {
    auto writer = SessionWriter::ForNew(path, Header("zeros"));
    auto entries = EveryKind();
    writer->Record(entries[0]);
    writer->Record(entries[1]);
  }
  const std::string whole = Slurp(path);
  fs::resize_file(path, whole.size() + (1u << 20));  // sparse: the file system's zeros
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->entries.size(), 2u);
  ASSERT_EQ(read->warnings.size(), 1u);
  EXPECT_EQ(read->warnings[0], path.string() +
                                   ": skipped 1 MiB of zero bytes (NUL) at its end, after byte " +
                                   std::to_string(whole.size()) +
                                   ": a crash left the file longer than what was written; they "
                                   "hold nothing of the session");
  EXPECT_EQ(read->valid_bytes, whole.size());

  // A torn line before the zeros is reported too, as what it is.
  std::string torn = whole + R"({"type":"message","id":"0000000)";
  torn.append(4096, '\0');
  std::ofstream(path, std::ios::binary | std::ios::trunc) << torn;
  read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->warnings.size(), 2u);
  EXPECT_NE(read->warnings[0].find("skipped 4 KiB of zero bytes (NUL)"), std::string::npos)
      << read->warnings[0];
  EXPECT_NE(read->warnings[1].find("s.jsonl:4: skipped a torn last line (31 bytes)"),
            std::string::npos)
      << read->warnings[1];

  auto opened = SessionWriter::OpenExisting(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ(Slurp(path), whole) << "the zeros and the torn line are cut, nothing before them";
  Entry next = MessageEntry(Role::kUser, "again");
  next.id = "00000009";
  next.parent_id = opened->second.entries.back().id;
  opened->first->Record(next);
  opened->first->Close();
  auto reread = ReadSessionFile(path);
  ASSERT_TRUE(reread.ok()) << reread.error().message;
  EXPECT_TRUE(reread->warnings.empty());
  ASSERT_EQ(reread->entries.size(), 3u);
}

// A file over kMaxSessionFileBytes is refused before it is read, and left as it is.
TEST_F(SessionStoreTest, AFileOverTheSizeLimitIsRefusedAndLeftAsItIs) {
  const fs::path path = dir_ / "big.jsonl";
  {
    auto writer = SessionWriter::ForNew(path, Header("big"));
    writer->Record(EveryKind()[0]);
  }
  const std::string head = Slurp(path);
  fs::resize_file(path, kMaxSessionFileBytes + 1);  // sparse
  auto read = ReadSessionFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kSessionFile);
  EXPECT_EQ(read.error().message, "session file " + path.string() +
                                      " is 512.0 MiB (536870913 bytes), more than the 512 MiB "
                                      "limit of a session "
                                      "file that lousho reads back; it is left as it is: start "
                                      "a new session");
  auto opened = SessionWriter::OpenExisting(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kSessionFile);
  EXPECT_EQ(fs::file_size(path), kMaxSessionFileBytes + 1);
  std::ifstream in(path, std::ios::binary);
  std::string start(head.size(), ' ');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  EXPECT_EQ(start, head);
}

// A line over the line limit (here zeros, then more lines; kMaxSessionLineBytes in a file, a
// small one here) is refused with its number.
TEST_F(SessionStoreTest, ALineOverTheLineLimitIsRefusedWithItsNumber) {
  const fs::path path = dir_ / "s.jsonl";
  {
    auto writer = SessionWriter::ForNew(path, Header("long"));
    writer->Record(EveryKind()[0]);
  }
  const std::string head = Slurp(path);
  const std::string entry = head.substr(head.find('\n') + 1);
  auto fits = ParseSessionText(head + std::string(4096, 'x') + "\n" + entry, "s.jsonl", 4096);
  ASSERT_FALSE(fits.ok());
  EXPECT_EQ(fits.error().message.rfind("s.jsonl:3: ", 0), 0u) << "a malformed line, not a long one";
  EXPECT_EQ(fits.error().message.find("a line of"), std::string::npos) << fits.error().message;
  auto read = ParseSessionText(head + std::string(4097, '\0') + "\n" + entry, "s.jsonl", 4096);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kSessionFile);
  EXPECT_EQ(read.error().message.rfind("s.jsonl:3: a line of 4.0 KiB (4097 bytes), more than the "
                                       "4 KiB a session file line may hold",
                                       0),
            0u)
      << read.error().message;
  // A last line too: it is no torn line lousho could have written.
  read = ParseSessionText(head + std::string(4097, 'x'), "s.jsonl", 4096);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("s.jsonl:3: a line of", 0), 0u) << read.error().message;
}

TEST_F(SessionStoreTest, AMalformedLineBeforeTheLastFailsWithItsLine) {
  const fs::path path = dir_ / "s.jsonl";
  {
    auto writer = SessionWriter::ForNew(path, Header("bad"));
    writer->Record(EveryKind()[0]);
  }
  std::string text = Slurp(path);
  std::ofstream(path) << text << "{not json\n" << text.substr(text.find('\n') + 1);
  auto read = ReadSessionFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kSessionFile);
  EXPECT_NE(read.error().message.find("s.jsonl:3:"), std::string::npos) << read.error().message;
}

TEST_F(SessionStoreTest, ANewerFormatVersionIsRefusedAndOlderOnesLoad) {
  const fs::path path = dir_ / "s.jsonl";
  std::ofstream(path) << R"({"type":"session","version":)" << kSessionFormatVersion + 1
                      << R"(,"id":"x","cwd":"/"})"
                      << "\n";
  auto read = ReadSessionFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(
      read.error().message.find("format version " + std::to_string(kSessionFormatVersion + 1)),
      std::string::npos)
      << read.error().message;
  // Version 1, the first format, with a minimal entry as it was first written.
  std::ofstream(path)
      << R"({"type":"session","version":1,"id":"x","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"})"
      << "\n"
      << R"({"type":"message","id":"00000001","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}})"
      << "\n";
  read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->entries.size(), 1u);
  EXPECT_EQ(read->entries[0].message.TextContent(), "hi");
}

TEST_F(SessionStoreTest, ASecondOpenerIsRefusedAndTheFirstKeepsWriting) {
  const fs::path path = dir_ / "s.jsonl";
  auto writer = SessionWriter::ForNew(path, Header("locked"));
  auto entries = EveryKind();
  writer->Record(entries[0]);
  const std::string before = Slurp(path);

  auto second = SessionWriter::OpenExisting(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kSessionLocked);
  EXPECT_NE(second.error().message.find(path.string()), std::string::npos)
      << "the error names the file: " << second.error().message;
  EXPECT_EQ(Slurp(path), before) << "the refused opener changed nothing";

  writer->Record(entries[1]);
  auto read = ReadSessionFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->entries.size(), 2u);

  writer->Close();  // the lock goes with it
  auto third = SessionWriter::OpenExisting(path);
  ASSERT_TRUE(third.ok()) << third.error().message;
  EXPECT_EQ(third->second.entries.size(), 2u);
}

TEST_F(SessionStoreTest, TheStoreLaysOutFindsAndListsSessions) {
  SessionStore store(dir_ / "sessions");
  EXPECT_EQ(store.DirFor("/home/me/my proj:x"), dir_ / "sessions" / "--home-me-my proj-x--");
  SessionHeader a = Header("aaa");
  const fs::path pa = store.PathFor(a);
  EXPECT_EQ(pa.filename(), "2025-12-01T05-44-50-123Z_aaa.jsonl");
  SessionHeader b = Header("bbb");
  b.timestamp_ms += 1000;
  SessionHeader other = Header("ccc");
  other.cwd = "/elsewhere";
  for (const auto& h : {a, b, other}) {
    auto w = SessionWriter::ForNew(store.PathFor(h), h);
    w->Record(MessageEntry(Role::kUser, "hello " + h.id));
    if (h.id == "aaa") {
      Entry name;
      name.kind = EntryKind::kSessionInfo;
      name.more.Edit().name = "first name";
      w->Record(name);
      name.more.Edit().name = "renamed";
      w->Record(name);
    }
  }
  // "aaa" was written last... make "bbb" the most recently updated.
  fs::last_write_time(store.PathFor(b), fs::file_time_type::clock::now() + std::chrono::hours(1));

  auto found = store.Find("aaa", a.cwd);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, pa);
  auto elsewhere = store.Find("ccc", a.cwd);  // not in cwd's folder: every folder is searched
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_EQ(store.Find("zzz", a.cwd).error().code, ErrorCode::kSessionNotFound);
  EXPECT_FALSE(store.Find("../x", a.cwd).ok());

  auto list = store.List(a.cwd);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "bbb");
  EXPECT_EQ(list[1].id, "aaa");
  EXPECT_EQ(list[1].title, "renamed");
  EXPECT_EQ(list[0].title, "");
  EXPECT_GE(list[0].updated_ms, list[1].updated_ms);
  EXPECT_EQ(store.List("").size(), 3u);
}

TEST_F(SessionStoreTest, DefaultRootFollowsLoushoHomeThenHome) {
  auto env = [](const std::map<std::string, std::string>& vars) {
    return [vars](const std::string& k) -> std::optional<std::string> {
      auto it = vars.find(k);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  };
  EXPECT_EQ(SessionStore::DefaultRoot(env({{"LOUSHO_HOME", "/l"}, {"HOME", "/h"}})),
            fs::path("/l/sessions"));
  EXPECT_EQ(SessionStore::DefaultRoot(env({{"HOME", "/h"}})), fs::path("/h/.lousho/sessions"));
  EXPECT_EQ(SessionStore::DefaultRoot(env({})), std::nullopt);
}

TEST(PromptGistTest, FirstLineCollapsedAndCutAtAWord) {
  EXPECT_EQ(PromptGist("  fix   the\tbug  \nmore text"), "fix the bug");
  const std::string longer(30, 'a');
  const std::string gist = PromptGist(longer + " " + longer + " " + longer);
  EXPECT_EQ(gist, longer + "\u2026");
  EXPECT_EQ(PromptGist(std::string(70, 'x')), std::string(60, 'x') + "\u2026");
  // Characters, not bytes: 70 two-byte letters are cut after 60 of them.
  std::string umlauts;
  for (int i = 0; i < 70; ++i) umlauts += "\xc3\xbc";
  EXPECT_EQ(PromptGist(umlauts).size(), 60u * 2 + 3);
}

// --- the engine with a session file ---

config::ScriptStep Step(std::string text, std::vector<config::ScriptToolCall> calls = {}) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.tool_calls = std::move(calls);
  s.chunk_size = 1000;
  return s;
}

class RecordedSessionTest : public SessionStoreTest {
 protected:
  void SetUp() override {
    SessionStoreTest::SetUp();
    std::ofstream(dir_ / "ws" / "notes.txt") << "alpha <b>&\n";
    config::Script script;
    script.name = "t";
    config::ScriptToolCall read;
    read.name = "read";
    read.arguments["path"] = "notes.txt";
    script.replies.push_back({"^read", {Step("", {read}), Step("Read it.")}});
    script.replies.push_back({"", {Step("You said: {{input}}")}});
    auto agent = std::make_shared<AgentConfig>();
    agent->name = "tester";
    agent->model.provider = std::make_shared<ScriptProvider>(script);
    agent->model.provider_name = "script";
    agent->model.model_id = "t";
    agent->tools.push_back(MakeBuiltinTool("read"));
    agent_ = agent;
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    SessionStoreTest::TearDown();
  }

  // A session recorded to path_ (new) or continuing it (load).
  void Open(bool load) {
    if (session_) {
      std::promise<void> closed;
      session_->Close([&] { closed.set_value(); });
      closed.get_future().wait();
      session_->WaitIdle();
      session_.reset();
    }
    SessionOptions o;
    o.id = "rec";
    o.cwd = dir_ / "ws";
    o.session_file = path_.string();
    o.sink = [this](const Event& e) {
      if (const auto* info = std::get_if<event::SessionInfoChanged>(&e))
        names_.push_back(info->name);
    };
    if (load) {
      auto opened = SessionWriter::OpenExisting(path_);
      ASSERT_TRUE(opened.ok()) << opened.error().message;
      o.recorder = opened->first;
      o.seed = std::move(opened->second.entries);
    } else {
      o.recorder = SessionWriter::ForNew(path_, Header("rec"));
    }
    auto s = Session::Create(agent_, std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message;
    session_ = *s;
  }
  Result<TurnResult> Run(const std::string& text) {
    std::promise<Result<TurnResult>> p;
    auto f = p.get_future();
    Status st = session_->Prompt({ContentBlock::Text(text)},
                                 [&](Result<TurnResult> r) { p.set_value(std::move(r)); });
    if (!st.ok()) return st.error();
    return f.get();
  }

  std::shared_ptr<const AgentConfig> agent_;
  std::shared_ptr<Session> session_;
  fs::path path_ = fs::temp_directory_path() / "unused";
  std::vector<std::string> names_;  // written on the worker, read after WaitIdle
};

TEST_F(RecordedSessionTest, ALoadedSessionContinuesWithTheSameHistory) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("read the notes").ok());
  ASSERT_TRUE(session_->selection().SetMode(PermissionMode::kPlan).ok());
  session_->todos().Set(
      {{"p1", "Phase 1", {{"t1", "look", "completed", ""}, {"t2", "fix", "blocked", "no key"}}}});
  ASSERT_TRUE(Run("second").ok());
  session_->WaitIdle();
  const std::vector<Message> before = session_->transcript().Messages();
  const std::vector<Entry> entries_before = session_->transcript().Entries();
  ASSERT_EQ(before.size(), 6u);  // user, call, result, answer, user, answer

  Open(true);
  EXPECT_EQ(session_->transcript().Messages().size(), before.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(MessageToJson(session_->transcript().Messages()[i]), MessageToJson(before[i])) << i;
  EXPECT_EQ(session_->transcript().Entries().size(), entries_before.size());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kPlan) << "the mode comes back";
  EXPECT_EQ(session_->branches().Name(), "read the notes") << "the first prompt's gist";
  auto phases = session_->todos().phases();
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].tasks[1].blocker, "no key");

  // It goes on where it stopped: the model sees the earlier history.
  auto r = Run("third");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(session_->transcript().LastAssistantText(), "You said: third");
  EXPECT_EQ(session_->transcript().Messages().size(), 8u);
  session_->WaitIdle();
  Open(true);
  EXPECT_EQ(session_->transcript().Messages().size(), 8u) << "the third turn was recorded too";
}

TEST_F(RecordedSessionTest, BranchingMovesTheLeafAndTheNextTurnHangsThere) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("first").ok());
  ASSERT_TRUE(Run("second").ok());
  auto points = session_->branches().UserMessages();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].text, "second");
  auto text = session_->branches().BranchFrom(points[1].entry_id);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "second");
  EXPECT_EQ(session_->transcript().Messages().size(), 2u);
  EXPECT_FALSE(session_->branches().BranchFrom("nope").ok());
  ASSERT_TRUE(Run("other second").ok());
  EXPECT_EQ(session_->transcript().LastAssistantText(), "You said: other second");
  const size_t all = session_->transcript().Entries().size();
  session_->WaitIdle();

  // Switching to the file again: the leaf is the last entry written, on the new branch; the
  // abandoned branch is still in the tree.
  Open(true);
  EXPECT_EQ(session_->transcript().Entries().size(), all);
  ASSERT_EQ(session_->branches().UserMessages().size(), 2u);
  EXPECT_EQ(session_->branches().UserMessages()[1].text, "other second");
  ASSERT_TRUE(session_->branches().SetLeaf(points[1].entry_id).ok());
  EXPECT_EQ(session_->branches().UserMessages()[1].text, "second");
  EXPECT_FALSE(session_->branches().SetLeaf("nope").ok());
}

TEST_F(RecordedSessionTest, NamesStatsAndTheBuiltinCommands) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("read the notes").ok());
  ASSERT_TRUE(Run("/name  My <session>  ").ok());
  EXPECT_EQ(session_->branches().Name(), "My <session>");
  EXPECT_EQ(session_->branches().SetName("  ").error().message, "Session name cannot be empty");
  EXPECT_EQ(session_->transcript().Messages().size(), 4u)
      << "a built-in command never enters the history";

  SessionStats st = session_->transcript().Stats();
  EXPECT_EQ(st.id, "rec");
  EXPECT_EQ(st.file, path_.string());
  EXPECT_EQ(st.user_messages, 1);
  EXPECT_EQ(st.assistant_messages, 2);
  EXPECT_EQ(st.tool_calls, 1);
  EXPECT_EQ(st.tool_results, 1);
  EXPECT_EQ(st.total_messages, 4);
  EXPECT_GT(st.tokens.total(), 0);

  ASSERT_TRUE(Run("/export out/page.html").ok());
  const std::string html = Slurp(dir_ / "ws" / "out" / "page.html");
  EXPECT_NE(html.find("<title>My &lt;session&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("Read notes.txt"), std::string::npos) << "the tool call's title";
  EXPECT_NE(html.find("alpha &lt;b&gt;&amp;"), std::string::npos) << "its result, escaped";
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos) << "no external asset";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  session_->WaitIdle();
  EXPECT_EQ(names_, (std::vector<std::string>{"read the notes", "My <session>"}));
  for (const char* name : {"name", "export"}) EXPECT_NE(FindBuiltinCommand(name), nullptr);

  Open(true);
  EXPECT_EQ(session_->branches().Name(), "My <session>");
  auto list = SessionStore(dir_).List("");
  EXPECT_TRUE(list.empty()) << "the file is not in a store layout";
  auto summary = SummarizeSessionFile(path_);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->title, "My <session>");
}

TEST(HtmlExportTest, DiffsShowRemovedAndAddedLines) {
  Entry call;
  call.kind = EntryKind::kMessage;
  call.message.role = Role::kAssistant;
  Json::Value args(Json::objectValue);
  args["path"] = "a.txt";
  call.message.content.push_back(ContentBlock::ToolCall("c1", "edit", args));
  Entry result;
  result.kind = EntryKind::kMessage;
  result.message.role = Role::kToolResult;
  result.message.tool_call_id = "c1";
  result.message.is_error = false;
  result.message.tool.Edit().title = "Edit a.txt";
  result.message.tool.Edit().diffs.push_back({"/w/a.txt", std::string("one\ntwo\n"), "one\nTWO\n"});
  std::string html = SessionHtml({"t", "id", "agent", "/w"}, {call, result});
  EXPECT_NE(html.find("<span class=\"del\">-two</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"add\">+TWO</span>"), std::string::npos);
  EXPECT_NE(html.find(" one\n"), std::string::npos);
  EXPECT_NE(html.find("completed"), std::string::npos);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {
using host::CreateRecordedSession;
using host::OpenSessionFile;

TEST_F(RecordedSessionTest, NewSessionWithAParentThenSwitchingToItsFile) {
  SessionStore store(dir_ / "store");
  SessionOptions o;
  o.id = "child";
  o.cwd = dir_ / "ws";
  auto created = CreateRecordedSession(agent_, std::move(o), store, "/somewhere/parent.jsonl");
  ASSERT_TRUE(created.ok()) << created.error().message;
  session_ = *created;
  ASSERT_TRUE(Run("hello").ok());
  const fs::path file = session_->info().session_file;
  EXPECT_EQ(file.parent_path(), store.DirFor((dir_ / "ws").string()));
  {
    std::promise<void> closed;
    session_->Close([&] { closed.set_value(); });
    closed.get_future().wait();
  }
  session_->WaitIdle();
  session_.reset();
  auto read = ReadSessionFile(file);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->header.parent_session, "/somewhere/parent.jsonl");
  EXPECT_EQ(read->header.agent, "tester");

  SessionOptions again;
  again.cwd = dir_ / "ws";
  auto opened = OpenSessionFile(agent_, std::move(again), file);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  session_ = *opened;
  EXPECT_EQ(session_->info().id, "child") << "the id comes from the header";
  EXPECT_EQ(session_->transcript().Messages().size(), 2u);
  SessionOptions third;
  third.cwd = dir_ / "ws";
  auto refused = OpenSessionFile(agent_, std::move(third), file);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kSessionLocked);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {
using host::CreateRecordedSession;
using host::OpenSessionFile;

// Killed while a tool ran: the call has no result in the file. Loading adds a failed result (and
// records it), so the next model request is one a provider accepts.
TEST_F(RecordedSessionTest, CallsLeftWithoutResultsAreClosedOnLoad) {
  path_ = dir_ / "rec.jsonl";
  {
    auto writer = SessionWriter::ForNew(path_, Header("rec"));
    History h;
    writer->Record(h.Append(MessageEntry(Role::kUser, "read the notes")));
    Entry call = MessageEntry(Role::kAssistant, "Reading.");
    Json::Value args(Json::objectValue);
    args["path"] = "notes.txt";
    call.message.content.push_back(ContentBlock::ToolCall("c1", "read", args));
    call.message.content.push_back(ContentBlock::ToolCall("c2", "read", args));
    call.message.stop_reason = StopReason::kToolUse;
    writer->Record(h.Append(call));
    Entry done = MessageEntry(Role::kToolResult, "alpha");
    done.message.tool_call_id = "c1";
    done.message.tool_name = "read";
    writer->Record(h.Append(done));
  }  // the process "dies" here: c2 never got its result
  Open(true);
  auto history = session_->transcript().Messages();
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[3].role, Role::kToolResult);
  EXPECT_EQ(history[3].tool_call_id, "c2");
  EXPECT_TRUE(history[3].is_error);
  ASSERT_TRUE(Run("again").ok());
  EXPECT_EQ(session_->transcript().LastAssistantText(), "You said: again");
  session_->WaitIdle();
  Open(true);
  EXPECT_EQ(session_->transcript().Messages().size(), 6u) << "the added result was recorded, once";
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {
using host::CreateRecordedSession;
using host::OpenSessionFile;

// The id of the first assistant message on the session's branch.
std::string FirstAnswerId(const Session& s) {
  for (const Entry& e : s.transcript().BranchEntries())
    if (e.kind == EntryKind::kMessage && e.message.role == Role::kAssistant) return e.id;
  return {};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A leaf moved by branching, with nothing said after it, is where the session is found again:
// the move is one appended branch_summary line, nothing before it changes, and the model never
// sees it.
TEST_F(RecordedSessionTest, ALeafMovedByBranchingLastsAcrossAReload) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("first").ok());
  ASSERT_TRUE(Run("second").ok());
  session_->WaitIdle();
  const auto points = session_->branches().UserMessages();
  ASSERT_EQ(points.size(), 2u);
  const std::string before = Slurp(path_);
  const std::string left_leaf = session_->transcript().Leaf();
  auto text = session_->branches().BranchFrom(points[1].entry_id);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "second");
  const std::string after = Slurp(path_);

  // Appended, not rewritten: the old bytes are a prefix and one line follows.
  ASSERT_EQ(after.compare(0, before.size(), before), 0);
  const auto added = Lines(after.substr(before.size()));
  ASSERT_EQ(added.size(), 1u);
  auto line = ParseJson(added[0]);
  ASSERT_TRUE(line.ok());
  const std::string first_answer = FirstAnswerId(*session_);
  ASSERT_FALSE(first_answer.empty());
  EXPECT_EQ(StringOr(*line, "type"), "branch_summary");
  EXPECT_EQ(StringOr(*line, "parentId"), first_answer);
  EXPECT_EQ(StringOr(*line, "fromId"), first_answer);
  EXPECT_EQ(StringOr(*line, "summary"), "");
  EXPECT_EQ(StringOr(MemberOrNull(*line, "details"), "abandonedLeafId"), left_leaf);

  // As a killed process leaves it (the session still open, nothing closed or flushed): the
  // file's entries seed the same branch.
  auto read = ReadSessionFile(path_);
  ASSERT_TRUE(read.ok()) << read.error().message;
  History seeded;
  ASSERT_TRUE(seeded.Seed(read->entries).ok());
  ASSERT_EQ(seeded.messages().size(), 2u);
  EXPECT_EQ(seeded.messages()[0].TextContent(), "first");

  // Reopened: the leaf is where it was moved, and the next turn hangs there. The model's
  // context is the two messages and the new prompt: no branch summary in it.
  Open(true);
  ASSERT_EQ(session_->branches().UserMessages().size(), 1u);
  EXPECT_EQ(session_->branches().UserMessages()[0].text, "first");
  ASSERT_EQ(session_->transcript().Messages().size(), 2u);
  ASSERT_TRUE(Run("other second").ok());
  const auto history = session_->transcript().Messages();
  ASSERT_EQ(history.size(), 4u);
  for (const Message& m : history) EXPECT_FALSE(m.is_custom()) << m.TextContent();
  EXPECT_EQ(history[2].TextContent(), "other second");
  session_->WaitIdle();
  Open(true);
  ASSERT_EQ(session_->branches().UserMessages().size(), 2u);
  EXPECT_EQ(session_->branches().UserMessages()[1].text, "other second");
  const auto all = Lines(Slurp(path_));
  // Header, the name (the first prompt's gist), two turns, the move, one more turn.
  EXPECT_EQ(all.size(), 1u + 1u + 4u + 1u + 2u);

  // Moving to where the leaf already is writes nothing; SetLeaf lasts like BranchFrom.
  const size_t lines_now = all.size();
  ASSERT_TRUE(session_->branches().SetLeaf(session_->transcript().Leaf()).ok());
  EXPECT_EQ(Lines(Slurp(path_)).size(), lines_now);
  ASSERT_TRUE(session_->branches().SetLeaf(points[0].entry_id).ok());
  ASSERT_TRUE(session_->branches().SetLeaf(points[0].entry_id).ok());
  EXPECT_EQ(Lines(Slurp(path_)).size(), lines_now + 1) << "the second move was no move";
  Open(true);
  ASSERT_EQ(session_->transcript().Messages().size(), 1u);
  EXPECT_EQ(session_->transcript().Messages()[0].TextContent(), "first");
}

// A branch takes the state its own entries set: a mode chosen after the branch point stays with
// the branch that was left, here and after a reload.
TEST_F(RecordedSessionTest, ABranchDropsTheModeSetAfterItsPoint) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("first").ok());
  session_->WaitIdle();
  ASSERT_TRUE(session_->selection().SetMode(PermissionMode::kPlan, nullptr).ok());
  ASSERT_TRUE(Run("second").ok());
  session_->WaitIdle();
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kPlan);
  const auto points = session_->branches().UserMessages();
  ASSERT_EQ(points.size(), 2u);
  // Back to before the mode change: the agent's default again.
  ASSERT_TRUE(session_->branches().SetLeaf(FirstAnswerId(*session_)).ok());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kDefault);
  Open(true);
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kDefault);
  // And forward to the branch that chose it: plan again.
  ASSERT_TRUE(session_->branches().SetLeaf(points[1].entry_id).ok());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kPlan);
}

// A fork (the RPC door's branch): a new file whose header names the parent, holding the history
// before the chosen message; the parent's file is untouched; both reload with their history.
TEST_F(RecordedSessionTest, AForkIsANewFileHoldingTheHistoryBeforeItsPoint) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("first").ok());
  ASSERT_TRUE(Run("second").ok());
  session_->WaitIdle();
  const std::string parent_bytes = Slurp(path_);
  const auto points = session_->branches().UserMessages();
  std::vector<Entry> seed;
  for (const Entry& e : session_->transcript().BranchEntries()) {
    if (e.id == points[1].entry_id) break;
    seed.push_back(e);
  }
  ASSERT_EQ(seed.size(), 3u);  // the first message, the name it gave, the answer

  SessionStore store(dir_ / "store");
  SessionOptions o;
  o.id = "fork";
  o.cwd = dir_ / "ws";
  o.seed = seed;
  o.seed_leaf = seed.back().id;
  auto forked = CreateRecordedSession(agent_, std::move(o), store, path_.string());
  ASSERT_TRUE(forked.ok()) << forked.error().message;
  std::shared_ptr<Session> fork = *forked;
  const fs::path fork_file = fork->info().session_file;
  // Written at once, before anyone speaks in it.
  auto read = ReadSessionFile(fork_file);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->header.parent_session, path_.string());
  EXPECT_EQ(read->header.id, "fork");
  ASSERT_EQ(read->entries.size(), seed.size());
  for (size_t i = 0; i < seed.size(); ++i)
    EXPECT_EQ(EntryToJson(read->entries[i]), EntryToJson(seed[i])) << i;
  EXPECT_EQ(fork->transcript().Messages().size(), 2u);

  // It goes on in its own file.
  std::swap(session_, fork);
  ASSERT_TRUE(Run("fork second").ok());
  session_->WaitIdle();
  std::swap(session_, fork);
  EXPECT_EQ(Slurp(path_), parent_bytes) << "the parent's file is untouched";
  {
    std::promise<void> closed;
    fork->Close([&] { closed.set_value(); });
    closed.get_future().wait();
    fork->WaitIdle();
  }
  fork.reset();

  SessionOptions again;
  again.cwd = dir_ / "ws";
  auto reopened = OpenSessionFile(agent_, std::move(again), fork_file);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  const auto history = (*reopened)->transcript().Messages();
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].TextContent(), "first");
  EXPECT_EQ(history[2].TextContent(), "fork second");
  EXPECT_EQ((*reopened)->info().id, "fork");
  Open(true);  // the parent, from its own file
  ASSERT_EQ(session_->branches().UserMessages().size(), 2u);
  EXPECT_EQ(session_->branches().UserMessages()[1].text, "second");
}

// A seed whose leaf is not its last entry is a branch, and recorded as one.
TEST_F(RecordedSessionTest, ASeedLeafOtherThanTheLastEntryIsRecorded) {
  path_ = dir_ / "rec.jsonl";
  Open(false);
  ASSERT_TRUE(Run("first").ok());
  ASSERT_TRUE(Run("second").ok());
  session_->WaitIdle();
  const std::string first_answer = FirstAnswerId(*session_);
  {
    std::promise<void> closed;
    session_->Close([&] { closed.set_value(); });
    closed.get_future().wait();
    session_->WaitIdle();
  }
  session_.reset();
  auto opened = SessionWriter::OpenExisting(path_);
  ASSERT_TRUE(opened.ok());
  SessionOptions o;
  o.id = "rec";
  o.cwd = dir_ / "ws";
  o.recorder = opened->first;
  o.seed = std::move(opened->second.entries);
  o.seed_leaf = first_answer;
  auto s = Session::Create(agent_, std::move(o));
  ASSERT_TRUE(s.ok()) << s.error().message;
  session_ = *s;
  EXPECT_EQ(session_->transcript().Messages().size(), 2u);
  Open(true);
  EXPECT_EQ(session_->transcript().Messages().size(), 2u) << "the file ends on the chosen branch";
}

}  // namespace
}  // namespace lousho::agent

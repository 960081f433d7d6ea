// Randomized durability of session files (issue 18): seeded random sequences of prompts, tool
// calls, stream-rule firings, compactions, branches, mode, model, thinking-level, name and todo
// changes run through a real Session recorded to a real file; the file is then opened in a fresh
// Session, and the model request of the next prompt must be byte-identical to the one the
// original session sent (the system prompt, the tools, the model, the thinking level and every
// message, serialized with the project's JSON writer). Nothing may be repaired on the way: a file
// lousho wrote reloads clean.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>

#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "host/session_host.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {
using host::CreateRecordedSession;
using host::OpenSessionFile;
namespace fs = std::filesystem;

// The request as the model would get it: everything the engine decides, in one JSON line.
std::string SerializeRequest(const ModelRequest& r) {
  Json::Value j(Json::objectValue);
  j["model"] = r.model;
  j["system"] = r.system;
  j["thinking"] = ThinkingLevelId(r.thinking);
  j["maxOutputTokens"] = r.max_output_tokens;
  Json::Value tools(Json::arrayValue);
  for (const ToolSchema& t : r.tools) {
    Json::Value tool(Json::objectValue);
    tool["name"] = t.name;
    tool["description"] = t.description;
    tool["parameters"] = t.parameters;
    tools.append(tool);
  }
  j["tools"] = tools;
  Json::Value messages(Json::arrayValue);
  for (const Message& m : r.messages) messages.append(MessageToJson(m));
  // The new prompt's own message is stamped when it is sent: the one part that differs.
  if (!messages.empty()) messages[messages.size() - 1].removeMember("timestamp");
  j["messages"] = messages;
  return WriteJson(j);
}

// A scripted model that records every request it is sent before answering it.
class RecordingProvider : public Provider {
 public:
  explicit RecordingProvider(config::Script script) : script_(std::move(script)) {}
  Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks& retry) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(SerializeRequest(request));
    }
    return script_.Stream(request, on_delta, cancel, retry);
  }
  std::vector<std::string> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  ScriptProvider script_;
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
};

class AllowAll : public PermissionPrompter {
 public:
  PermissionDecision RequestPermission(const std::string&, const PermissionRequest&,
                                       const CancelToken&) override {
    return PermissionDecision::kAllowOnce;
  }
};

config::ScriptStep Text(std::string text) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.chunk_size = 7;  // a forbidden token spans deltas, as it does from a real model
  return s;
}

config::ScriptStep CallStep(const std::string& tool, Json::Value args) {
  config::ScriptStep s;
  s.text = "Calling " + tool + ".";
  config::ScriptToolCall c;
  c.name = tool;
  c.arguments = std::move(args);
  s.tool_calls.push_back(std::move(c));
  return s;
}

config::ScriptReply Reply(std::string match, std::vector<config::ScriptStep> steps) {
  return config::ScriptReply{std::move(match), std::move(steps)};
}

// The replies: a compaction's summary, a stream rule's retry, tool calls, rule violations, and an
// echo (so every context differs).
config::Script ModelScript() {
  Json::Value todo(Json::objectValue);
  Json::Value items(Json::arrayValue);
  for (const char* status : {"completed", "in_progress"}) {
    Json::Value item(Json::objectValue);
    item["content"] = std::string("task ") + status;
    item["status"] = status;
    item["priority"] = "medium";
    items.append(item);
  }
  todo["todos"] = items;
  Json::Value read(Json::objectValue);
  read["path"] = "notes.txt";
  Json::Value ls(Json::objectValue);
  ls["path"] = ".";
  config::Script s;
  s.name = "rec";
  s.replies = {
      Reply("^<conversation>", {Text("SUMMARY: the earlier talk, in short.")}),
      Reply("system-interrupt", {Text("Complying: ALLOWED text.")}),
      Reply("system-reminder", {Text("Noted the open todos.")}),
      Reply("CALL read", {CallStep("read", read), Text("The notes say alpha.")}),
      Reply("CALL todo", {CallStep("todo", todo), Text("Planned.")}),
      Reply("CALL ls", {CallStep("ls", ls), Text("Listed.")}),
      Reply("VIOLATE-A", {Text("Sure: FORBIDDEN_ALPHA and then more text")}),
      Reply("VIOLATE-B", {Text("Well: FORBIDDEN_BRAVO and then more text")}),
      Reply("", {Text("Echo: {{input}}")}),
  };
  return s;
}

class DurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-durability-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ws" / ".lousho" / "rules");
    std::ofstream(dir_ / "ws" / "notes.txt") << "alpha\nbeta\n";
    std::ofstream(dir_ / "ws" / ".lousho" / "rules" / "alpha.md")
        << "---\ndescription: No alpha token\ncondition: \"FORBIDDEN_ALPHA\"\n---\n"
           "Never write FORBIDDEN_ALPHA.\n";
    std::ofstream(dir_ / "ws" / ".lousho" / "rules" / "bravo.md")
        << "---\ndescription: No bravo token\ncondition: \"FORBIDDEN_BRAVO\"\n---\n"
           "Never write FORBIDDEN_BRAVO.\n";
    provider_ = std::make_shared<RecordingProvider>(ModelScript());
    auto agent = std::make_shared<AgentConfig>();
    agent->name = "durable";
    agent->instructions = "You are the durability test agent.";
    agent->model = Choice("m1");
    for (const char* t : {"read", "ls", "todo", "switch_mode"})
      agent->tools.push_back(MakeBuiltinTool(t));
    agent->models = {{"rec", "m1", "m1"}, {"rec", "m2", "m2"}};
    agent->resolve_model = [this](const std::string& provider,
                                  const std::string& id) -> Result<ModelChoice> {
      if (provider != "rec") return MakeError(ErrorCode::kModelUnknown, "unknown provider");
      return Choice(id);
    };
    agent->compaction.keep_recent_tokens = 40;  // compactions cut at varying points
    agent->rules = std::make_shared<rules::AgentRules>();
    agent_ = agent;
  }
  void TearDown() override { fs::remove_all(dir_); }

  ModelChoice Choice(const std::string& id) const {
    ModelChoice m;
    m.provider_name = "rec";
    m.model_id = id;
    m.provider = provider_;
    return m;
  }

  SessionOptions Options(const std::string& id) {
    SessionOptions o;
    o.id = id;
    o.cwd = dir_ / "ws";
    o.services.permissions = &allow_;
    o.todos.reminders = true;  // the RPC door's todo settings: reminders and auto-clear
    o.todos.max_reminders = 1;
    o.todos.auto_clear = true;
    return o;
  }

  fs::path dir_;
  AllowAll allow_;
  std::shared_ptr<RecordingProvider> provider_;
  std::shared_ptr<const AgentConfig> agent_;
};

// Runs one prompt to its end; returns whether it ended without an error.
bool RunPrompt(Session& s, const std::string& text) {
  std::promise<bool> done;
  Status st = s.Prompt({ContentBlock::Text(text)},
                       [&](const Result<TurnResult>& r) { done.set_value(r.ok()); });
  if (!st.ok()) return false;
  return done.get_future().get();
}

// The random steps of a session's life. Each says what it did in `log` (for the failure message).
struct Life {
  Session& s;
  std::mt19937& rng;
  int n = 0;
  std::string* log;

  size_t Pick(size_t count) { return std::uniform_int_distribution<size_t>(0, count - 1)(rng); }
  std::string N() const { return std::to_string(n); }

  void Prompt() {
    static const char* const kPrompts[] = {"hello",   "CALL read the notes", "CALL todo",
                                           "CALL ls", "VIOLATE-A please",    "VIOLATE-B please"};
    const std::string text = std::string(kPrompts[Pick(6)]) + " #" + N();
    *log += "prompt '" + text + "'; ";
    EXPECT_TRUE(RunPrompt(s, text)) << text;
  }
  void Compact() {
    *log += "compact; ";
    std::promise<void> done;
    Status st =
        s.compaction().Compact("", [&](const Result<CompactionResult>&) { done.set_value(); });
    if (st.ok()) done.get_future().get();  // "nothing to compact" is an answer too
  }
  void BranchBeforeUser() {
    const std::vector<BranchPoint> users = s.branches().UserMessages();
    if (users.empty()) return;
    const BranchPoint& at = users[Pick(users.size())];
    *log += "branch before " + at.entry_id + "; ";
    EXPECT_TRUE(s.branches().BranchFrom(at.entry_id).ok());
  }
  // The leaf moves to an earlier reply that ended its turn (no call left unanswered).
  void LeafToReply() {
    std::vector<std::string> ends;
    for (const Entry& e : s.transcript().BranchEntries())
      if (e.kind == EntryKind::kMessage && e.message.role == Role::kAssistant &&
          e.message.stop_reason == StopReason::kEndTurn)
        ends.push_back(e.id);
    if (ends.empty()) return;
    const std::string id = ends[Pick(ends.size())];
    *log += "leaf to " + id + "; ";
    EXPECT_TRUE(s.branches().SetLeaf(id).ok());
  }
  void Mode() {
    static const PermissionMode kModes[] = {PermissionMode::kDefault, PermissionMode::kPlan,
                                            PermissionMode::kAcceptEdits};
    const PermissionMode mode = kModes[Pick(3)];
    *log += std::string("mode ") + PermissionModeId(mode) + "; ";
    EXPECT_TRUE(s.selection().SetMode(mode).ok());
  }
  void Model() {
    const std::string id = Pick(2) ? "rec/m2" : "rec/m1";
    *log += "model " + id + "; ";
    EXPECT_TRUE(s.selection().SelectModel(id).ok());
  }
  void Thinking() {
    static const ThinkingLevel kLevels[] = {ThinkingLevel::kOff, ThinkingLevel::kLow,
                                            ThinkingLevel::kHigh};
    const ThinkingLevel level = kLevels[Pick(3)];
    *log += std::string("thinking ") + ThinkingLevelId(level) + "; ";
    EXPECT_TRUE(s.selection().SetThinking(level).ok());
  }
  void Name() {
    *log += "name; ";
    EXPECT_TRUE(s.branches().SetName("name " + N()).ok());
  }
  void Todos() {
    TodoPhase phase{"", "Phase " + N(), {}};
    phase.tasks.push_back(TodoTask{"", "step " + N(), Pick(2) ? "pending" : "completed", ""});
    *log += "todos; ";
    s.todos().Set({phase});
  }
  // A shell command's output for the model (the RPC door's `bash`), sometimes the last thing
  // before the file is read back.
  void Context() {
    const bool then_prompt = Pick(2) == 1;
    *log += then_prompt ? "context then prompt; " : "context; ";
    s.queues().AddContext(Message::Custom(
        "bashExecution", "The user ran a shell command:\n$ echo " + N() + "\n" + N() + "\n", true));
    if (then_prompt) {
      EXPECT_TRUE(RunPrompt(s, "after the command #" + N()));
    }
  }

  // One step, prompts three times as likely as each other kind.
  void Step() {
    using Fn = void (Life::*)();
    static const Fn kSteps[] = {
        &Life::Prompt,           &Life::Prompt,      &Life::Prompt, &Life::Compact,
        &Life::BranchBeforeUser, &Life::LeafToReply, &Life::Mode,   &Life::Model,
        &Life::Thinking,         &Life::Name,        &Life::Todos,  &Life::Context};
    (this->*kSteps[Pick(std::size(kSteps))])();
    s.WaitIdle();
    ++n;
  }
};

// The request of `next` from `a` (which is closed after) and from a fresh session opened on a copy
// of a's file taken before it; the reload must repair nothing.
std::pair<std::string, std::string> NextRequests(std::shared_ptr<Session> a,
                                                 const std::shared_ptr<const AgentConfig>& agent,
                                                 SessionOptions fresh, RecordingProvider& provider,
                                                 const fs::path& f0) {
  a->WaitIdle();
  fs::copy_file(a->info().session_file, f0, fs::copy_options::overwrite_existing);
  const size_t before_a = provider.Requests().size();
  EXPECT_TRUE(RunPrompt(*a, "NEXT prompt"));
  std::string r_a = provider.Requests().at(before_a);
  std::promise<void> closed;
  a->Close([&] { closed.set_value(); });
  closed.get_future().get();
  a->WaitIdle();
  a.reset();
  auto opened = OpenSessionFile(agent, std::move(fresh), f0);
  if (!opened.ok()) return {r_a, "cannot open: " + opened.error().message};
  std::shared_ptr<Session> b = *opened;
  EXPECT_TRUE(b->info().load_warnings.empty())
      << "a clean file was repaired: " << b->info().load_warnings.front();
  const size_t before_b = provider.Requests().size();
  EXPECT_TRUE(RunPrompt(*b, "NEXT prompt"));
  std::string r_b = provider.Requests().at(before_b);
  std::promise<void> closed_b;
  b->Close([&] { closed_b.set_value(); });
  closed_b.get_future().get();
  b->WaitIdle();
  return {r_a, r_b};
}

// The output of a shell command the user ran (the RPC door's `bash`) is in the file as soon as the
// command is over: a crash before the next prompt does not lose it.
TEST_F(DurabilityTest, ContextAddedBetweenPromptsIsSavedAtOnce) {
  SessionStore store(dir_ / "sessions");
  auto a = CreateRecordedSession(agent_, Options("ctx"), store, "");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(RunPrompt(**a, "hello"));
  (*a)->queues().AddContext(
      Message::Custom("bashExecution", "The user ran a shell command:\n$ echo hi\nhi\n", true));
  std::ifstream in((*a)->info().session_file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("bashExecution"), std::string::npos) << text.str();
  auto [r_a, r_b] = NextRequests(*a, agent_, Options(""), *provider_, dir_ / "f0.jsonl");
  EXPECT_NE(r_a.find("$ echo hi"), std::string::npos);
  EXPECT_EQ(r_a, r_b);
}

// A branch that never chose a model has the agent's, in memory as in the file.
TEST_F(DurabilityTest, BranchWithoutAModelChoiceHasTheAgentsModelBeforeAndAfterAReload) {
  SessionStore store(dir_ / "sessions");
  auto a = CreateRecordedSession(agent_, Options("branch"), store, "");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(RunPrompt(**a, "first"));
  ASSERT_TRUE((*a)->selection().SelectModel("rec/m2").ok());
  ASSERT_TRUE((*a)->selection().SetThinking(ThinkingLevel::kHigh).ok());
  ASSERT_TRUE(RunPrompt(**a, "second"));
  const std::vector<BranchPoint> users = (*a)->branches().UserMessages();
  ASSERT_EQ(users.size(), 2u);
  ASSERT_TRUE((*a)->branches()
                  .BranchFrom(users[0].entry_id)
                  .ok());  // before the first message and the choice
  EXPECT_EQ((*a)->selection().model().model_id, "m1");
  EXPECT_EQ((*a)->selection().model().thinking, ThinkingLevel::kOff);
  auto [r_a, r_b] = NextRequests(*a, agent_, Options(""), *provider_, dir_ / "f0.jsonl");
  EXPECT_NE(r_a.find("\"model\":\"m1\""), std::string::npos) << r_a;
  EXPECT_EQ(r_a, r_b);
}

TEST_F(DurabilityTest, RandomHistoriesReloadToTheSameNextRequest) {
  constexpr int kIterations = 40;
  constexpr int kSteps = 14;
  // LOUSHO_DURABILITY_SEED replays a failure; the seed is printed with every failure.
  const char* env_seed = std::getenv("LOUSHO_DURABILITY_SEED");
  const unsigned base_seed = env_seed ? static_cast<unsigned>(std::strtoul(env_seed, nullptr, 10))
                                      : std::random_device{}();
  SessionStore store(dir_ / "sessions");
  for (int it = 0; it < kIterations; ++it) {
    const unsigned seed = base_seed + static_cast<unsigned>(it);
    SCOPED_TRACE("seed " + std::to_string(seed) + " (LOUSHO_DURABILITY_SEED replays it)");
    std::mt19937 rng(seed);
    std::string log;
    const std::string id = "dur-" + std::to_string(it);
    auto created = CreateRecordedSession(agent_, Options(id), store, "");
    ASSERT_TRUE(created.ok()) << created.error().message;
    std::shared_ptr<Session> a = *created;
    ASSERT_TRUE(RunPrompt(*a, "start #" + std::to_string(it)));  // the file exists from here on
    Life life{*a, rng, 0, &log};
    for (int n = 0; n < kSteps; ++n) life.Step();
    auto [r_a, r_b] = NextRequests(a, agent_, Options(""), *provider_,
                                   dir_ / ("f0-" + std::to_string(it) + ".jsonl"));
    a.reset();
    EXPECT_EQ(r_a, r_b) << "seed " << seed << " (iteration " << it << "): " << log;
    if (HasFailure()) break;  // one seed is enough to reproduce
  }
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

// A context source that counts its calls, as the host's would (files, rules, environment).
ContextSource CountingContext(const std::shared_ptr<std::atomic<int>>& calls) {
  return [calls] {
    ++*calls;
    return SessionContext{"# Project context\n\nCONTEXT_MARKER\n", {}};
  };
}

// The editor's system prompt (override) is recorded in the file: a session opened on it in a new
// process, without the editor sending it again, sends the same system prompt; the context is
// built once per session and the system prompt is byte-identical between turns.
TEST_F(DurabilityTest, TheEditorsSystemPromptAndTheContextReloadToTheSameRequest) {
  SessionStore store(dir_ / "sessions");
  auto calls = std::make_shared<std::atomic<int>>(0);
  SessionOptions o = Options("prompt");
  o.system_prompt = ClientPrompt{ClientPrompt::Mode::kOverride, "EDITOR_OVERRIDE"};
  o.context = CountingContext(calls);
  auto a = CreateRecordedSession(agent_, std::move(o), store, "");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(RunPrompt(**a, "hello"));
  ASSERT_TRUE(RunPrompt(**a, "CALL ls"));
  EXPECT_EQ(calls->load(), 1);
  const std::vector<std::string> requests = provider_->Requests();
  ASSERT_GE(requests.size(), 3u);
  auto system_of = [](const std::string& request) {
    auto v = ParseJson(request);
    EXPECT_TRUE(v.ok());
    return v.ok() ? AsString(MemberOrNull(*v, "system")).value_or("") : std::string();
  };
  const std::string system = system_of(requests[0]);
  for (const auto& r : requests) EXPECT_EQ(system_of(r), system);
  EXPECT_EQ(system.rfind("EDITOR_OVERRIDE\n\n# Project context\n\nCONTEXT_MARKER\n", 0), 0u)
      << system;
  EXPECT_EQ(system.find("durability test agent"), std::string::npos);  // overridden

  SessionOptions fresh = Options("");
  fresh.context = CountingContext(calls);
  auto [r_a, r_b] = NextRequests(*a, agent_, std::move(fresh), *provider_, dir_ / "f0.jsonl");
  EXPECT_EQ(system_of(r_b), system);
  EXPECT_EQ(r_a, r_b);
  EXPECT_EQ(calls->load(), 2);  // once more, for the session opened on the file
}

// An editor that sends another prompt on load replaces the recorded one (and records it).
TEST_F(DurabilityTest, AnotherSystemPromptOnLoadIsRecordedAndUsed) {
  SessionStore store(dir_ / "sessions");
  SessionOptions o = Options("prompt2");
  o.system_prompt = ClientPrompt{ClientPrompt::Mode::kAppend, "FIRST_APPEND"};
  auto a = CreateRecordedSession(agent_, std::move(o), store, "");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(RunPrompt(**a, "hello"));
  const std::string file = (*a)->info().session_file;
  std::promise<void> closed;
  (*a)->Close([&] { closed.set_value(); });
  closed.get_future().get();
  (*a)->WaitIdle();
  a->reset();
  for (const char* text : {"SECOND_APPEND", ""}) {
    SessionOptions again = Options("");
    if (*text) again.system_prompt = ClientPrompt{ClientPrompt::Mode::kAppend, text};
    auto b = OpenSessionFile(agent_, std::move(again), file);
    ASSERT_TRUE(b.ok()) << b.error().message;
    const size_t before = provider_->Requests().size();
    ASSERT_TRUE(RunPrompt(**b, "again"));
    const std::string r = provider_->Requests().at(before);
    EXPECT_NE(r.find("You are the durability test agent.\\n\\nSECOND_APPEND\\n"), std::string::npos)
        << r;
    EXPECT_EQ(r.find("FIRST_APPEND"), std::string::npos);
    std::promise<void> done;
    (*b)->Close([&] { done.set_value(); });
    done.get_future().get();
    (*b)->WaitIdle();
  }
}

}  // namespace
}  // namespace lousho::agent

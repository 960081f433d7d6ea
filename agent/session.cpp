// Session: composes the engine's parts, wires the recorder's hooks, and runs prompts on the
// session's strand.
#include "agent/session.h"

#include "agent/checkpoints.h"
#include "agent/hooks.h"
#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/rule_watch.h"
#include "agent/sandbox_guard.h"
#include "agent/tool_runner.h"
#include "agent/tools/jobs.h"
#include "agent/tools/skill_tool.h"
#include "agent/tools/tool_util.h"
#include "agent/turn_gate.h"
#include "agent/turn_runner.h"
#include "support/log.h"

namespace lousho::agent {
namespace fs = std::filesystem;

namespace {
WorkerPool* DefaultPool() {
  // Never destroyed: a process-wide pool must not wait for work at static destruction.
  static auto* pool = new WorkerPool();
  return pool;
}
}  // namespace

Session::Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options)
    : agent_(std::move(agent)),
      options_(std::move(options)),
      strand_(Strand::Create(options_.pool ? options_.pool : DefaultPool())) {
  info_.id = options_.id;
  info_.cwd = options_.cwd;
  info_.session_file = options_.session_file;
  info_.roots.push_back(options_.cwd);
  for (const auto& r : options_.additional_roots) info_.roots.push_back(r);
  for (const auto& r : agent_->extra_roots) info_.roots.push_back(r);
  FindFileExtensions();

  gate_ = std::make_unique<TurnGate>(mu_);
  recorder_ = std::make_unique<Recorder>(mu_, options_.recorder);
  notices_ = std::make_unique<NoticeBoard>(mu_, *recorder_);
  emitter_ = std::make_unique<Emitter>(options_.sink, *notices_, *recorder_);
  selection_ = std::make_unique<Selection>(mu_, *notices_, agent_, info_.id);
  todos_ = std::make_unique<TodoTracker>(mu_, *notices_, *recorder_, info_.id);
  tools_ = std::make_unique<ToolSet>(mu_, agent_->tools);
  queues_ = std::make_unique<InputQueues>(mu_, *recorder_, *gate_, info_.id);
  // [rewind] The checkpoints live beside the session file (in memory without one).
  checkpoints_ = std::make_unique<CheckpointStore>(
      info_.session_file.empty() ? fs::path() : CheckpointDirFor(info_.session_file));
  // [sandbox] The commands' kernel sandbox, from the spec and the session's folders.
  sandbox_ =
      std::make_unique<SandboxGuard>(agent_->sandbox, SandboxPlaceOf(info_.cwd, info_.roots));
  if (agent_->sandbox.mcp) info_.mcp_sandbox = sandbox_->HookPolicy();
  info_.mcp_proxy = agent_->proxy;
  jobs_ = std::make_unique<tools::JobTable>();
  if (!info_.session_file.empty())
    outputs_ = std::make_unique<tools::SavedOutputs>(tools::SavedOutputDirFor(info_.session_file));
  rewinder_ = std::make_unique<Rewinder>(*recorder_, *gate_, checkpoints_.get(), options_.services,
                                         info_.id);
  branching_ = std::make_unique<Branching>(mu_, *recorder_, *notices_, *gate_, rewinder_.get());
  transcript_ = std::make_unique<Transcript>(
      mu_, *recorder_, *branching_,
      TranscriptOwner{info_.id, info_.session_file, info_.cwd, agent_->name});
  rules_ = std::make_unique<RuleWatch>(*emitter_, *recorder_);
  stream_ = std::make_unique<StreamControl>(mu_, *rules_);
  compactor_ =
      std::make_unique<Compactor>(agent_, *emitter_, *recorder_, *selection_, *transcript_, *gate_);
  calls_ = std::make_unique<ToolCallRunner>(
      ToolRunParts{*tools_, *selection_, *todos_, *queues_, *rules_, *emitter_, *recorder_},
      ToolRunPlace{info_.id, info_.cwd, info_.roots, options_.services, checkpoints_.get(),
                   sandbox_.get(), jobs_.get(), outputs_.get()},
      agent_->permission_rules);
  runner_ = std::make_unique<TurnRunner>(
      TurnParts{*selection_, *tools_, *queues_, *todos_, *branching_, *transcript_, *compactor_,
                *stream_, *rules_, *calls_, *emitter_, *recorder_},
      TurnSettings{agent_, info_.cwd, options_.watcher, options_.todos, options_.auto_title,
                   info_.commands, options_.system_prompt, options_.context, jobs_.get()});
  if (!info_.skills.empty()) tools_->Add(tools::MakeSkillTool(info_.skills));
  // Hooks: the spec's and the project's, told through the session's warnings (worker only).
  hooks_ = std::make_unique<HookRunner>(
      agent_->hooks,
      HookPlace{info_.id, info_.cwd, info_.session_file, checkpoints_.get(),
                [r = runner_.get()] { return r->ChangeEntry(); }, sandbox_->HookPolicy()},
      [e = emitter_.get()](const event::Warning& w) { e->Emit(w); });
  calls_->UseHooks(hooks_.get());
  runner_->UseHooks(hooks_.get());
  compactor_->UseHooks(hooks_.get());
}

// Skills and commands from files, read once: a session keeps what it found when it opened, so
// its tool list (and the prompt cache) stays the same.
void Session::FindFileExtensions() {
  skills::Found found;
  if (agent_->skills) found = skills::Discover(*agent_->skills, skills::ProcessPlaces(info_.cwd));
  for (const auto& k : found.skipped)
    info_.skill_notices.push_back("skipped " + k.path + ": " + k.why);
  info_.commands = SessionCommands(agent_->commands, found.commands, &info_.skill_notices);
  info_.skills = std::move(found.skills);
  for (const auto& n : info_.skill_notices) log::Warn("skills and commands: " + n);
}

// The recorder tells the parts what they keep of the history: the name an entry gives, and what
// comes back with a branch (mode, model, plan, todos, name).
void Session::Wire() {
  recorder_->OnAppend([b = branching_.get()](const Entry& e) { b->NoteLocked(e); });
  recorder_->OnBranch([this](const std::vector<const Entry*>& branch) {
    selection_->RestoreLocked(branch);
    todos_->RestoreLocked(branch);
    branching_->RestoreLocked(branch);
  });
  // The parts reach the worker through the session (which outlives them).
  std::weak_ptr<Session> weak = weak_from_this();
  Poster post = [weak](std::function<void()> task) -> Status {
    auto self = weak.lock();
    if (!self) return MakeError(ErrorCode::kSessionClosed, "the session is gone");
    return self->Post(std::move(task));
  };
  notices_->Attach([strand = strand_] { return strand->InTask(); }, post, options_.sink);
  queues_->Attach(post);
  compactor_->Attach(post);
}

Result<std::shared_ptr<Session>> Session::Create(std::shared_ptr<const AgentConfig> agent,
                                                 SessionOptions options) {
  std::vector<Entry> seed = std::move(options.seed);
  std::string seed_leaf = std::move(options.seed_leaf);
  bool record_prompt = false;
  options.system_prompt = ChooseClientPrompt(seed, options.system_prompt, &record_prompt);
  std::shared_ptr<Session> s(new Session(std::move(agent), std::move(options)));
  s->Wire();
  if (!seed.empty()) {
    Status st = s->Seed(std::move(seed), seed_leaf);
    if (!st.ok()) return st.error();
  }
  if (record_prompt) s->recorder_->Append(ClientPromptEntry(*s->options_.system_prompt));
  // The project's rules are read now, once: a session sees the rules of when it opened.
  if (s->agent_->rules) s->rules_->Load(*s->agent_->rules, s->info_.cwd);
  return s;
}

Status Session::Seed(std::vector<Entry> seed, const std::string& seed_leaf) {
  // The file's leaf is its last entry; a leaf chosen elsewhere is a branch, recorded as one.
  const std::string last = seed.back().id;
  Status st = recorder_->Seed(std::move(seed), last, &info_.load_warnings);
  if (!st.ok()) return st;
  for (const std::string& w : info_.load_warnings)
    log::Warn("session " + info_.session_file + ": " + w);
  if (!seed_leaf.empty() && seed_leaf != last) {
    st = recorder_->BranchTo([&](const History&) -> Result<std::string> { return seed_leaf; });
    if (!st.ok()) return st;  // restores the branch's state too
  } else {
    recorder_->Restore();
  }
  CloseInterruptedCalls();
  return Status::Ok();
}

// A process killed while tools ran leaves an assistant message whose calls have no results; a
// model request with such a history is refused by every provider. Each missing result is added
// (and recorded) as a failed call, as a cancelled call would have ended.
void Session::CloseInterruptedCalls() {
  std::vector<Message> results;
  recorder_->Read([&](const History& h) {
    const auto& msgs = h.messages();
    size_t last = msgs.size();
    for (size_t i = msgs.size(); i-- > 0;)
      if (msgs[i].role == Role::kAssistant) {
        last = i;
        break;
      }
    if (last == msgs.size()) return;
    for (const auto& b : msgs[last].content) {
      if (b.type != BlockType::kToolCall) continue;
      bool answered = false;
      for (size_t j = last + 1; j < msgs.size(); ++j)
        answered =
            answered || (msgs[j].role == Role::kToolResult && msgs[j].tool_call_id == b.id());
      if (answered) continue;
      Message tr;
      tr.role = Role::kToolResult;
      tr.tool_call_id = b.id();
      tr.tool_name = b.name();
      tr.is_error = true;
      tr.content.push_back(
          ContentBlock::Text("Interrupted: lousho stopped before this tool call finished."));
      tr.tool.Edit().title = b.name();
      tr.tool.Edit().args = b.arguments();
      tr.timestamp_ms = NowMs();
      results.push_back(std::move(tr));
    }
  });
  for (Message& m : results) recorder_->AppendMessage(std::move(m));
}

Session::~Session() { tools_->CloseSources(); }

Status Session::Post(std::function<void()> task) {
  return strand_->Post([self = shared_from_this(), task = std::move(task)] {
    task();
    self->emitter_->Flush();
  });
}

Status Session::Prompt(std::vector<ContentBlock> content,
                       std::function<void(Result<TurnResult>)> done) {
  auto begun = gate_->Begin();
  if (!begun.ok()) return begun.error();
  std::shared_ptr<CancelSource> source = *begun;
  queues_->Open();
  Status st = Post([this, source, content = std::move(content), done = std::move(done)]() mutable {
    auto call = ParseBuiltinCall(content);
    Result<TurnResult> result = call ? runner_->RunCommand(*call, source->token())
                                     : runner_->Run(std::move(content), source->token());
    recorder_->Flush();                    // durable at every turn end
    recorder_->TellSaving(options_.sink);  // before the prompt's answer
    queues_->Stop();
    gate_->End();
    done(std::move(result));
  });
  if (!st.ok()) {
    queues_->Stop();
    gate_->End();
  }
  return st;
}

void Session::Cancel(CancelCause cause) { gate_->Cancel(cause); }

void Session::Close(std::function<void()> done, CancelCause cause) {
  gate_->Close();
  Cancel(cause);
  Status st = Post([this, done = std::move(done), cause] {
    hooks_->SessionEnded(cause == CancelCause::kShutdown ? "shutdown" : "close");  // hooks
    tools_->CloseSources();
    jobs_->EndAll();     // [jobs] nothing the session started outlives it
    recorder_->Close();  // the file's lock goes with the session
    if (done) done();
  });
  if (!st.ok())
    log::Error("session " + info_.id + ": cannot finish closing: " + st.error().message);
}

void Session::WaitIdle() { strand_->WaitIdle(); }

bool Session::busy() const { return gate_->busy(); }

}  // namespace lousho::agent

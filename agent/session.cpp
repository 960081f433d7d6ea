// Session engine: the turn loop (stream a model message -> run its tool calls -> decide what comes
// next), permissions, the history, and events on the session's strand.
#include "agent/session.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "agent/builtin_commands.h"
#include "agent/html_export.h"
#include "core/message_builder.h"
#include "support/files.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent {
namespace fs = std::filesystem;

ThinkingLevel ParseThinkingLevel(const std::string& s) {
  if (s == "minimal") return ThinkingLevel::kMinimal;
  if (s == "low") return ThinkingLevel::kLow;
  if (s == "medium") return ThinkingLevel::kMedium;
  if (s == "high") return ThinkingLevel::kHigh;
  if (s == "xhigh") return ThinkingLevel::kXHigh;
  return ThinkingLevel::kOff;
}

const char* ThinkingLevelId(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return "off";
    case ThinkingLevel::kMinimal:
      return "minimal";
    case ThinkingLevel::kLow:
      return "low";
    case ThinkingLevel::kMedium:
      return "medium";
    case ThinkingLevel::kHigh:
      return "high";
    case ThinkingLevel::kXHigh:
      return "xhigh";
  }
  return "off";
}

const char* QueueModeId(QueueMode mode) {
  switch (mode) {
    case QueueMode::kOneAtATime:
      return "one-at-a-time";
    case QueueMode::kAll:
      return "all";
  }
  return "one-at-a-time";
}

std::optional<QueueMode> ParseQueueModeId(const std::string& id) {
  if (id == "one-at-a-time") return QueueMode::kOneAtATime;
  if (id == "all") return QueueMode::kAll;
  return std::nullopt;
}

const char* InterruptModeId(InterruptMode mode) {
  switch (mode) {
    case InterruptMode::kWait:
      return "wait";
    case InterruptMode::kImmediate:
      return "immediate";
  }
  return "wait";
}

std::optional<InterruptMode> ParseInterruptModeId(const std::string& id) {
  if (id == "wait") return InterruptMode::kWait;
  if (id == "immediate") return InterruptMode::kImmediate;
  return std::nullopt;
}

AgentView ViewOf(const AgentConfig& agent) {
  AgentView v;
  v.name = agent.name;
  v.images = agent.model.provider && agent.model.provider->SupportsImages();
  v.commands = agent.commands;
  v.provider_error = agent.provider_error;
  v.models = agent.models;
  if (v.models.empty() && !agent.model.provider_name.empty())
    v.models.push_back({agent.model.provider_name, agent.model.model_id, agent.model.model_id});
  v.mcp_servers = agent.mcp_servers;
  v.mcp = agent.mcp;
  return v;
}

namespace {
WorkerPool* DefaultPool() {
  // Never destroyed: a process-wide pool must not wait for work at static destruction.
  static auto* pool = new WorkerPool();
  return pool;
}
}  // namespace

// The state of one prompt, owned by the worker.
struct Session::Turn {
  CancelToken cancel;
  int step = 0;
  TurnResult result;
  std::vector<Message> added;         // messages this prompt added, for agent_end
  std::vector<Message> tool_results;  // of the current step, for turn_end
  bool ends_turn = false;             // a tool (ask) ended the turn
  int todo_reminders = 0;             // reminders of open todos so far
  std::string question;
  bool overflow_compacted = false;  // compacted once after a context overflow
  bool threshold_failed = false;    // an automatic compaction failed: not again this prompt
};

// One streamed model message and how its stream ended.
struct Session::Streamed {
  Message message;
  std::optional<Error> error;  // the stream failed (not by cancellation)
  CancelCause aborted = CancelCause::kNone;
  std::optional<StreamInterrupt> interrupt;  // set when a watcher or Interrupt() stopped it
};

// A tool call as it runs: what the editor was shown and the context it runs in.
struct Session::CallRun {
  event::ToolCall shown;
  std::shared_ptr<Tool> tool;
  ToolContext ctx;
  ToolOutput out;
};

Result<std::shared_ptr<Session>> Session::Create(std::shared_ptr<const AgentConfig> agent,
                                                 SessionOptions options) {
  std::vector<Entry> seed = std::move(options.seed);
  std::string seed_leaf = std::move(options.seed_leaf);
  std::shared_ptr<Session> s(new Session(std::move(agent), std::move(options)));
  if (!seed.empty()) {
    // The file's leaf is its last entry; a leaf chosen elsewhere is a branch, recorded as one.
    const std::string last = seed.back().id;
    Status st = s->history_.Seed(std::move(seed), last, &s->load_warnings_);
    if (!st.ok()) return st.error();
    for (const std::string& w : s->load_warnings_)
      log::Warn("session " + s->options_.session_file + ": " + w);
    if (!seed_leaf.empty() && seed_leaf != last) {
      std::lock_guard<std::mutex> lock(s->mu_);
      st = s->BranchLocked(seed_leaf);  // restores the branch's state too
      if (!st.ok()) return st.error();
    } else {
      s->RestoreFromBranch();
    }
    s->CloseInterruptedCalls();
  }
  if (s->agent_->rules) {
    // The project's rules are read now, once: a session sees the rules of when it opened.
    rules::RuleSet set = rules::LoadSessionRules(*s->agent_->rules, s->options_.cwd);
    // The agent's own warnings were logged when it was built.
    for (size_t i = s->agent_->rules->warnings.size(); i < set.warnings.size(); ++i)
      log::Warn("stream rules: " + set.warnings[i]);
    if (!set.rules.empty()) {
      s->rules_ = std::make_unique<rules::Controller>(std::move(set), s->options_.cwd,
                                                      s->agent_->rules->home);
      // `once` outlives a restart: rules injected on this branch stay injected.
      for (const Entry* e : s->history_.Branch())
        if (e->kind == EntryKind::kTtsrInjection) s->rules_->RestoreInjected(e->rules);
    }
  }
  return s;
}

// A process killed while tools ran leaves an assistant message whose calls have no results; a
// model request with such a history is refused by every provider. Each missing result is added
// (and recorded) as a failed call, as a cancelled call would have ended.
void Session::CloseInterruptedCalls() {
  const auto& msgs = history_.messages();
  size_t last = msgs.size();
  for (size_t i = msgs.size(); i-- > 0;)
    if (msgs[i].role == Role::kAssistant) {
      last = i;
      break;
    }
  if (last == msgs.size()) return;
  std::vector<const ContentBlock*> missing;
  for (const auto& b : msgs[last].content) {
    if (b.type != BlockType::kToolCall) continue;
    bool answered = false;
    for (size_t j = last + 1; j < msgs.size(); ++j)
      answered = answered || (msgs[j].role == Role::kToolResult && msgs[j].tool_call_id == b.id);
    if (!answered) missing.push_back(&b);
  }
  std::vector<Message> results;
  for (const ContentBlock* call : missing) {
    Message tr;
    tr.role = Role::kToolResult;
    tr.tool_call_id = call->id;
    tr.tool_name = call->name;
    tr.is_error = true;
    tr.content.push_back(
        ContentBlock::Text("Interrupted: lousho stopped before this tool call finished."));
    tr.tool.title = call->name;
    tr.tool.args = call->arguments;
    tr.timestamp_ms = NowMs();
    results.push_back(std::move(tr));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (Message& m : results) {
    Entry e;
    e.kind = EntryKind::kMessage;
    e.timestamp_ms = m.timestamp_ms;
    e.message = std::move(m);
    AppendEntryLocked(std::move(e));
  }
}

// What the branch recorded besides messages comes back with it: the last mode, plan, todo phases
// and name on the branch. A mode, plan or todo list the branch never set is the agent's default,
// not what the branch left behind had; the name is the session's and stays unless the branch
// names it.
void Session::RestoreFromBranch() {
  mode_ = agent_->default_mode;
  plan_.clear();
  todos_.clear();
  for (const Entry* e : history_.Branch()) {
    switch (e->kind) {
      case EntryKind::kModeChange:
        if (auto mode = ParsePermissionMode(e->mode)) mode_ = *mode;
        break;
      case EntryKind::kSessionInfo:
        name_ = e->name;
        break;
      case EntryKind::kCustom:
        if (e->custom_type == kPlanEntryType) {
          plan_.clear();
          for (const auto& p : e->data) {
            PlanEntry pe;
            pe.content = StringOr(p, "content");
            pe.priority = StringOr(p, "priority", "medium");
            pe.status = StringOr(p, "status", "pending");
            plan_.push_back(std::move(pe));
          }
        } else if (e->custom_type == kTodoPhasesEntryType) {
          todos_ = TodoPhasesFromJson(e->data);
        }
        break;
      case EntryKind::kMessage:
      case EntryKind::kModelChange:
      case EntryKind::kThinkingChange:
      case EntryKind::kLabel:
      case EntryKind::kCompaction:
      case EntryKind::kBranchSummary:
      case EntryKind::kTtsrInjection:
        break;
    }
  }
  RestoreModel();
}

// A session continues with the model and thinking level last chosen on its branch; a branch that
// chose none has the agent's, as the same branch read back from the file would.
void Session::RestoreModel() {
  const Entry* model = nullptr;
  const Entry* thinking = nullptr;
  for (const Entry* e : history_.Branch()) {
    if (e->kind == EntryKind::kModelChange) model = e;
    if (e->kind == EntryKind::kThinkingChange) thinking = e;
  }
  ModelChoice chosen = agent_->model;
  auto is = [](const ModelChoice& m, const Entry* e) {
    return m.provider_name == e->provider && m.model_id == e->model_id;
  };
  if (model && is(model_, model)) {
    chosen = model_;  // already built
  } else if (model && !is(chosen, model)) {
    Result<ModelChoice> choice = MakeError(ErrorCode::kModelUnknown, "no model resolver");
    if (agent_->resolve_model) choice = agent_->resolve_model(model->provider, model->model_id);
    if (choice.ok()) {
      chosen = std::move(*choice);
    } else {
      log::Warn("session " + id() + ": cannot restore model " + model->provider + "/" +
                model->model_id + " (" + choice.error().message + "); using " +
                chosen.provider_name + "/" + chosen.model_id);
    }
  }
  chosen.thinking =
      thinking ? ParseThinkingLevel(thinking->thinking_level) : agent_->model.thinking;
  model_ = std::move(chosen);
}

Session::Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options)
    : agent_(std::move(agent)),
      options_(std::move(options)),
      strand_(Strand::Create(options_.pool ? options_.pool : DefaultPool())),
      policy_(agent_->permission_rules, options_.cwd),
      mode_(agent_->default_mode),
      model_(agent_->model),
      tools_(agent_->tools),
      history_(options_.recorder),
      auto_compaction_(agent_->compaction.auto_compact) {
  roots_.push_back(options_.cwd);
  for (const auto& r : options_.additional_roots) roots_.push_back(r);
  for (const auto& r : agent_->extra_roots) roots_.push_back(r);
}

Session::~Session() { CloseSources(); }

void Session::CloseSources() {
  std::vector<std::shared_ptr<ToolSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources.swap(sources_);
  }
  for (auto& s : sources) s->Close();
}

void Session::AddToolSource(std::shared_ptr<ToolSource> source) {
  std::vector<std::shared_ptr<Tool>> now = source->CurrentTools(CancelToken());
  std::lock_guard<std::mutex> lock(mu_);
  // A source may bring tens of thousands of tools: each name is looked up in an index, not in
  // the whole list. A tool replaces every tool of its name; the others join at the end.
  std::unordered_map<std::string, std::vector<size_t>> at;
  at.reserve(tools_.size() + now.size());
  for (size_t i = 0; i < tools_.size(); ++i) at[tools_[i]->name()].push_back(i);
  for (auto& tool : now) {
    std::string name = tool->name();
    source_tool_names_.push_back(name);
    std::vector<size_t>& same = at[std::move(name)];
    for (size_t i : same) tools_[i] = tool;
    if (same.empty()) {
      same.push_back(tools_.size());
      tools_.push_back(std::move(tool));
    }
  }
  sources_.push_back(std::move(source));
}

void Session::RefreshSourceTools(const CancelToken& cancel) {
  std::vector<std::shared_ptr<ToolSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = sources_;
  }
  if (sources.empty()) return;
  std::vector<std::shared_ptr<Tool>> now;
  for (auto& s : sources) {
    auto tools = s->CurrentTools(cancel);
    now.insert(now.end(), tools.begin(), tools.end());
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Looked up in a set: the sources' tools may be tens of thousands.
  const std::unordered_set<std::string> from_source(source_tool_names_.begin(),
                                                    source_tool_names_.end());
  std::erase_if(tools_,
                [&](const std::shared_ptr<Tool>& t) { return from_source.count(t->name()); });
  source_tool_names_.clear();
  for (auto& t : now) {
    source_tool_names_.push_back(t->name());
    tools_.push_back(std::move(t));
  }
}

Status Session::Post(std::function<void()> task) {
  return strand_->Post([self = shared_from_this(), task = std::move(task)] {
    task();
    self->FlushNotices();
    self->TellSaving();
  });
}

Status Session::Prompt(std::vector<ContentBlock> content,
                       std::function<void(Result<TurnResult>)> done) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return MakeError(ErrorCode::kSessionClosed, "the session is closing");
    if (busy_)
      return MakeError(ErrorCode::kSessionBusy, "a prompt is already running in this session");
    busy_ = true;
    accepting_ = true;
    cancel_ = std::make_shared<CancelSource>();
    source = cancel_;
  }
  Status st = Post([this, source, content = std::move(content), done = std::move(done)]() mutable {
    auto call = ParseBuiltinCall(content);
    Result<TurnResult> result =
        call ? RunCommand(*call, source->token()) : RunTurn(std::move(content), source->token());
    if (options_.recorder) options_.recorder->Flush();  // durable at every turn end
    TellSaving();                                       // before the prompt's answer
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      accepting_ = false;
      cancel_.reset();
    }
    done(std::move(result));
  });
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
    accepting_ = false;
    cancel_.reset();
  }
  return st;
}

void Session::Cancel(CancelCause cause) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    source = cancel_;
  }
  // Outside the lock: cancellation callbacks must never run under it.
  if (source) source->Cancel(cause);
}

void Session::Interrupt(StreamInterrupt interrupt) {
  std::shared_ptr<CancelSource> source;
  const CancelCause cause = interrupt.cause;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stream_cancel_ || stream_cancel_->cancelled()) return;
    source = stream_cancel_;
    interrupt_ = std::move(interrupt);
  }
  source->Cancel(cause);  // outside the lock: callbacks never run under it
}

void Session::Close(std::function<void()> done, CancelCause cause) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  Cancel(cause);
  Status st = Post([this, done = std::move(done)] {
    CloseSources();
    if (options_.recorder) options_.recorder->Close();  // the file's lock goes with the session
    if (done) done();
  });
  if (!st.ok()) log::Error("session " + id() + ": cannot finish closing: " + st.error().message);
}

void Session::WaitIdle() { strand_->WaitIdle(); }

bool Session::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

PermissionMode Session::mode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mode_;
}

Status Session::SetMode(PermissionMode mode, std::function<void()> done) {
  return Notice(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    if (mode != mode_) {
      Entry e;
      e.kind = EntryKind::kModeChange;
      e.mode = PermissionModeId(mode);
      entries->push_back(std::move(e));
    }
    mode_ = mode;
    return event::ModeChanged{PermissionModeId(mode)};
  });
}

Status Session::Notice(std::function<void()> done,
                       const std::function<std::optional<Event>(std::vector<Entry>*)>& change) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (notices_.size() >= kMaxPendingNotices)
      return MakeError(ErrorCode::kSessionBusy,
                       "too many changes are waiting for the session's running turn");
    std::vector<Entry> entries;
    std::optional<Event> e = change(&entries);
    if (!entries.empty()) {
      // The entries join the history on the worker, which alone writes it.
      done = [this, entries = std::move(entries), done = std::move(done)]() mutable {
        {
          std::lock_guard<std::mutex> lock(mu_);
          for (Entry& entry : entries) AppendEntryLocked(std::move(entry));
        }
        if (done) done();
      };
    }
    notices_.emplace_back(std::move(e), std::move(done));
    has_notices_.store(true, std::memory_order_release);
  }
  // From the worker (the switch_mode tool, a command) the notice goes out with the next event;
  // from elsewhere a task flushes it, after the running turn's current step if one is running.
  if (!strand_->InTask()) {
    Status st = Post([] {});
    if (!st.ok()) FlushNotices();  // no thread to be had: better out of place than lost
  }
  return Status::Ok();
}

void Session::FlushNotices() {
  if (!has_notices_.load(std::memory_order_acquire)) return;
  std::vector<std::pair<std::optional<Event>, std::function<void()>>> notices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notices.swap(notices_);
    has_notices_.store(false, std::memory_order_relaxed);
  }
  for (auto& [e, done] : notices) {
    if (e && options_.sink) options_.sink(*e);
    if (done) done();
  }
}

bool Session::Enqueue(QueueKind kind, std::vector<ContentBlock> content) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!busy_ || !accepting_) return false;
  switch (kind) {
    case QueueKind::kSteering:
      steering_.push_back(std::move(content));
      break;
    case QueueKind::kFollowUp:
      follow_up_.push_back(std::move(content));
      break;
  }
  return true;
}

std::vector<std::vector<ContentBlock>> Session::ClearQueues() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<ContentBlock>> out = std::move(steering_);
  for (auto& m : follow_up_) out.push_back(std::move(m));
  steering_.clear();
  follow_up_.clear();
  return out;
}

size_t Session::QueuedCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steering_.size() + follow_up_.size();
}

QueueSettings Session::queue_settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_;
}

void Session::SetQueueSettings(QueueSettings settings) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_ = settings;
}

void Session::AddContext(Message message) {
  if (message.timestamp_ms == 0) message.timestamp_ms = NowMs();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!busy_) {
      // Nothing runs: it joins the history now, as a branch move does.
      AppendMessageLocked(message);
      context_recorded_.push_back(std::move(message));
    } else {
      context_.push_back(std::move(message));
    }
  }
  if (options_.recorder) options_.recorder->Flush();
  // What a running prompt holds back joins once it ends (the worker takes tasks in order); without
  // a worker the next prompt records it first.
  Status st = Post([this] { RecordContext(); });
  if (!st.ok())
    log::Warn("session " + id() + ": context kept for the next prompt: " + st.error().message);
}

void Session::RecordContext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (context_.empty()) return;
    for (Message& m : context_) {
      AppendMessageLocked(m);
      context_recorded_.push_back(std::move(m));
    }
    context_.clear();
  }
  if (options_.recorder) options_.recorder->Flush();
}

void Session::SetAutoRetry(bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  auto_retry_ = enabled;
}

bool Session::auto_retry() const {
  std::lock_guard<std::mutex> lock(mu_);
  return auto_retry_;
}

void Session::AbortRetry() {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    source = retry_abort_;
  }
  if (source) source->Cancel();  // outside the lock: callbacks never run under it
}

ModelChoice Session::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

namespace {
event::ModelChanged ModelEvent(const ModelChoice& m) {
  return event::ModelChanged{m.provider_name, m.model_id, ThinkingLevelId(m.thinking)};
}

Entry ThinkingEntry(ThinkingLevel level) {
  Entry e;
  e.kind = EntryKind::kThinkingChange;
  e.thinking_level = ThinkingLevelId(level);
  return e;
}
}  // namespace

Status Session::SetModel(ModelChoice model, std::function<void()> done) {
  if (!model.provider) return MakeError(ErrorCode::kModelUnknown, "the model has no provider");
  return Notice(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    Entry e;
    e.kind = EntryKind::kModelChange;
    e.provider = model.provider_name;
    e.model_id = model.model_id;
    entries->push_back(std::move(e));
    if (model.thinking != model_.thinking) entries->push_back(ThinkingEntry(model.thinking));
    model_ = std::move(model);
    return ModelEvent(model_);
  });
}

Status Session::SetThinking(ThinkingLevel level, std::function<void()> done) {
  return Notice(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    entries->push_back(ThinkingEntry(level));
    model_.thinking = level;
    return ModelEvent(model_);
  });
}

Status Session::SelectModel(const std::string& id, std::function<void()> done) {
  const size_t slash = id.find('/');
  bool offered = false;
  for (const ModelOption& m : agent_->models) offered = offered || m.id() == id;
  const ModelChoice current = model();
  if (id == current.provider_name + "/" + current.model_id) offered = true;
  if (!offered || slash == std::string::npos)
    return MakeError(ErrorCode::kModelUnknown, "model '" + id + "' is not offered");
  if (!agent_->resolve_model)
    return MakeError(ErrorCode::kModelUnknown, "this agent cannot switch models");
  Result<ModelChoice> choice = agent_->resolve_model(id.substr(0, slash), id.substr(slash + 1));
  if (!choice.ok())
    return MakeError(ErrorCode::kModelUnknown,
                     "cannot use model '" + id + "': " + choice.error().message);
  ModelChoice chosen = std::move(*choice);
  return Notice(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    Entry e;
    e.kind = EntryKind::kModelChange;
    e.provider = chosen.provider_name;
    e.model_id = chosen.model_id;
    entries->push_back(std::move(e));
    chosen.thinking = model_.thinking;  // the thinking level is its own choice
    model_ = std::move(chosen);
    return ModelEvent(model_);
  });
}

void Session::SetAutoCompaction(bool enabled) { auto_compaction_.store(enabled); }

bool Session::auto_compaction() const { return auto_compaction_.load(); }

bool Session::SupportsImages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_.provider && model_.provider->SupportsImages();
}

void Session::AddTool(std::shared_ptr<Tool> tool) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : tools_)
    if (t->name() == tool->name()) {
      t = std::move(tool);
      return;
    }
  tools_.push_back(std::move(tool));
}

bool Session::RemoveTool(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tools_.begin(); it != tools_.end(); ++it)
    if ((*it)->name() == name) {
      tools_.erase(it);
      return true;
    }
  return false;
}

const rules::RuleSet* Session::stream_rules() const { return rules_ ? &rules_->set() : nullptr; }

std::vector<std::shared_ptr<Tool>> Session::tools() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tools_;
}

std::shared_ptr<Tool> Session::FindTool(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& t : tools_)
    if (t->name() == name) return t;
  return nullptr;
}

std::vector<Message> Session::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.messages();
}

std::vector<Entry> Session::Entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.entries();
}

std::string Session::Leaf() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.leaf();
}

Usage Session::TotalUsage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_usage_;
}

void Session::AppendMessage(Message m, Turn* t) {
  if (m.timestamp_ms == 0) m.timestamp_ms = NowMs();
  if (t) t->added.push_back(m);
  std::lock_guard<std::mutex> lock(mu_);
  AppendMessageLocked(std::move(m));
}

void Session::AppendMessageLocked(Message m) {
  if (m.timestamp_ms == 0) m.timestamp_ms = NowMs();
  Entry e;
  e.kind = EntryKind::kMessage;
  e.timestamp_ms = m.timestamp_ms;
  e.message = std::move(m);
  AppendEntryLocked(std::move(e));
}

// History::Append records every entry it stores (the session's recorder is the history's), so an
// entry can reach neither without the other.
const Entry& Session::AppendEntryLocked(Entry e) {
  const Entry& stored = history_.Append(std::move(e));
  if (stored.kind == EntryKind::kSessionInfo) name_ = stored.name;
  return stored;
}

Status Session::BranchLocked(const std::string& entry_id) {
  auto moved = history_.BranchTo(entry_id);  // records the branch summary it appends
  if (!moved.ok()) return moved.error();
  RestoreFromBranch();
  return Status::Ok();
}

void Session::Emit(const Event& e) {
  FlushNotices();
  TellSaving();
  if (options_.sink) options_.sink(e);
}

void Session::TellSaving() {
  if (!options_.recorder || !options_.recorder->HasReports()) return;
  for (SaveReport& r : options_.recorder->TakeReports()) {
    if (options_.sink)
      options_.sink(
          event::Warning{"session-file", std::move(r.message), std::move(r.title), r.resumed});
  }
}

void Session::EmitMessage(int turn, const Message& m) {
  Emit(event::MessageStart{turn, &m});
  Emit(event::MessageEnd{turn, &m});
}

void Session::EmitNote(int turn, const std::string& text) {
  Message note;
  note.role = Role::kAssistant;
  note.timestamp_ms = NowMs();
  Emit(event::MessageStart{turn, &note});
  note.content.push_back(ContentBlock::Text(text));
  StreamDelta d;
  d.kind = DeltaKind::kText;
  d.text = text;
  Emit(event::MessageUpdate{turn, &d, &note});
  Emit(event::MessageEnd{turn, &note});
}

std::vector<ContentBlock> Session::ExpandCommand(std::vector<ContentBlock> content) const {
  if (content.empty() || content[0].type != BlockType::kText) return content;
  const std::string& text = content[0].text;
  if (text.size() < 2 || text[0] != '/') return content;
  size_t end = text.find_first_of(" \t\n", 1);
  std::string name = text.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  for (const auto& cmd : agent_->commands) {
    if (cmd.name != name) continue;
    std::string args = end == std::string::npos ? "" : text.substr(end + 1);
    std::string prompt = cmd.prompt;
    const std::string key = "{{args}}";
    size_t pos = prompt.find(key);
    if (pos != std::string::npos) {
      prompt.replace(pos, key.size(), args);
    } else if (!args.empty()) {
      prompt += "\n\n" + args;
    }
    content[0].text = prompt;
    break;
  }
  return content;
}

std::string Session::SystemPrompt() const {
  std::string s = agent_->instructions;
  if (!s.empty() && s.back() != '\n') s += "\n";
  s += "\nWorking directory: " + roots_[0].string() + "\n";
  auto tools = this->tools();
  if (!tools.empty()) {
    s += "Tools available: ";
    for (size_t i = 0; i < tools.size(); ++i) s += (i ? ", " : "") + tools[i]->name();
    s += "\n";
  }
  return s;
}

// --- names, branches, stats (the legacy RPC door's operations) ---

std::string PromptGist(const std::string& text) {
  std::string line;
  bool space = false;
  for (char c : text) {
    if (c == '\n' && !line.empty()) break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  // Count characters, not bytes, and never cut a UTF-8 sequence.
  size_t chars = 0, cut = std::string::npos;
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (chars == kMaxGistChars) {
      cut = i;
      break;
    }
    ++chars;
  }
  if (cut == std::string::npos) return line;
  size_t at = line.rfind(' ', cut);
  if (at == std::string::npos || at < cut / 2) at = cut;
  return line.substr(0, at) + "\u2026";
}

Json::Value TodoPhasesToJson(const std::vector<TodoPhase>& phases) {
  Json::Value out(Json::arrayValue);
  for (const auto& p : phases) {
    Json::Value phase(Json::objectValue);
    if (!p.id.empty()) phase["id"] = p.id;
    phase["name"] = p.name;
    Json::Value tasks(Json::arrayValue);
    for (const auto& t : p.tasks) {
      Json::Value task(Json::objectValue);
      if (!t.id.empty()) task["id"] = t.id;
      task["content"] = t.content;
      task["status"] = t.status;
      if (!t.blocker.empty()) task["blocker"] = t.blocker;
      tasks.append(task);
    }
    phase["tasks"] = tasks;
    out.append(phase);
  }
  return out;
}

std::vector<TodoPhase> TodoPhasesFromJson(const Json::Value& v) {
  std::vector<TodoPhase> out;
  if (!v.isArray()) return out;
  for (const auto& p : v) {
    TodoPhase phase;
    phase.id = StringOr(p, "id");
    phase.name = StringOr(p, "name");
    const Json::Value& tasks = MemberOrNull(p, "tasks");
    if (tasks.isArray())
      for (const auto& t : tasks) {
        TodoTask task;
        task.id = StringOr(t, "id");
        task.content = StringOr(t, "content");
        task.status = StringOr(t, "status", "pending");
        task.blocker = StringOr(t, "blocker");
        phase.tasks.push_back(std::move(task));
      }
    out.push_back(std::move(phase));
  }
  return out;
}

std::string Session::Name() const {
  std::lock_guard<std::mutex> lock(mu_);
  return name_;
}

Status Session::SetName(const std::string& name) {
  if (name.find_first_not_of(" \t\r\n") == std::string::npos)
    return MakeError(ErrorCode::kInvalidParams, "Session name cannot be empty");
  return Notice(nullptr, [&](std::vector<Entry>* entries) -> Event {
    name_ = name;  // at once, like a mode; the entry joins the history on the worker
    Entry entry;
    entry.kind = EntryKind::kSessionInfo;
    entry.name = name;
    entries->push_back(std::move(entry));
    return event::SessionInfoChanged{name};
  });
}

Status Session::SetLeaf(const std::string& entry_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (busy_) return MakeError(ErrorCode::kSessionBusy, "a prompt is running in this session");
  return BranchLocked(entry_id);
}

Result<std::string> Session::BranchFrom(const std::string& entry_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (busy_) return MakeError(ErrorCode::kSessionBusy, "a prompt is running in this session");
  const Entry* e = history_.Find(entry_id);
  if (!e || e->kind != EntryKind::kMessage || e->message.role != Role::kUser ||
      e->message.is_custom())
    return MakeError(ErrorCode::kHistoryInvalid, "no user message with id '" + entry_id + "'");
  std::string text = e->message.TextContent();
  Status st = BranchLocked(e->parent_id);
  if (!st.ok()) return st.error();
  return text;
}

std::vector<BranchPoint> Session::UserMessages() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<BranchPoint> out;
  for (const Entry* e : history_.Branch())
    if (e->kind == EntryKind::kMessage && e->message.role == Role::kUser && !e->message.is_custom())
      out.push_back({e->id, e->message.TextContent()});
  return out;
}

std::optional<std::string> Session::LastAssistantText() const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto& msgs = history_.messages();
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
    if (it->role == Role::kAssistant) return it->TextContent();
  return std::nullopt;
}

SessionStats Session::Stats() const {
  SessionStats st;
  st.id = options_.id;
  st.file = options_.session_file;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Message& m : history_.messages()) {
    ++st.total_messages;
    switch (m.role) {
      case Role::kUser:
        // A hidden message (a summary, a stream rule's reminder) is not the user's.
        if (!m.is_custom()) ++st.user_messages;
        break;
      case Role::kAssistant:
        ++st.assistant_messages;
        for (const auto& b : m.content)
          if (b.type == BlockType::kToolCall) ++st.tool_calls;
        break;
      case Role::kToolResult:
        ++st.tool_results;
        break;
    }
  }
  // Tokens were spent on abandoned branches too.
  for (const Entry& e : history_.entries())
    if (e.kind == EntryKind::kMessage && e.message.role == Role::kAssistant)
      st.tokens.Add(e.message.usage);
  return st;
}

Result<fs::path> Session::ExportHtml(const fs::path& path) const {
  fs::path out = path.empty() ? fs::path("lousho-" + options_.id + ".html") : path;
  if (out.is_relative()) out = options_.cwd / out;
  std::vector<Entry> branch = BranchEntries();
  HtmlExportInfo info;
  info.title = Name();
  info.session_id = options_.id;
  info.agent = agent_->name;
  info.cwd = options_.cwd.string();
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);  // a failure shows in the write's error
  // A link the user pointed at the export keeps pointing at it.
  Status st = WriteDiskFile(out, SessionHtml(info, branch), /*follow_symlink=*/true);
  if (!st.ok()) return st.error();
  return out;
}

void Session::VisitBranch(const std::function<void(const std::vector<const Entry*>&)>& fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  fn(history_.Branch());
}

std::vector<Entry> Session::BranchEntries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry> out;
  for (const Entry* e : history_.Branch()) out.push_back(*e);
  return out;
}

// --- the turn ---

Result<TurnResult> Session::RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel) {
  Turn t;
  t.cancel = cancel;
  Emit(event::AgentStart{});
  StartPrompt(std::move(content), t);
  for (;;) {
    if (auto stop = BeforeRequest(t)) return Finish(t, *stop);
    ++t.step;
    t.tool_results.clear();
    Emit(event::TurnStart{t.step});
    Streamed s = StreamMessage(t);
    const Message* said = s.message.content.empty() ? nullptr : &s.message;
    if (s.error) {
      EmitTurnEnd(t, said);
      if (auto end = FailedRequest(*s.error, said, t)) return std::move(*end);
      continue;  // compacted after an overflow: the request goes again
    }
    if (s.interrupt) {
      // A stream rule or a steering message: what it brings joins the history, and the model
      // is asked again within the same prompt (unless the user cancels in the pause).
      EmitTurnEnd(t, said);
      if (!ApplyInterrupt(*s.interrupt, t)) return Finish(t, TurnStop::kCancelled);
      continue;
    }
    if (s.aborted != CancelCause::kNone) {
      EmitTurnEnd(t, said);
      return Finish(t, TurnStop::kCancelled);
    }
    const bool carried_on = RunToolCalls(s.message, t);
    EmitTurnEnd(t, said);
    if (!carried_on) return Finish(t, TurnStop::kCancelled);
    if (auto stop = AfterTools(s.message, t)) return Finish(t, *stop);
  }
}

// The messages a prompt starts with: the context added since the last prompt (already in the
// history), then the user's (a command expanded).
void Session::StartPrompt(std::vector<ContentBlock> content, Turn& t) {
  RecordContext();  // what no worker could record before
  std::vector<Message> context;
  {
    std::lock_guard<std::mutex> lock(mu_);
    context.swap(context_recorded_);
  }
  for (Message& m : context) {
    t.added.push_back(std::move(m));
    EmitMessage(0, t.added.back());
  }
  Message user;
  user.role = Role::kUser;
  user.content = ExpandCommand(std::move(content));
  const std::string gist =
      options_.auto_title && Name().empty() ? PromptGist(user.TextContent()) : "";
  AppendMessage(user, &t);
  EmitMessage(0, t.added.back());
  // The first prompt names the session until someone names it.
  if (!gist.empty()) (void)SetName(gist);
}

// A stream rule or a steering message stopped the stream: what it brings joins the history, and
// the model is asked again within the same prompt, unless the user cancels in the pause (false).
bool Session::ApplyInterrupt(StreamInterrupt& interrupt, Turn& t) {
  const bool cancelled = interrupt.delay_ms > 0 && t.cancel.WaitFor(interrupt.delay_ms);
  for (Message& m : interrupt.inject) {
    AppendMessage(std::move(m), &t);
    if (!interrupt.silent) EmitMessage(t.step, t.added.back());
  }
  if (!interrupt.ttsr_rules.empty()) RecordTtsr(interrupt.ttsr_rules);
  return !cancelled && !t.cancel.cancelled();
}

// After a model request and its tool calls: how the prompt ends, or nullopt to ask again.
std::optional<TurnStop> Session::AfterTools(const Message& assistant, Turn& t) {
  // Prose rules that matched without interrupting arrive now; the model answers them even
  // when it meant to stop.
  const bool followed = rules_ && InjectFollowUps(t);
  std::optional<TurnStop> stop = DecideNext(assistant, t);
  if (followed && stop && *stop == TurnStop::kEndTurn && !t.ends_turn) stop.reset();
  // Messages the user queued meanwhile: steering at the end of every model request, follow-ups
  // when the prompt would end, then a reminder of open todos; each asks the model again.
  if (!t.cancel.cancelled() && (!stop || *stop == TurnStop::kEndTurn)) {
    if (TakeQueued(t, /*ending=*/stop.has_value())) return std::nullopt;
    if (stop && RemindTodos(t)) return std::nullopt;
    if (stop && !CloseQueue() && TakeQueued(t, /*ending=*/true)) return std::nullopt;
  }
  return stop;
}

Result<TurnResult> Session::RunCommand(const CommandCall& call, const CancelToken& cancel) {
  Turn t;
  t.cancel = cancel;
  Emit(event::AgentStart{});
  {
    // A command asks no model for a reply: messages sent meanwhile start a prompt of their own.
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = false;
  }
  const std::string name = call.command->name;
  if (name == "compact") {
    (void)RunCompaction("manual", call.args, t.cancel, false, &t);
    // A failure is shown by the compaction's end event; the prompt itself went as asked.
    return Finish(t, t.cancel.cancelled() ? TurnStop::kCancelled : TurnStop::kEndTurn);
  }
  if (name == "model") {
    const ModelChoice now = model();
    std::string offered;
    for (const ModelOption& m : agent_->models) offered += "\n- " + m.id();
    if (call.args.empty()) {
      EmitNote(0, "Current model: " + now.provider_name + "/" + now.model_id +
                      (offered.empty() ? "" : "\nAvailable:" + offered));
    } else if (Status st = SelectModel(call.args); !st.ok()) {
      EmitNote(0, st.error().message + (offered.empty() ? "" : "\nAvailable:" + offered));
    } else {
      EmitNote(0, "Model: " + call.args);
    }
    return Finish(t, TurnStop::kEndTurn);
  }
  if (name == "name") {
    if (call.args.empty()) {
      const std::string current = Name();
      EmitNote(0, current.empty() ? "This session has no name yet; /name <title> gives it one."
                                  : "This session is named \"" + current + "\".");
    } else if (Status st = SetName(call.args); !st.ok()) {
      EmitNote(0, "/name: " + st.error().message);
    } else {
      EmitNote(0, "Session named \"" + call.args + "\".");
    }
    return Finish(t, TurnStop::kEndTurn);
  }
  if (name == "export") {
    auto path = ExportHtml(call.args);
    EmitNote(0, path.ok() ? "Exported this session to " + path->string()
                          : "/export: " + path.error().message);
    return Finish(t, TurnStop::kEndTurn);
  }
  EmitNote(0, "/" + name + " is not available here.");
  return Finish(t, TurnStop::kEndTurn);
}

std::optional<TurnStop> Session::BeforeRequest(Turn& t) {
  if (auto stop = LimitReached(t)) return stop;
  MaybeCompact(t);
  return LimitReached(t);  // a compaction may have been cancelled
}

std::optional<Result<TurnResult>> Session::FailedRequest(const Error& error, const Message* said,
                                                         Turn& t) {
  if (CompactAfterOverflow(error, said, t)) return std::nullopt;
  if (t.cancel.cancelled()) return Finish(t, TurnStop::kCancelled);
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = false;
  }
  Emit(event::AgentEnd{&t.added});
  return Result<TurnResult>(error);
}

bool Session::CompactAfterOverflow(const Error& error, const Message* said, Turn& t) {
  if (error.code != ErrorCode::kProviderContextOverflow || t.overflow_compacted || said != nullptr)
    return false;
  // The request did not fit: compact once and send it again (the prompt goes on, so it still
  // takes queued messages).
  t.overflow_compacted = true;
  return RunCompaction("overflow", "", t.cancel, /*will_retry=*/true, &t).ok();
}

void Session::MaybeCompact(Turn& t) {
  if (t.threshold_failed || !auto_compaction()) return;
  const ModelChoice m = model();
  if (!m.provider) return;
  long long tokens = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tokens = ContextTokens(history_.messages(), history_.context_start());
  }
  CompactionSettings settings = agent_->compaction;
  settings.auto_compact = true;  // the session's own switch (SetAutoCompaction) was checked
  if (!ShouldCompact(settings, tokens, m.provider->ContextWindow())) return;
  // A failure leaves the history as it was: the request may still fit, so the turn goes on.
  if (!RunCompaction("threshold", "", t.cancel, false, &t).ok()) t.threshold_failed = true;
}

Result<CompactionResult> Session::RunCompaction(const std::string& reason,
                                                const std::string& instructions,
                                                const CancelToken& cancel, bool will_retry,
                                                Turn* t) {
  const ModelChoice model = this->model();
  event::AutoCompactionStart start;
  start.id = "compaction-" + std::to_string(++compactions_);
  start.reason = reason;
  Result<CompactionPlan> plan = MakeError(ErrorCode::kCompaction, "not planned");
  {
    std::lock_guard<std::mutex> lock(mu_);
    start.tokens_before = ContextTokens(history_.messages(), history_.context_start());
    plan = PlanCompaction(history_, agent_->compaction.keep_recent_tokens);
  }
  Emit(start);
  event::AutoCompactionEnd end;
  end.id = start.id;
  end.reason = reason;
  end.tokens_before = start.tokens_before;
  auto fail = [&](Error e, bool aborted) -> Error {
    end.aborted = aborted;
    if (!aborted) end.error = e.message;
    Emit(end);
    return e;
  };
  if (!plan.ok()) return fail(plan.error(), false);
  if (!model.provider) return fail(MakeError(ErrorCode::kModelUnknown, "no model to ask"), false);

  const std::vector<Message> prompt{SummaryPrompt(plan->to_summarize, instructions)};
  ModelRequest req;
  req.model = model.model_id;
  req.system = SummarySystemPrompt();
  req.messages = prompt;
  req.max_output_tokens = static_cast<int>(agent_->limits.max_output_tokens);
  Result<ModelResponse> resp = model.provider->Stream(
      req, [&cancel](const StreamDelta&) { return !cancel.cancelled(); }, cancel, RetryHooks{});
  if (resp.ok()) {
    // The summary costs like any request: the prompt's (its limits count it), or the session's.
    if (t != nullptr) {
      t->result.usage.Add(resp->message.usage);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      total_usage_.Add(resp->message.usage);
    }
  }
  if (cancel.cancelled() || (resp.ok() && resp->message.stop_reason == StopReason::kCancelled))
    return fail(MakeError(ErrorCode::kCancelled, "the compaction was cancelled"), true);
  if (!resp.ok()) return fail(resp.error(), false);
  if (resp->message.stop_reason == StopReason::kError)
    return fail(MakeError(ErrorCode::kCompaction, resp->message.error_message), false);
  Result<std::string> summary = SummaryFromReply(resp->message);
  if (!summary.ok()) return fail(summary.error(), false);

  Entry e;
  e.kind = EntryKind::kCompaction;
  e.summary = *summary;
  e.first_kept_id = plan->first_kept_id;
  e.tokens_before = start.tokens_before;
  e.timestamp_ms = NowMs();
  CompactionResult result;
  result.summary = *summary;
  result.first_kept_id = plan->first_kept_id;
  result.tokens_before = start.tokens_before;
  result.tokens_after = EstimateTokens(CompactionSummaryMessage(e)) + plan->kept_tokens;
  e.data = Json::Value(Json::objectValue);
  e.data["reason"] = reason;
  e.data["tokensAfter"] = static_cast<Json::Int64>(result.tokens_after);
  {
    std::lock_guard<std::mutex> lock(mu_);
    AppendEntryLocked(std::move(e));
  }
  end.will_retry = will_retry;
  end.summary = result.summary;
  end.first_kept_id = result.first_kept_id;
  end.tokens_after = result.tokens_after;
  Emit(end);
  if (model.provider->ContextWindow() > 0) {
    // The editor's context meter drops now, not at the next reply (an estimate until then).
    event::UsageUpdate u;
    u.turn = t ? t->step : 0;
    u.context_used = result.tokens_after;
    u.context_size = model.provider->ContextWindow();
    {
      std::lock_guard<std::mutex> lock(mu_);
      u.session_cost = total_usage_.cost + (t ? t->result.usage.cost : 0);
    }
    Emit(u);
  }
  return result;
}

Status Session::Compact(std::string instructions,
                        std::function<void(Result<CompactionResult>)> done) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return MakeError(ErrorCode::kSessionClosed, "the session is closing");
    if (busy_)
      return MakeError(ErrorCode::kSessionBusy, "a prompt is already running in this session");
    busy_ = true;
    cancel_ = std::make_shared<CancelSource>();
    source = cancel_;
  }
  Status st = Post(
      [this, source, instructions = std::move(instructions), done = std::move(done)]() mutable {
        Result<CompactionResult> result =
            RunCompaction("manual", instructions, source->token(), false, nullptr);
        {
          std::lock_guard<std::mutex> lock(mu_);
          busy_ = false;
          cancel_.reset();
        }
        done(std::move(result));
      });
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
    cancel_.reset();
  }
  return st;
}

bool Session::TakeQueued(Turn& t, bool ending) {
  std::vector<std::vector<ContentBlock>> taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto take = [&](std::vector<std::vector<ContentBlock>>& q, QueueMode mode) {
      const size_t n = mode == QueueMode::kAll ? q.size() : std::min<size_t>(1, q.size());
      for (size_t i = 0; i < n; ++i) taken.push_back(std::move(q[i]));
      q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(n));
    };
    take(steering_, queue_.steering);
    if (taken.empty() && ending) take(follow_up_, queue_.follow_up);
  }
  for (auto& content : taken) {
    Message m;
    m.role = Role::kUser;
    m.content = std::move(content);
    AppendMessage(std::move(m), &t);
    EmitMessage(t.step, t.added.back());
  }
  return !taken.empty();
}

bool Session::CloseQueue() {
  // Checking for messages and closing happen under one lock, so none is left behind.
  std::lock_guard<std::mutex> lock(mu_);
  if (!steering_.empty() || !follow_up_.empty()) return false;
  accepting_ = false;
  return true;
}

bool Session::RemindTodos(Turn& t) {
  const TodoSettings& settings = options_.todos;
  std::vector<TodoTask> open;
  bool all_done = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t tasks = 0;
    for (const auto& phase : todos_)
      for (const auto& task : phase.tasks) {
        ++tasks;
        if (task.open()) open.push_back(task);
      }
    all_done = tasks > 0 && open.empty();
    if (all_done && settings.auto_clear) SetTodosLocked({});
  }
  if (all_done && settings.auto_clear) {
    Emit(event::TodoAutoClear{});
    return false;
  }
  if (!settings.reminders || open.empty() || t.todo_reminders >= settings.max_reminders)
    return false;
  ++t.todo_reminders;
  std::string text = "<system-reminder>\nThese todos are still open:\n";
  for (const auto& task : open) text += "- [" + task.status + "] " + task.content + "\n";
  text +=
      "Go on with them, or update the todo list if they are done or no longer needed.\n"
      "</system-reminder>";
  Emit(event::TodoReminder{open, t.todo_reminders, settings.max_reminders});
  AppendMessage(Message::Custom("todo-reminder", std::move(text), false), &t);
  EmitMessage(t.step, t.added.back());
  return true;
}

namespace {
Entry TodoPhasesEntry(const std::vector<TodoPhase>& phases) {
  Entry e;
  e.kind = EntryKind::kCustom;
  e.custom_type = kTodoPhasesEntryType;
  e.data = TodoPhasesToJson(phases);
  return e;
}
}  // namespace

void Session::SetTodos(std::vector<TodoPhase> phases) {
  // Like a mode change: set now, recorded on the worker (after the running turn's current step).
  Status st = Notice(nullptr, [&](std::vector<Entry>* entries) -> std::optional<Event> {
    entries->push_back(TodoPhasesEntry(phases));
    todos_ = std::move(phases);
    return std::nullopt;
  });
  if (!st.ok()) log::Warn("session " + id() + ": todos not recorded: " + st.error().message);
}

// On the worker only (it appends to the history).
void Session::SetTodosLocked(std::vector<TodoPhase> phases) {
  AppendEntryLocked(TodoPhasesEntry(phases));
  todos_ = std::move(phases);
}

std::vector<TodoPhase> Session::Todos() const {
  std::lock_guard<std::mutex> lock(mu_);
  return todos_;
}

bool Session::SteeringPending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.interrupt == InterruptMode::kImmediate && !steering_.empty();
}

std::optional<TurnStop> Session::LimitReached(const Turn& t) const {
  if (t.cancel.cancelled()) return TurnStop::kCancelled;
  if (t.step >= agent_->max_steps) return TurnStop::kMaxTurnRequests;
  if (agent_->limits.max_total_tokens > 0 &&
      t.result.usage.total() >= agent_->limits.max_total_tokens)
    return TurnStop::kMaxTokens;
  return std::nullopt;
}

Result<TurnResult> Session::Finish(Turn& t, TurnStop stop) {
  t.result.stop = stop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = false;
    total_usage_.Add(t.result.usage);
  }
  Emit(event::AgentEnd{&t.added});
  return t.result;
}

ModelRequest Session::BuildRequest(const ModelChoice& model) const {
  ModelRequest req;
  req.model = model.model_id;
  req.system = SystemPrompt();
  {
    std::lock_guard<std::mutex> lock(mu_);
    req.messages = history_.messages();
  }
  req.thinking = model.thinking;
  req.max_output_tokens = static_cast<int>(agent_->limits.max_output_tokens);
  const bool plan = mode() == PermissionMode::kPlan;
  for (const auto& tool : tools()) {
    if (plan && !tool->offered_in_plan_mode()) continue;
    req.tools.push_back(ToolSchema{tool->name(), tool->description(), tool->parameters()});
  }
  return req;
}

Session::Streamed Session::StreamMessage(Turn& t) {
  const ModelChoice model = this->model();
  RefreshSourceTools(t.cancel);
  const ModelRequest req = BuildRequest(model);
  const int step = t.step;

  // The stream has its own source, so a stream rule can stop it and the turn go on; the
  // prompt's cancellation reaches it with its cause.
  auto stream = std::make_shared<CancelSource>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_cancel_ = stream;
    interrupt_.reset();
  }
  ScopedCancelCallback link(t.cancel, [stream, &t] { stream->Cancel(t.cancel.cause()); });
  if (rules_) rules_->ResetBuffers();

  MessageBuilder builder;
  Emit(event::MessageStart{step, &builder.message()});
  auto emit = [&](const StreamDelta& d) {
    Emit(event::MessageUpdate{step, &d, &builder.message()});
  };
  RetryHooks hooks;
  auto retry_abort = std::make_shared<CancelSource>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    hooks.enabled = auto_retry_;
    retry_abort_ = retry_abort;
  }
  hooks.abort = retry_abort->token();
  hooks.on_retry_start = [&](const RetryNotice& n) { Emit(event::AutoRetryStart{step, n}); };
  hooks.on_retry_end = [&](bool success, int attempt, const std::string& err) {
    Emit(event::AutoRetryEnd{step, success, attempt, err});
  };
  std::optional<StreamInterrupt> watched;
  auto on_delta = [&](const StreamDelta& d) {
    if (stream->cancelled()) return false;
    if (rules_) {
      if (auto hit = WatchRules(d, step)) {
        watched = std::move(hit);
        stream->Cancel(watched->cause);
        return false;
      }
    }
    if (options_.watcher) {
      // The watcher sees the delta before anything of it leaves the engine.
      if (auto hit = options_.watcher(d, builder.message())) {
        watched = std::move(hit);
        stream->Cancel(watched->cause);
        return false;
      }
    }
    builder.Apply(d, emit);
    return !stream->cancelled();
  };
  Result<ModelResponse> resp = model.provider->Stream(req, on_delta, stream->token(), hooks);
  builder.Close(emit);

  Streamed out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_cancel_.reset();
    retry_abort_.reset();
    if (!watched && interrupt_) watched = std::move(interrupt_);
    interrupt_.reset();
  }
  const bool stopped =
      stream->cancelled() || (resp.ok() && resp->message.stop_reason == StopReason::kCancelled);
  if (resp.ok()) {
    out.message = std::move(resp->message);
  } else {
    out.message = builder.Take(/*partial=*/true);
    if (!stopped) {
      out.message.stop_reason = StopReason::kError;
      out.message.error_message = resp.error().message;
      out.error = resp.error();
    }
  }
  out.message.role = Role::kAssistant;
  if (out.message.provider.empty()) out.message.provider = model.provider_name;
  if (out.message.model.empty()) out.message.model = model.model_id;
  if (stopped) {
    out.aborted = stream->cause() == CancelCause::kNone ? CancelCause::kUser : stream->cause();
    SettleStopped(out, std::move(watched), builder, t);
  }
  t.result.usage.Add(out.message.usage);
  EmitUsage(t, out.message, model);
  if (!out.message.content.empty()) AppendMessage(out.message, &t);
  Emit(event::MessageEnd{step, &out.message});
  // Rules switched off during the stream are told after it, not inside the text being shown.
  if (rules_)
    for (auto& w : rules_->TakeWarnings())
      Emit(event::Warning{"stream-rules", std::move(w), "A stream rule was switched off"});
  return out;
}

namespace {
// The blocks of a stopped message that may stay: never a tool call that will not run.
std::vector<ContentBlock> WithoutToolCalls(std::vector<ContentBlock> blocks) {
  std::vector<ContentBlock> kept;
  kept.reserve(blocks.size());
  for (auto& b : blocks)
    if (b.type != BlockType::kToolCall) kept.push_back(std::move(b));
  return kept;
}
}  // namespace

void Session::SettleStopped(Streamed& out, std::optional<StreamInterrupt> watched,
                            MessageBuilder& builder, const Turn& t) {
  out.message.content = WithoutToolCalls(std::move(out.message.content));
  out.message.stop_reason = StopReason::kCancelled;
  // A stream rule that fired stays fired even when the user cancelled at the same moment: its
  // injection joins the history (the prompt still ends), as the controller already counts it.
  if (!watched || (t.cancel.cancelled() && watched->ttsr_rules.empty())) return;
  // What the editor was shown: the provider's own copy may hold the delta that was stopped.
  out.message.content = WithoutToolCalls(builder.Take(/*partial=*/true).content);
  out.interrupt = std::move(watched);
  if (!out.interrupt->keep_partial) out.message.content.clear();
  if (!out.interrupt->reason.empty()) out.message.error_message = out.interrupt->reason;
}

void Session::EmitUsage(const Turn& t, const Message& m, const ModelChoice& model) {
  if (m.usage.total() <= 0 || !model.provider || model.provider->ContextWindow() <= 0) return;
  event::UsageUpdate u;
  u.turn = t.step;
  u.context_used = m.usage.total();
  u.context_size = model.provider->ContextWindow();
  {
    std::lock_guard<std::mutex> lock(mu_);
    u.session_cost = total_usage_.cost + t.result.usage.cost;
  }
  Emit(u);
}

bool Session::RunToolCalls(const Message& assistant, Turn& t) {
  std::vector<const ContentBlock*> calls;
  for (const auto& b : assistant.content)
    if (b.type == BlockType::kToolCall) calls.push_back(&b);
  for (size_t i = 0; i < calls.size();) {
    size_t next = i;  // calls before `next` have their results
    bool carried_on = false;
    if (!t.cancel.cancelled()) {
      const size_t batch = ParallelRun(calls, i);
      if (batch > 1) {
        carried_on = RunParallel({calls.begin() + i, calls.begin() + i + batch}, t);
        next = i + batch;
      } else {
        carried_on = RunToolCall(*calls[i], t);
        next = i + 1;
      }
    }
    if (!carried_on) {
      // Every call of the message still gets a result, so the history stays valid.
      for (size_t j = next; j < calls.size(); ++j) {
        CallRun run = StartCall(*calls[j], nullptr, t);
        CompleteCall(run, ToolOutput::Error("Cancelled by the user."), t);
      }
      return false;
    }
    if (next < calls.size() && SteeringPending()) {
      // Immediate interrupt mode: the user's new message comes before the remaining calls.
      for (size_t j = next; j < calls.size(); ++j) {
        CallRun run = StartCall(*calls[j], nullptr, t);
        CompleteCall(run, ToolOutput::Error("Skipped: the user sent a new message first."), t);
      }
      return true;
    }
    i = next;
  }
  return true;
}

std::optional<TurnStop> Session::DecideNext(const Message& assistant, Turn& t) {
  if (t.ends_turn) {
    Message ask;
    ask.role = Role::kAssistant;
    ask.content.push_back(ContentBlock::Text(t.question));
    AppendMessage(ask, &t);
    StreamDelta d;
    d.kind = DeltaKind::kText;
    d.text = t.question;
    Emit(event::MessageStart{t.step, &ask});
    Emit(event::MessageUpdate{t.step, &d, &ask});
    Emit(event::MessageEnd{t.step, &ask});
    return TurnStop::kEndTurn;
  }
  switch (assistant.stop_reason) {
    case StopReason::kMaxTokens:
      return TurnStop::kMaxTokens;
    case StopReason::kRefusal:
      return TurnStop::kRefusal;
    case StopReason::kEndTurn:
    case StopReason::kToolUse:
    case StopReason::kCancelled:
    case StopReason::kError:
      break;
  }
  for (const auto& b : assistant.content)
    if (b.type == BlockType::kToolCall) return std::nullopt;  // the model sees the results
  return TurnStop::kEndTurn;
}

// --- stream rules ---

namespace {
// The pause between a stream rule's interruption and the retry: a user's cancel in it wins.
constexpr int kTtsrRetryDelayMs = 50;

Message HiddenRuleMessage(std::string text) {
  return Message::Custom("ttsr-injection", std::move(text), false);
}

std::vector<std::string> Names(const std::vector<const rules::Rule*>& rules) {
  std::vector<std::string> names;
  names.reserve(rules.size());
  for (const auto* r : rules) names.push_back(r->name);
  return names;
}
}  // namespace

void Session::EmitTurnEnd(const Turn& t, const Message* said) {
  Emit(event::TurnEnd{t.step, said, &t.tool_results});
  if (rules_) rules_->OnTurnEnd();
}

std::optional<StreamInterrupt> Session::WatchRules(const StreamDelta& d, int step) {
  auto f = rules_->OnDelta(d);
  if (!f) return std::nullopt;
  if (!f->interrupt) {
    // A prose rule waits for the message to complete, silently; a tool rule is announced now
    // and rides on the call's result.
    if (f->source == rules::Source::kTool) {
      EmitTtsr(*f, step);
      RecordTtsr(Names(f->rules));
    }
    return std::nullopt;
  }
  EmitTtsr(*f, step);
  StreamInterrupt i;
  i.cause = CancelCause::kStreamRule;
  i.keep_partial = rules_->settings().context_mode == rules::ContextMode::kKeep;
  i.reason = rules::Controller::Reason(f->rules);
  i.silent = true;
  i.delay_ms = kTtsrRetryDelayMs;
  i.inject.push_back(HiddenRuleMessage(rules_->RenderInterrupt(f->rules)));
  i.ttsr_rules = Names(f->rules);
  return i;
}

void Session::EmitTtsr(const rules::Firing& f, int step) {
  event::TtsrTriggered e;
  e.turn = step;
  e.interrupted = f.interrupt;
  e.source = rules::SourceId(f.source);
  e.tool_call_id = f.tool_call_id;
  e.id = "ttsr-" + std::to_string(++ttsr_fired_);
  for (const rules::Rule* r : f.rules) {
    e.rules.push_back(r->name);
    event::TtsrRule d;
    d.name = r->name;
    d.path = rules_->ShownPath(*r);
    d.content = r->content;
    for (const auto& c : r->conditions) d.conditions.push_back(c.pattern);
    d.scope = r->scope;
    d.interrupt_mode =
        rules::InterruptModeId(r->interrupt_mode.value_or(rules_->settings().interrupt_mode));
    d.origin = r->origin;
    d.file = r->path;
    d.description = r->description;
    d.globs = r->globs;
    d.repeat_mode = rules::RepeatModeId(rules_->settings().repeat_mode);
    d.repeat_gap = rules_->settings().repeat_gap;
    e.details.push_back(std::move(d));
  }
  Emit(e);
}

void Session::RecordTtsr(const std::vector<std::string>& names) {
  Entry e;
  e.kind = EntryKind::kTtsrInjection;
  e.rules = names;
  std::lock_guard<std::mutex> lock(mu_);
  AppendEntryLocked(std::move(e));
}

bool Session::InjectFollowUps(Turn& t) {
  auto rules = rules_->TakeFollowUps();
  if (rules.empty()) return false;
  AppendMessage(HiddenRuleMessage(rules_->RenderInterrupt(rules)), &t);
  EmitMessage(t.step, t.added.back());
  RecordTtsr(Names(rules));
  return true;
}

// --- tool calls ---

ToolContext Session::MakeToolContext(const CancelToken& cancel) {
  ToolContext ctx;
  ctx.session_id = options_.id;
  ctx.cwd = options_.cwd;
  ctx.roots = roots_;
  ctx.cancel = cancel;
  ctx.services = options_.services;
  ctx.plan = &plan_;
  ctx.set_mode = [this](const std::string& id) -> Status {
    auto mode = ParsePermissionMode(id);
    if (!mode) return MakeError(ErrorCode::kInvalidMode, "unknown mode '" + id + "'");
    return SetMode(*mode);
  };
  return ctx;
}

Session::CallRun Session::StartCall(const ContentBlock& call, const std::shared_ptr<Tool>& tool,
                                    Turn& t) {
  CallRun run;
  run.tool = tool;
  run.ctx = MakeToolContext(t.cancel);
  run.ctx.tool_call_id = call.id;
  run.shown.id = call.id;
  run.shown.name = call.name;
  run.shown.args = &call.arguments;
  if (tool) {
    run.shown.title = tool->Title(call.arguments, run.ctx);
    run.shown.kind = tool->kind();
    run.shown.locations = tool->Locations(call.arguments, run.ctx);
  } else {
    run.shown.title = call.name;
  }
  Emit(event::ToolExecutionStart{t.step, &run.shown});
  return run;
}

void Session::CompleteCall(CallRun& run, ToolOutput out, Turn& t) {
  if (!out.details.isNull() && !JsonFitsIn(out.details, kMaxToolDetailsBytes))
    out.details = DetailsTooLarge();
  Emit(event::ToolExecutionEnd{t.step, &run.shown, &out, out.is_error});
  if (rules_) {
    // Rules that matched this call's arguments without interrupting: the model reads them
    // first in the result (the editor already saw them as a ttsr event).
    auto reminded = rules_->TakeToolReminders(run.shown.id);
    if (!reminded.empty())
      out.content.insert(out.content.begin(),
                         ContentBlock::Text(rules_->RenderToolReminder(reminded)));
  }
  Message tr;
  tr.role = Role::kToolResult;
  tr.tool_call_id = run.shown.id;
  tr.tool_name = run.shown.name;
  tr.is_error = out.is_error;
  tr.content = std::move(out.content);
  tr.tool.title = run.shown.title;
  tr.tool.kind = run.shown.kind;
  tr.tool.args = run.shown.args ? *run.shown.args : Json::Value();
  tr.tool.locations = run.shown.locations;
  tr.tool.diffs = std::move(out.diffs);
  tr.tool.details = std::move(out.details);
  tr.tool.terminal_id = out.terminal_id;
  t.tool_results.push_back(tr);
  AppendMessage(std::move(tr), &t);
}

size_t Session::ParallelRun(const std::vector<const ContentBlock*>& calls, size_t first) const {
  const PermissionMode mode = this->mode();
  size_t n = 0;
  for (size_t i = first; i < calls.size(); ++i, ++n) {
    auto tool = FindTool(calls[i]->name);
    if (!tool || !calls[i]->arguments.isObject() || !tool->read_only()) break;
    // Only plain look-ups: a question or a plan change must keep its place in the order.
    if (tool->kind() != ToolKind::kRead && tool->kind() != ToolKind::kSearch) break;
    if (policy_.Evaluate(*tool, calls[i]->arguments, mode).action != PermissionAction::kAllow)
      break;
  }
  return n;
}

bool Session::RunParallel(const std::vector<const ContentBlock*>& calls, Turn& t) {
  std::vector<CallRun> runs;
  runs.reserve(calls.size());
  for (const ContentBlock* call : calls) {
    runs.push_back(StartCall(*call, FindTool(call->name), t));
    runs.back().ctx.plan = nullptr;  // look-ups never touch the plan or the mode
    runs.back().ctx.set_mode = nullptr;
  }
  for (const CallRun& run : runs)
    Emit(event::ToolExecutionUpdate{t.step, &run.shown,
                                    event::ToolExecutionUpdate::Phase::kInProgress, "", ""});
  auto run_one = [](CallRun* run, const Json::Value* args) {
    try {
      run->out = run->tool->Run(*args, run->ctx);
    } catch (const std::exception& e) {
      run->out = ToolOutput::Error(run->shown.name + " failed: " + e.what());
    }
  };
  std::vector<std::thread> threads;
  for (size_t k = 1; k < runs.size(); ++k) {
    try {
      threads.emplace_back(run_one, &runs[k], &calls[k]->arguments);
    } catch (const std::system_error&) {
      run_one(&runs[k], &calls[k]->arguments);  // no thread to be had: run it here
    }
  }
  run_one(&runs[0], &calls[0]->arguments);
  for (auto& th : threads) th.join();
  const bool cancelled = t.cancel.cancelled();
  for (CallRun& run : runs) {
    if (cancelled && !run.out.is_error) run.out.is_error = true;
    CompleteCall(run, std::move(run.out), t);
  }
  return !cancelled;
}

PermissionDecision Session::AskPermission(const CallRun& run, const ContentBlock& call,
                                          const CancelToken& cancel) {
  // A client that cannot ask its user runs what the rules and the mode leave to the user.
  if (!options_.services.permissions) return PermissionDecision::kAllowOnce;
  PermissionRequest req;
  req.tool_call_id = call.id;
  req.tool_name = call.name;
  req.title = run.shown.title;
  req.kind = run.shown.kind;
  req.raw_input = call.arguments;
  req.locations = run.shown.locations;
  req.diffs = run.tool->Preview(call.arguments, run.ctx);
  return options_.services.permissions->RequestPermission(options_.id, req, cancel);
}

bool Session::RunToolCall(const ContentBlock& call, Turn& t) {
  CallRun run = StartCall(call, FindTool(call.name), t);
  if (!run.tool) {
    CompleteCall(run, ToolOutput::Error("Unknown tool '" + call.name + "'."), t);
    return true;
  }
  if (!call.arguments.isObject()) {
    CompleteCall(run, ToolOutput::Error("Tool arguments must be a JSON object."), t);
    return true;
  }

  // Permission: rules and mode first, then the editor.
  const PermissionVerdict verdict = policy_.Evaluate(*run.tool, call.arguments, mode());
  if (verdict.action == PermissionAction::kDeny) {
    CompleteCall(
        run, ToolOutput::Error(verdict.reason.empty() ? "Permission denied." : verdict.reason), t);
    return true;
  }
  if (verdict.action == PermissionAction::kAsk) {
    switch (AskPermission(run, call, t.cancel)) {
      case PermissionDecision::kCancelled:
        CompleteCall(run, ToolOutput::Error("Cancelled by the user."), t);
        return false;
      case PermissionDecision::kRejectAlways:
        policy_.RememberAnswer(*run.tool, call.arguments, PermissionAction::kDeny);
        CompleteCall(run, ToolOutput::Error("The user rejected this tool call."), t);
        return true;
      case PermissionDecision::kRejectOnce:
        CompleteCall(run, ToolOutput::Error("The user rejected this tool call."), t);
        return true;
      case PermissionDecision::kAllowAlways:
        policy_.RememberAnswer(*run.tool, call.arguments, PermissionAction::kAllow);
        break;
      case PermissionDecision::kAllowOnce:
        break;
    }
    if (t.cancel.cancelled()) {
      CompleteCall(run, ToolOutput::Error("Cancelled by the user."), t);
      return false;
    }
  }

  using Phase = event::ToolExecutionUpdate::Phase;
  Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kInProgress, "", ""});
  run.ctx.on_terminal = [&](const std::string& terminal_id) {
    Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kTerminal, terminal_id, ""});
  };
  run.ctx.on_output = [&](const std::string& output) {
    Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kPartialOutput, "", output});
  };
  run.ctx.on_progress = [&](const std::string& note) {
    Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kProgress, "", note});
  };
  ToolOutput out;
  try {
    out = run.tool->Run(call.arguments, run.ctx);
  } catch (const std::exception& e) {
    // A tool's bug fails its call, never the process.
    out = ToolOutput::Error(call.name + " failed: " + e.what());
  }
  if (out.plan_changed) {
    Entry e;
    e.kind = EntryKind::kCustom;
    e.custom_type = kPlanEntryType;
    e.data = Json::Value(Json::arrayValue);
    for (const auto& p : plan_) {
      Json::Value item(Json::objectValue);
      item["content"] = p.content;
      item["priority"] = p.priority;
      item["status"] = p.status;
      e.data.append(item);
    }
    // The model's own plan is the todo list from now on.
    TodoPhase phase;
    phase.id = "phase-1";
    phase.name = "Todos";
    for (size_t i = 0; i < plan_.size(); ++i)
      phase.tasks.push_back(
          TodoTask{"task-" + std::to_string(i + 1), plan_[i].content, plan_[i].status, ""});
    {
      std::lock_guard<std::mutex> lock(mu_);
      AppendEntryLocked(std::move(e));
      SetTodosLocked({std::move(phase)});
    }
    Emit(event::PlanUpdate{plan_});
  }
  if (out.ends_turn) {
    t.ends_turn = true;
    t.question = out.content.empty() ? "" : out.content[0].text;
    out.content = {
        ContentBlock::Text("The question was shown to the user; their answer is the "
                           "next user message.")};
    CompleteCall(run, std::move(out), t);
    return true;
  }
  const bool cancelled = t.cancel.cancelled();
  if (cancelled && !out.is_error) out.is_error = true;
  CompleteCall(run, std::move(out), t);
  return !cancelled;
}

// --- session files ---

Result<std::shared_ptr<Session>> CreateRecordedSession(std::shared_ptr<const AgentConfig> agent,
                                                       SessionOptions options,
                                                       const SessionStore& store,
                                                       const std::string& parent_session) {
  SessionHeader header;
  header.id = options.id;
  header.timestamp_ms = NowMs();
  header.cwd = options.cwd.string();
  header.agent = agent->name;
  header.parent_session = parent_session;
  options.session_file = store.PathFor(header).string();
  auto writer = SessionWriter::ForNew(options.session_file, std::move(header));
  // A seed (a fork's history) is the new file's first entries; fsynced at once, so the fork
  // lasts even if no turn ends in it.
  if (!options.seed.empty()) {
    for (const Entry& e : options.seed) writer->Record(e);
    writer->Flush();
  }
  options.recorder = writer;
  auto session = Session::Create(std::move(agent), std::move(options));
  if (!session.ok()) writer->Close();
  return session;
}

Result<std::shared_ptr<Session>> OpenSessionFile(std::shared_ptr<const AgentConfig> agent,
                                                 SessionOptions options, const fs::path& path) {
  auto opened = SessionWriter::OpenExisting(path);
  if (!opened.ok()) return opened.error();
  auto& [writer, contents] = *opened;
  if (options.id.empty()) options.id = contents.header.id;
  options.seed = std::move(contents.entries);
  options.recorder = writer;
  options.session_file = path.string();
  auto session = Session::Create(std::move(agent), std::move(options));
  if (!session.ok()) writer->Close();
  return session;
}

}  // namespace lousho::agent

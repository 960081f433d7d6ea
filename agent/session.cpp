// Session engine: the turn loop (stream a model message -> run its tool calls -> decide what comes
// next), permissions, the history, and events on the session's strand.
#include "agent/session.h"

#include <algorithm>
#include <system_error>
#include <thread>

#include "agent/message_builder.h"
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

AgentView ViewOf(const AgentConfig& agent) {
  AgentView v;
  v.name = agent.name;
  v.images = agent.model.provider && agent.model.provider->SupportsImages();
  v.commands = agent.commands;
  v.provider_error = agent.provider_error;
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
  std::string question;
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
    Status st = s->history_.Seed(std::move(seed), seed_leaf);
    if (!st.ok()) return st.error();
  }
  return s;
}

Session::Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options)
    : agent_(std::move(agent)),
      options_(std::move(options)),
      strand_(Strand::Create(options_.pool ? options_.pool : DefaultPool())),
      policy_(agent_->permission_rules, options_.cwd),
      mode_(agent_->default_mode),
      model_(agent_->model),
      tools_(agent_->tools) {
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
  for (auto& tool : now) {
    source_tool_names_.push_back(tool->name());
    bool replaced = false;
    for (auto& t : tools_)
      if (t->name() == tool->name()) {
        t = tool;
        replaced = true;
      }
    if (!replaced) tools_.push_back(std::move(tool));
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
  auto from_source = [&](const std::string& name) {
    return std::find(source_tool_names_.begin(), source_tool_names_.end(), name) !=
           source_tool_names_.end();
  };
  std::erase_if(tools_, [&](const std::shared_ptr<Tool>& t) { return from_source(t->name()); });
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
    cancel_ = std::make_shared<CancelSource>();
    source = cancel_;
  }
  Status st = Post([this, source, content = std::move(content), done = std::move(done)]() mutable {
    Result<TurnResult> result = RunTurn(std::move(content), source->token());
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
    done();
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (notices_.size() >= kMaxPendingNotices)
      return MakeError(ErrorCode::kSessionBusy,
                       "too many changes are waiting for the session's running turn");
    mode_ = mode;
    notices_.emplace_back(event::ModeChanged{PermissionModeId(mode)}, std::move(done));
    has_notices_.store(true, std::memory_order_release);
  }
  // From the worker (the switch_mode tool) the notice goes out with the next event; from
  // elsewhere a task flushes it, after the running turn's current step if one is running.
  if (!strand_->InTask()) {
    Status st = Post([] {});
    if (!st.ok()) FlushNotices();  // no thread to be had: better out of place than lost
  }
  return Status::Ok();
}

void Session::FlushNotices() {
  if (!has_notices_.load(std::memory_order_acquire)) return;
  std::vector<std::pair<Event, std::function<void()>>> notices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notices.swap(notices_);
    has_notices_.store(false, std::memory_order_relaxed);
  }
  for (auto& [e, done] : notices) {
    if (options_.sink) options_.sink(e);
    if (done) done();
  }
}

ModelChoice Session::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

void Session::SetModel(ModelChoice model) {
  std::lock_guard<std::mutex> lock(mu_);
  model_ = std::move(model);
}

void Session::SetThinking(ThinkingLevel level) {
  std::lock_guard<std::mutex> lock(mu_);
  model_.thinking = level;
}

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
  Entry e;
  e.kind = EntryKind::kMessage;
  e.timestamp_ms = m.timestamp_ms;
  e.message = std::move(m);
  std::lock_guard<std::mutex> lock(mu_);
  history_.Append(std::move(e));
}

void Session::Emit(const Event& e) {
  FlushNotices();
  if (options_.sink) options_.sink(e);
}

void Session::EmitMessage(int turn, const Message& m) {
  Emit(event::MessageStart{turn, &m});
  Emit(event::MessageEnd{turn, &m});
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

// --- the turn ---

Result<TurnResult> Session::RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel) {
  Turn t;
  t.cancel = cancel;
  Emit(event::AgentStart{});
  Message user;
  user.role = Role::kUser;
  user.content = ExpandCommand(std::move(content));
  AppendMessage(user, &t);
  EmitMessage(0, t.added.back());

  for (;;) {
    if (auto stop = LimitReached(t)) return Finish(t, *stop);
    ++t.step;
    t.tool_results.clear();
    Emit(event::TurnStart{t.step});
    Streamed s = StreamMessage(t);
    const Message* said = s.message.content.empty() ? nullptr : &s.message;
    if (s.error) {
      Emit(event::TurnEnd{t.step, said, &t.tool_results});
      Emit(event::AgentEnd{&t.added});
      return *s.error;
    }
    if (s.interrupt) {
      // A stream rule or a steering message: what it brings joins the history, and the model
      // is asked again within the same prompt.
      Emit(event::TurnEnd{t.step, said, &t.tool_results});
      for (Message& m : s.interrupt->inject) {
        AppendMessage(std::move(m), &t);
        EmitMessage(t.step, t.added.back());
      }
      continue;
    }
    if (s.aborted != CancelCause::kNone) {
      Emit(event::TurnEnd{t.step, said, &t.tool_results});
      return Finish(t, TurnStop::kCancelled);
    }
    const bool carried_on = RunToolCalls(s.message, t);
    Emit(event::TurnEnd{t.step, said, &t.tool_results});
    if (!carried_on) return Finish(t, TurnStop::kCancelled);
    if (auto stop = DecideNext(s.message, t)) return Finish(t, *stop);
  }
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

  MessageBuilder builder;
  Emit(event::MessageStart{step, &builder.message()});
  auto emit = [&](const StreamDelta& d) {
    Emit(event::MessageUpdate{step, &d, &builder.message()});
  };
  RetryHooks hooks;
  hooks.on_retry_start = [&](const RetryNotice& n) { Emit(event::AutoRetryStart{step, n}); };
  hooks.on_retry_end = [&](bool success, int attempt, const std::string& err) {
    Emit(event::AutoRetryEnd{step, success, attempt, err});
  };
  std::optional<StreamInterrupt> watched;
  auto on_delta = [&](const StreamDelta& d) {
    if (stream->cancelled()) return false;
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
    // Keep what was said, but never a tool call that will not run.
    std::vector<ContentBlock> kept;
    for (auto& b : out.message.content)
      if (b.type != BlockType::kToolCall) kept.push_back(std::move(b));
    out.message.content = std::move(kept);
    out.message.stop_reason = StopReason::kCancelled;
    out.aborted = stream->cause() == CancelCause::kNone ? CancelCause::kUser : stream->cause();
    if (watched && !t.cancel.cancelled()) {
      out.interrupt = std::move(watched);
      if (!out.interrupt->keep_partial) out.message.content.clear();
    }
  }
  t.result.usage.Add(out.message.usage);
  EmitUsage(t, out.message, model);
  if (!out.message.content.empty()) AppendMessage(out.message, &t);
  Emit(event::MessageEnd{step, &out.message});
  return out;
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
  Emit(event::ToolExecutionEnd{t.step, &run.shown, &out, out.is_error});
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
  if (out.plan_changed) Emit(event::PlanUpdate{plan_});
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

}  // namespace lousho::agent

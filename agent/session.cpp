// Session engine: worker thread, turn loop (model -> tools -> model), permissions, events.
#include "agent/session.h"

#include <chrono>
#include <system_error>
#include <thread>

#include "agent/providers/factory.h"
#include "agent/providers/script_provider.h"
#include "config/model_catalog.h"
#include "support/log.h"

namespace lousho::agent {
namespace fs = std::filesystem;

Tool* AgentConfig::FindTool(const std::string& name) const {
  for (const auto& t : tools)
    if (t->name() == name) return t.get();
  return nullptr;
}

ThinkingLevel ParseThinkingLevel(const std::string& s) {
  if (s == "minimal") return ThinkingLevel::kMinimal;
  if (s == "low") return ThinkingLevel::kLow;
  if (s == "medium") return ThinkingLevel::kMedium;
  if (s == "high") return ThinkingLevel::kHigh;
  if (s == "xhigh") return ThinkingLevel::kXHigh;
  return ThinkingLevel::kOff;
}

Result<std::shared_ptr<const AgentConfig>> BuildAgent(const config::AgentSpec& spec,
                                                      const EnvLookup& getenv) {
  auto agent = std::make_shared<AgentConfig>();
  agent->name = spec.name;
  agent->instructions = spec.instructions;
  agent->thinking = ParseThinkingLevel(spec.thinking);
  agent->max_steps = spec.max_steps;
  agent->limits = spec.limits;
  agent->extra_roots = spec.roots;
  agent->commands = spec.commands;
  size_t slash = spec.model.find('/');
  agent->provider_name = spec.model.substr(0, slash);
  agent->model_id = spec.model.substr(slash + 1);
  if (agent->provider_name == "script") {
    auto it = spec.scripts.find(agent->model_id);
    const config::Script& script =
        it != spec.scripts.end() ? it->second : config::BuiltinScripts().at(agent->model_id);
    agent->provider = std::make_shared<ScriptProvider>(script);
  } else {
    const config::ProviderSettings* settings = nullptr;
    auto it = spec.providers.find(agent->provider_name);
    if (it != spec.providers.end()) {
      settings = &it->second;
    } else {
      settings = config::FindBuiltinProvider(agent->provider_name);
    }
    if (settings == nullptr) {
      std::string known;
      for (const auto& n : config::BuiltinProviderNames()) known += (known.empty() ? "" : ", ") + n;
      return MakeError("LOUSHO_CONFIG_INVALID", spec.source + ": unknown provider '" +
                                                    agent->provider_name + "' (built-in: " + known +
                                                    ", script; or define it under providers:)");
    }
    auto provider = MakeHttpProvider(*settings, agent->model_id, getenv);
    if (provider.ok()) {
      agent->provider = *provider;
    } else if (provider.error().code == "LOUSHO_PROVIDER_AUTH") {
      agent->provider_error = provider.error();
    } else {
      return provider.error();
    }
  }
  const auto& names = spec.tools_set ? spec.tools : BuiltinToolNames();
  for (const auto& name : names) {
    std::unique_ptr<Tool> tool = MakeBuiltinTool(name);
    if (!tool)
      return MakeError("LOUSHO_CONFIG_INVALID", spec.source + ": unknown tool '" + name + "'");
    agent->tools.push_back(std::move(tool));
  }
  if (!spec.permissions.isNull()) {
    auto rules = ParsePermissionRules(spec.permissions);
    if (!rules.ok())
      return MakeError("LOUSHO_CONFIG_INVALID",
                       spec.source + ": permissions: " + rules.error().message);
    agent->permission_rules = *rules;
  }
  auto mode = ParsePermissionMode(spec.default_mode);
  if (mode) agent->default_mode = *mode;
  return std::shared_ptr<const AgentConfig>(agent);
}

Session::Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options)
    : agent_(std::move(agent)),
      options_(std::move(options)),
      mode_(agent_->default_mode),
      policy_(agent_->permission_rules, options_.cwd) {
  roots_.push_back(options_.cwd);
  for (const auto& r : options_.additional_roots) roots_.push_back(r);
  for (const auto& r : agent_->extra_roots) roots_.push_back(r);
  worker_ = std::thread([this] { WorkerLoop(); });
}

Session::~Session() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (cancel_) cancel_->Cancel();
  }
  cv_.notify_all();
  worker_.join();
}

void Session::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

Status Session::Prompt(std::vector<ContentBlock> content,
                       std::function<void(Result<TurnResult>)> done) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_)
      return MakeError("LOUSHO_SESSION_BUSY", "a prompt is already running in this session");
    if (stopping_) return MakeError("LOUSHO_SESSION_CLOSED", "the session is closing");
    busy_ = true;
    cancel_ = std::make_shared<CancelSource>();
    source = cancel_;
    tasks_.push_back(
        [this, source, content = std::move(content), done = std::move(done)]() mutable {
          Result<TurnResult> result = RunTurn(std::move(content), source->token());
          {
            std::lock_guard<std::mutex> lock(mu_);
            busy_ = false;
            cancel_.reset();
          }
          done(std::move(result));
        });
  }
  cv_.notify_all();
  return Status::Ok();
}

void Session::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancel_) cancel_->Cancel();
}

bool Session::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

PermissionMode Session::mode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mode_;
}

void Session::SetMode(PermissionMode mode) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mode_ = mode;
  }
  Event e;
  e.type = EventType::kModeChanged;
  e.mode_id = PermissionModeId(mode);
  Emit(e);
}

std::vector<Message> Session::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  // Walk from the leaf to the root, then reverse.
  std::vector<Message> out;
  std::string at = leaf_;
  while (!at.empty()) {
    const HistoryEntry* found = nullptr;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (it->id == at) {
        found = &*it;
        break;
      }
    if (!found) break;
    out.push_back(found->message);
    at = found->parent_id;
  }
  return {out.rbegin(), out.rend()};
}

Usage Session::TotalUsage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_usage_;
}

void Session::Append(Message m) {
  std::lock_guard<std::mutex> lock(mu_);
  HistoryEntry e;
  e.id = "e" + std::to_string(++next_entry_);
  e.parent_id = leaf_;
  e.message = std::move(m);
  leaf_ = e.id;
  entries_.push_back(std::move(e));
}

void Session::Emit(const Event& e) {
  if (options_.sink) options_.sink(e);
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

namespace {
Event Marker(EventType type, int turn) {
  Event e;
  e.type = type;
  e.turn = turn;
  return e;
}

std::string SystemPrompt(const AgentConfig& agent, const std::vector<fs::path>& roots) {
  std::string s = agent.instructions;
  if (!s.empty() && s.back() != '\n') s += "\n";
  s += "\nWorking directory: " + roots[0].string() + "\n";
  if (!agent.tools.empty()) {
    s += "Tools available: ";
    for (size_t i = 0; i < agent.tools.size(); ++i) s += (i ? ", " : "") + agent.tools[i]->name();
    s += "\n";
  }
  return s;
}
}  // namespace

Result<TurnResult> Session::RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel) {
  TurnResult result;
  Emit(Marker(EventType::kAgentStart, 0));
  Message user;
  user.role = Role::kUser;
  user.content = ExpandCommand(std::move(content));
  Append(user);
  {
    Event e;
    e.type = EventType::kMessageStart;
    e.message = &user;
    Emit(e);
    e.type = EventType::kMessageEnd;
    Emit(e);
  }

  auto finish = [&](TurnStop stop) -> Result<TurnResult> {
    result.stop = stop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      total_usage_.Add(result.usage);
    }
    Emit(Marker(EventType::kAgentEnd, 0));
    return result;
  };

  for (int step = 1;; ++step) {
    if (cancel.cancelled()) return finish(TurnStop::kCancelled);
    if (step > agent_->max_steps) return finish(TurnStop::kMaxTurnRequests);
    if (agent_->limits.max_total_tokens > 0 &&
        result.usage.total() >= agent_->limits.max_total_tokens)
      return finish(TurnStop::kMaxTokens);
    Emit(Marker(EventType::kTurnStart, step));

    ModelRequest req;
    req.model = agent_->model_id;
    req.system = SystemPrompt(*agent_, roots_);
    req.messages = History();
    req.thinking = agent_->thinking;
    req.max_output_tokens = static_cast<int>(agent_->limits.max_output_tokens);
    for (const auto& t : agent_->tools)
      req.tools.push_back(ToolSchema{t->name(), t->description(), t->parameters()});

    Message partial;
    partial.role = Role::kAssistant;
    {
      Event e;
      e.type = EventType::kMessageStart;
      e.turn = step;
      e.message = &partial;
      Emit(e);
    }
    RetryHooks hooks;
    hooks.on_retry_start = [&](const RetryNotice& n) {
      Event e;
      e.type = EventType::kAutoRetryStart;
      e.turn = step;
      e.retry = n;
      Emit(e);
    };
    hooks.on_retry_end = [&](bool success, int attempt, const std::string& err) {
      Event e;
      e.type = EventType::kAutoRetryEnd;
      e.turn = step;
      e.retry.attempt = attempt;
      e.retry_success = success;
      e.retry_error = err;
      Emit(e);
    };
    auto on_delta = [&](const StreamDelta& d) {
      if (cancel.cancelled()) return false;
      Event e;
      e.type = EventType::kMessageUpdate;
      e.turn = step;
      e.delta = d;
      Emit(e);
      return true;
    };
    Result<ModelResponse> resp = agent_->provider->Stream(req, on_delta, cancel, hooks);
    if (!resp.ok()) {
      if (cancel.cancelled()) {
        Emit(Marker(EventType::kTurnEnd, step));
        return finish(TurnStop::kCancelled);
      }
      Emit(Marker(EventType::kTurnEnd, step));
      Emit(Marker(EventType::kAgentEnd, 0));
      return resp.error();
    }
    Message assistant = std::move(resp->message);
    result.usage.Add(assistant.usage);
    if (assistant.usage.total() > 0 && agent_->provider->ContextWindow() > 0) {
      Event u = Marker(EventType::kUsageUpdate, step);
      u.context_used = assistant.usage.total();
      u.context_size = agent_->provider->ContextWindow();
      {
        std::lock_guard<std::mutex> lock(mu_);
        u.session_cost = total_usage_.cost + result.usage.cost;
      }
      Emit(u);
    }
    bool cancelled = cancel.cancelled() || assistant.stop_reason == StopReason::kCancelled;
    if (cancelled) {
      // Keep what was said, but never a tool call that will not run.
      std::vector<ContentBlock> kept;
      for (auto& b : assistant.content)
        if (b.type != BlockType::kToolCall) kept.push_back(std::move(b));
      assistant.content = std::move(kept);
      assistant.stop_reason = StopReason::kCancelled;
    }
    if (!assistant.content.empty()) Append(assistant);
    {
      Event e;
      e.type = EventType::kMessageEnd;
      e.turn = step;
      e.message = &assistant;
      Emit(e);
    }
    if (cancelled) {
      Emit(Marker(EventType::kTurnEnd, step));
      return finish(TurnStop::kCancelled);
    }
    std::vector<const ContentBlock*> calls;
    for (const auto& b : assistant.content)
      if (b.type == BlockType::kToolCall) calls.push_back(&b);
    bool ends_turn = false;
    std::string question;
    for (size_t i = 0; i < calls.size();) {
      size_t next = i;  // calls before `next` have their results
      bool carried_on = false;
      if (!cancel.cancelled()) {
        size_t batch = ParallelRun(calls, i);
        if (batch > 1) {
          carried_on = RunParallel({calls.begin() + i, calls.begin() + i + batch}, step, cancel);
          next = i + batch;
        } else {
          carried_on = RunToolCall(*calls[i], step, cancel, &ends_turn, &question);
          next = i + 1;
        }
      }
      if (!carried_on) {
        // Every call of the message still gets a result, so the history stays valid.
        for (size_t j = next; j < calls.size(); ++j) {
          const Event start = ToolStartEvent(*calls[j], nullptr, step, ToolContext());
          Emit(start);
          CompleteToolCall(start, ToolOutput::Error("Cancelled by the user."));
        }
        Emit(Marker(EventType::kTurnEnd, step));
        return finish(TurnStop::kCancelled);
      }
      i = next;
    }
    Emit(Marker(EventType::kTurnEnd, step));
    if (ends_turn) {
      Message ask;
      ask.role = Role::kAssistant;
      ask.content.push_back(ContentBlock::Text(question));
      Append(ask);
      Event e;
      e.type = EventType::kMessageStart;
      e.turn = step;
      e.message = &ask;
      Emit(e);
      e.type = EventType::kMessageUpdate;
      e.delta.kind = DeltaKind::kText;
      e.delta.text = question;
      Emit(e);
      e.type = EventType::kMessageEnd;
      Emit(e);
      return finish(TurnStop::kEndTurn);
    }
    switch (assistant.stop_reason) {
      case StopReason::kMaxTokens:
        return finish(TurnStop::kMaxTokens);
      case StopReason::kRefusal:
        return finish(TurnStop::kRefusal);
      case StopReason::kEndTurn:
      case StopReason::kToolUse:
      case StopReason::kCancelled:
      case StopReason::kError:
        break;
    }
    if (calls.empty()) return finish(TurnStop::kEndTurn);
  }
}

ToolContext Session::MakeToolContext(const CancelToken& cancel) {
  ToolContext ctx;
  ctx.session_id = options_.id;
  ctx.cwd = options_.cwd;
  ctx.roots = roots_;
  ctx.cancel = cancel;
  ctx.client = options_.client;
  ctx.plan = &plan_;
  ctx.set_mode = [this](const std::string& id) -> Status {
    auto mode = ParsePermissionMode(id);
    if (!mode) return MakeError("LOUSHO_INVALID_MODE", "unknown mode '" + id + "'");
    SetMode(*mode);
    return Status::Ok();
  };
  return ctx;
}

Event Session::ToolStartEvent(const ContentBlock& call, const Tool* tool, int turn,
                              const ToolContext& ctx) const {
  Event e;
  e.type = EventType::kToolExecutionStart;
  e.turn = turn;
  e.tool_call_id = call.id;
  e.tool_name = call.name;
  e.args = call.arguments;
  if (tool) {
    e.title = tool->Title(call.arguments, ctx);
    e.kind = tool->kind();
    e.locations = tool->Locations(call.arguments, ctx);
  } else {
    e.title = call.name;
  }
  return e;
}

void Session::CompleteToolCall(const Event& start, const ToolOutput& out) {
  Event end = start;
  end.type = EventType::kToolExecutionEnd;
  end.output = &out;
  end.is_error = out.is_error;
  Emit(end);
  Message tr;
  tr.role = Role::kToolResult;
  tr.tool_call_id = start.tool_call_id;
  tr.tool_name = start.tool_name;
  tr.is_error = out.is_error;
  tr.content = out.content;
  Append(std::move(tr));
}

size_t Session::ParallelRun(const std::vector<const ContentBlock*>& calls, size_t first) const {
  const PermissionMode mode = this->mode();
  size_t n = 0;
  for (size_t i = first; i < calls.size(); ++i, ++n) {
    const Tool* tool = agent_->FindTool(calls[i]->name);
    if (!tool || !calls[i]->arguments.isObject() || !tool->read_only()) break;
    // Only plain look-ups: a question or a plan change must keep its place in the order.
    if (tool->kind() != ToolKind::kRead && tool->kind() != ToolKind::kSearch) break;
    if (policy_.Evaluate(*tool, calls[i]->arguments, mode).action != PermissionAction::kAllow)
      break;
  }
  return n;
}

bool Session::RunParallel(const std::vector<const ContentBlock*>& calls, int turn,
                          const CancelToken& cancel) {
  struct Job {
    Tool* tool = nullptr;
    ToolContext ctx;
    Event start;
    ToolOutput out;
  };
  std::vector<Job> jobs(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    Job& job = jobs[k];
    job.tool = agent_->FindTool(calls[k]->name);
    job.ctx = MakeToolContext(cancel);
    job.ctx.plan = nullptr;  // look-ups never touch the plan or the mode
    job.ctx.set_mode = nullptr;
    job.start = ToolStartEvent(*calls[k], job.tool, turn, job.ctx);
    Emit(job.start);
  }
  for (const Job& job : jobs) {
    Event progress = job.start;
    progress.type = EventType::kToolExecutionUpdate;
    progress.phase = Event::ToolPhase::kInProgress;
    Emit(progress);
  }
  std::vector<std::thread> threads;
  for (size_t k = 1; k < jobs.size(); ++k) {
    Job* job = &jobs[k];
    const Json::Value* args = &calls[k]->arguments;
    try {
      threads.emplace_back([job, args] { job->out = job->tool->Run(*args, job->ctx); });
    } catch (const std::system_error&) {
      job->out = job->tool->Run(*args, job->ctx);  // no thread to be had: run it here
    }
  }
  jobs[0].out = jobs[0].tool->Run(calls[0]->arguments, jobs[0].ctx);
  for (auto& t : threads) t.join();
  const bool cancelled = cancel.cancelled();
  for (Job& job : jobs) {
    if (cancelled && !job.out.is_error) job.out.is_error = true;
    CompleteToolCall(job.start, job.out);
  }
  return !cancelled;
}

bool Session::RunToolCall(const ContentBlock& call, int turn, const CancelToken& cancel,
                          bool* ends_turn, std::string* question) {
  Tool* tool = agent_->FindTool(call.name);
  ToolContext ctx = MakeToolContext(cancel);
  const Event e = ToolStartEvent(call, tool, turn, ctx);
  Emit(e);
  auto complete = [&](const ToolOutput& out) { CompleteToolCall(e, out); };

  if (!tool) {
    complete(ToolOutput::Error("Unknown tool '" + call.name + "'."));
    return true;
  }
  if (!call.arguments.isObject()) {
    complete(ToolOutput::Error("Tool arguments must be a JSON object."));
    return true;
  }

  // Permission: rules and mode first, then the editor.
  PermissionMode mode = this->mode();
  PermissionVerdict verdict = policy_.Evaluate(*tool, call.arguments, mode);
  if (verdict.action == PermissionAction::kDeny) {
    complete(ToolOutput::Error(verdict.reason.empty() ? "Permission denied." : verdict.reason));
    return true;
  }
  if (verdict.action == PermissionAction::kAsk) {
    PermissionDecision decision = PermissionDecision::kAllowOnce;
    if (options_.client) {
      PermissionRequest req;
      req.tool_call_id = call.id;
      req.tool_name = call.name;
      req.title = e.title;
      req.kind = e.kind;
      req.raw_input = call.arguments;
      req.locations = e.locations;
      req.diffs = tool->Preview(call.arguments, ctx);
      decision = options_.client->RequestPermission(options_.id, req, cancel);
    }
    switch (decision) {
      case PermissionDecision::kCancelled:
        complete(ToolOutput::Error("Cancelled by the user."));
        return false;
      case PermissionDecision::kRejectAlways:
        policy_.RememberAnswer(*tool, call.arguments, PermissionAction::kDeny);
        complete(ToolOutput::Error("The user rejected this tool call."));
        return true;
      case PermissionDecision::kRejectOnce:
        complete(ToolOutput::Error("The user rejected this tool call."));
        return true;
      case PermissionDecision::kAllowAlways:
        policy_.RememberAnswer(*tool, call.arguments, PermissionAction::kAllow);
        break;
      case PermissionDecision::kAllowOnce:
        break;
    }
    if (cancel.cancelled()) {
      complete(ToolOutput::Error("Cancelled by the user."));
      return false;
    }
  }

  Event progress = e;
  progress.type = EventType::kToolExecutionUpdate;
  progress.phase = Event::ToolPhase::kInProgress;
  Emit(progress);
  ctx.on_terminal = [&](const std::string& terminal_id) {
    Event t = e;
    t.type = EventType::kToolExecutionUpdate;
    t.phase = Event::ToolPhase::kTerminal;
    t.terminal_id = terminal_id;
    Emit(t);
  };
  ToolOutput out = tool->Run(call.arguments, ctx);
  if (out.plan_changed) {
    Event p;
    p.type = EventType::kPlanUpdate;
    p.turn = turn;
    p.plan = plan_;
    Emit(p);
  }
  if (out.ends_turn) {
    *ends_turn = true;
    *question = out.content.empty() ? "" : out.content[0].text;
    ToolOutput shown = out;
    shown.content = {
        ContentBlock::Text("The question was shown to the user; their answer is the "
                           "next user message.")};
    complete(shown);
    return true;
  }
  bool cancelled = cancel.cancelled();
  if (cancelled && !out.is_error) out.is_error = true;
  complete(out);
  return !cancelled;
}

}  // namespace lousho::agent

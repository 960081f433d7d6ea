// The turn loop: stream a model message -> run its tool calls -> decide what comes next.
#include "agent/turn_runner.h"

#include "agent/branching.h"
#include "agent/compactor.h"
#include "agent/hooks.h"
#include "agent/input_queues.h"
#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/rule_watch.h"
#include "agent/selection.h"
#include "agent/tool_runner.h"
#include "agent/tools/jobs.h"
#include "agent/toolset.h"
#include "agent/transcript.h"
#include "core/server_tool.h"

namespace lousho::agent {

// One streamed model message and how its stream ended.
struct TurnRunner::Streamed {
  Message message;
  std::optional<Error> error;  // the stream failed (not by cancellation)
  CancelCause aborted = CancelCause::kNone;
  std::optional<StreamInterrupt> interrupt;  // set when a watcher or Interrupt() stopped it
};

TurnRunner::TurnRunner(TurnParts parts, TurnSettings settings)
    : parts_(parts), settings_(std::move(settings)) {}

Result<TurnResult> TurnRunner::Run(std::vector<ContentBlock> content, const CancelToken& cancel) {
  Turn t;
  t.cancel = cancel;
  parts_.emitter.Emit(event::AgentStart{});
  // --- hooks: the session's start (once), then UserPromptSubmit, which may refuse the prompt ---
  // [rewind] What these hooks change belongs to the prompt: its id is given before they run.
  t.user_entry = parts_.recorder.NewMessageId();
  prompt_entry_ = t.user_entry;
  const bool accepted = PromptHooks(content, t);
  if (accepted) StartPrompt(std::move(content), t);
  prompt_entry_.clear();
  if (!accepted) return Finish(t, TurnStop::kEndTurn);
  for (;;) {
    if (auto stop = BeforeRequest(t)) return Finish(t, *stop);
    ++t.step;
    t.tool_results.clear();
    parts_.emitter.Emit(event::TurnStart{t.step});
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
    const bool carried_on = parts_.calls.Run(s.message, t);
    EmitTurnEnd(t, said);
    if (!carried_on) return Finish(t, TurnStop::kCancelled);
    if (auto stop = AfterTools(s.message, t)) return Finish(t, *stop);
  }
}

// The messages a prompt starts with: the context added since the last prompt (already in the
// history), then the user's (a command expanded).
void TurnRunner::StartPrompt(std::vector<ContentBlock> content, Turn& t) {
  for (Message& m : parts_.queues.TakeContext()) {
    t.added.push_back(std::move(m));
    parts_.emitter.ShowMessage(0, t.added.back());
  }
  NoteJobs(t);
  Message user;
  user.role = Role::kUser;
  user.content = ExpandCommand(std::move(content), t.cancel);
  const std::string gist =
      settings_.auto_title && parts_.branching.Name().empty() ? PromptGist(user.TextContent()) : "";
  parts_.emitter.ShowMessage(0,
                             RecordTurnMessage(parts_.recorder, t, std::move(user), t.user_entry));
  // The first prompt names the session until someone names it.
  if (!gist.empty()) (void)parts_.branching.SetName(gist);
}

// [jobs] The background jobs, when they changed since the last note, as a hidden message before
// the user's: the system prompt stays the same (provider caches hold).
void TurnRunner::NoteJobs(Turn& t) {
  if (!settings_.jobs) return;
  std::string note = settings_.jobs->Note();
  if (note == jobs_note_) return;
  std::string text = note.empty() ? "No background jobs are running now." : note;
  jobs_note_ = std::move(note);
  RecordTurnMessage(parts_.recorder, t,
                    Message::Custom("background-jobs",
                                    "<system-reminder>\n" + text + "</system-reminder>", false));
}

// A stream rule or a steering message stopped the stream: what it brings joins the history, and
// the model is asked again within the same prompt, unless the user cancels in the pause (false).
bool TurnRunner::ApplyInterrupt(StreamInterrupt& interrupt, Turn& t) {
  const bool cancelled = interrupt.delay_ms > 0 && t.cancel.WaitFor(interrupt.delay_ms);
  for (Message& m : interrupt.inject) {
    const Message& added = RecordTurnMessage(parts_.recorder, t, std::move(m));
    if (!interrupt.silent) parts_.emitter.ShowMessage(t.step, added);
  }
  if (!interrupt.ttsr_rules.empty()) parts_.rules.Record(interrupt.ttsr_rules);
  return !cancelled && !t.cancel.cancelled();
}

// After a model request and its tool calls: how the prompt ends, or nullopt to ask again.
std::optional<TurnStop> TurnRunner::AfterTools(const Message& assistant, Turn& t) {
  if (t.hook_stopped) return TurnStop::kEndTurn;  // hooks: "continue": false
  AddFileRules(assistant, t);
  // Prose rules that matched without interrupting arrive now; the model answers them even
  // when it meant to stop.
  const bool followed = parts_.rules.InjectFollowUps(t);
  std::optional<TurnStop> stop = DecideNext(assistant, t);
  if (followed && stop && *stop == TurnStop::kEndTurn && !t.ends_turn) stop.reset();
  // Messages the user queued meanwhile: steering at the end of every model request, follow-ups
  // when the prompt would end, then a reminder of open todos; each asks the model again.
  if (!t.cancel.cancelled() && (!stop || *stop == TurnStop::kEndTurn)) {
    if (TakeQueued(t, /*ending=*/stop.has_value())) return std::nullopt;
    if (stop && RemindTodos(t)) return std::nullopt;
    if (stop && !parts_.queues.StopIfEmpty() && TakeQueued(t, /*ending=*/true)) return std::nullopt;
  }
  if (stop && *stop == TurnStop::kEndTurn && !t.ends_turn && StopHooks(t)) return std::nullopt;
  return stop;
}

// --- hooks (agent/hooks.h) ---

std::string TurnRunner::ChangeEntry() const {
  if (!prompt_entry_.empty()) return prompt_entry_;
  std::string leaf;
  parts_.recorder.Read([&](const History& h) { leaf = h.leaf(); });
  return leaf;
}

bool TurnRunner::PromptHooks(const std::vector<ContentBlock>& content, Turn& t) {
  if (!hooks_) return true;
  bool resumed = false;
  parts_.recorder.Read([&](const History& h) { resumed = !h.messages().empty(); });
  HookVerdict start = hooks_->SessionStarted(resumed, t.cancel);
  if (!start.context.empty())
    RecordTurnMessage(parts_.recorder, t,
                      HookContextMessage(config::HookEvent::kSessionStart, start.context));
  // A cancel keeps the prompt (recorded below, then the turn ends): only a refusal drops it.
  std::string prompt;
  for (const ContentBlock& b : content)
    if (b.type == BlockType::kText) prompt += b.text;
  HookVerdict v = hooks_->PromptSubmitted(prompt, t.cancel);
  if (!v.cancelled && (v.block || v.stop)) {
    const std::string& reason = v.block ? v.reason : v.stop_reason;
    parts_.emitter.Emit(event::Warning{
        "hooks",
        "A UserPromptSubmit hook refused the prompt" + (reason.empty() ? "." : ": " + reason),
        "Prompt refused", false});
    return false;
  }
  // Before the prompt, so that the prompt stays the last user message.
  if (!v.context.empty())
    RecordTurnMessage(parts_.recorder, t,
                      HookContextMessage(config::HookEvent::kUserPromptSubmit, v.context));
  return true;
}

bool TurnRunner::StopHooks(Turn& t) {
  if (!hooks_ || t.cancel.cancelled()) return false;
  HookVerdict v = hooks_->Stopping(t.stop_hook_runs > 0, t.cancel);
  if (!v.block || v.stop || v.cancelled || t.cancel.cancelled()) return false;
  ++t.stop_hook_runs;
  RecordTurnMessage(parts_.recorder, t,
                    Message::Custom("hookContext", "Stop hook feedback:\n" + v.reason, false));
  return true;
}

std::optional<TurnStop> TurnRunner::BeforeRequest(Turn& t) {
  if (auto stop = LimitReached(t)) return stop;
  parts_.compactor.BeforeRequest(t);
  return LimitReached(t);  // a compaction may have been cancelled
}

std::optional<Result<TurnResult>> TurnRunner::FailedRequest(const Error& error, const Message* said,
                                                            Turn& t) {
  if (parts_.compactor.AfterOverflow(error, said, t)) return std::nullopt;
  if (t.cancel.cancelled()) return Finish(t, TurnStop::kCancelled);
  parts_.queues.Stop();
  parts_.emitter.Emit(event::AgentEnd{&t.added});
  return Result<TurnResult>(error);
}

std::optional<TurnStop> TurnRunner::LimitReached(const Turn& t) const {
  const AgentConfig& agent = *settings_.agent;
  if (t.cancel.cancelled()) return TurnStop::kCancelled;
  if (t.step >= agent.max_steps) return TurnStop::kMaxTurnRequests;
  if (agent.limits.max_total_tokens > 0 && t.result.usage.total() >= agent.limits.max_total_tokens)
    return TurnStop::kMaxTokens;
  return std::nullopt;
}

Result<TurnResult> TurnRunner::Finish(Turn& t, TurnStop stop) {
  t.result.stop = stop;
  parts_.queues.Stop();
  parts_.transcript.AddUsage(t.result.usage);
  parts_.emitter.Emit(event::AgentEnd{&t.added});
  return t.result;
}

bool TurnRunner::TakeQueued(Turn& t, bool ending) {
  std::vector<std::vector<ContentBlock>> taken = parts_.queues.Take(ending);
  for (auto& content : taken) {
    Message m;
    m.role = Role::kUser;
    m.content = std::move(content);
    parts_.emitter.ShowMessage(t.step, RecordTurnMessage(parts_.recorder, t, std::move(m)));
  }
  return !taken.empty();
}

// Open todos at the end of a prompt: a reminder joins the history (true: ask again); every task
// done: the list is cleared.
bool TurnRunner::RemindTodos(Turn& t) {
  const TodoSettings& settings = settings_.todos;
  TodoTracker::AtEnd end = parts_.todos.CheckAtEnd(settings.auto_clear);
  if (end.cleared) {
    parts_.emitter.Emit(event::TodoAutoClear{});
    return false;
  }
  if (!settings.reminders || end.open.empty() || t.todo_reminders >= settings.max_reminders)
    return false;
  ++t.todo_reminders;
  parts_.emitter.Emit(event::TodoReminder{end.open, t.todo_reminders, settings.max_reminders});
  parts_.emitter.ShowMessage(
      t.step, RecordTurnMessage(parts_.recorder, t, TodoTracker::Reminder(end.open)));
  return true;
}

std::optional<TurnStop> TurnRunner::DecideNext(const Message& assistant, Turn& t) {
  if (t.ends_turn) {
    Message ask;
    ask.role = Role::kAssistant;
    ask.content.push_back(ContentBlock::Text(t.question));
    const std::string id = parts_.recorder.NewMessageId();
    RecordTurnMessage(parts_.recorder, t, ask, id);
    StreamDelta d;
    d.kind = DeltaKind::kText;
    d.text = t.question;
    parts_.emitter.Emit(event::MessageStart{t.step, &ask});
    parts_.emitter.Emit(event::MessageUpdate{t.step, &d, &ask, id});
    parts_.emitter.Emit(event::MessageEnd{t.step, &ask});
    return TurnStop::kEndTurn;
  }
  switch (assistant.stop_reason) {
    case StopReason::kMaxTokens:
      return TurnStop::kMaxTokens;
    case StopReason::kRefusal:
      return TurnStop::kRefusal;
    case StopReason::kPaused:
      return std::nullopt;  // asked again with the paused message last: the model goes on
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

void TurnRunner::EmitTurnEnd(const Turn& t, const Message* said) {
  parts_.emitter.Emit(event::TurnEnd{t.step, said, &t.tool_results});
  parts_.rules.OnTurnEnd();
}

// --- the model request and its stream ---

const SessionContext& TurnRunner::Context() const {
  if (context_) return *context_;
  context_ = settings_.context ? settings_.context() : SessionContext{};
  file_rules_ = std::make_unique<FileRules>(context_->file_rules, settings_.cwd, "");
  parts_.recorder.Read([&](const History& h) { file_rules_->Restore(h.messages()); });
  return *context_;
}

std::string TurnRunner::SystemPrompt() const {
  std::vector<std::string> names;
  for (const auto& tool : parts_.tools.List()) names.push_back(tool->name());
  return ComposeSystemPrompt(settings_.agent->instructions, settings_.client_prompt, Context().text,
                             settings_.cwd, names);
}

// Rules whose globs match a file the model's tool calls named join the history before the
// model is asked again (the system prompt stays as it was: the prompt cache holds).
void TurnRunner::AddFileRules(const Message& assistant, Turn& t) {
  Context();
  for (Message& m : file_rules_->Due(assistant))
    parts_.emitter.ShowMessage(t.step, RecordTurnMessage(parts_.recorder, t, std::move(m)));
}

ModelRequest TurnRunner::BuildRequest(const ModelChoice& model) const {
  ModelRequest req;
  req.model = model.model_id;
  req.system = SystemPrompt();
  parts_.recorder.Read([&](const History& h) { req.messages = h.messages(); });
  req.thinking = model.thinking;
  req.max_output_tokens = static_cast<int>(settings_.agent->limits.max_output_tokens);
  if (const config::WebSearchSpec& web = settings_.agent->web_search; web.enabled)
    req.web_search = {true, web.max_uses, web.allowed_domains, web.blocked_domains};
  const bool plan = parts_.selection.mode() == PermissionMode::kPlan;
  for (const auto& tool : parts_.tools.List()) {
    if (plan && !tool->offered_in_plan_mode()) continue;
    req.tools.push_back(ToolSchema{tool->name(), tool->description(), tool->parameters()});
  }
  return req;
}

TurnRunner::Streamed TurnRunner::StreamMessage(Turn& t) {
  const ModelChoice model = parts_.selection.model();
  parts_.tools.Refresh(t.cancel);
  // The stream has its own source, so a stream rule can stop it and the turn go on; the
  // prompt's cancellation reaches it with its cause.
  StreamControl::Flight flight = parts_.stream.Begin();
  ScopedCancelCallback link(t.cancel,
                            [stream = flight.stream, &t] { stream->Cancel(t.cancel.cause()); });
  parts_.rules.ResetBuffers();
  MessageBuilder builder;
  std::optional<StreamInterrupt> watched;
  // The entry id the message will be recorded with, known to its first chunk (the messageId).
  builder.SetId(parts_.recorder.NewMessageId());
  Result<ModelResponse> resp = Send(model, flight, builder, watched, t);
  if (std::optional<StreamInterrupt> asked = parts_.stream.End(); !watched && asked)
    watched = std::move(asked);
  Streamed out = Settle(std::move(resp), model, *flight.stream, std::move(watched), builder, t);
  t.result.usage.Add(out.message.usage());
  EmitUsage(t, out.message, model);
  if (!out.message.content.empty())
    RecordTurnMessage(parts_.recorder, t, out.message, builder.id());
  parts_.emitter.Emit(event::MessageEnd{t.step, &out.message});
  // Rules switched off during the stream are told after it, not inside the text being shown.
  parts_.rules.TellWarnings();
  return out;
}

Result<ModelResponse> TurnRunner::Send(const ModelChoice& model,
                                       const StreamControl::Flight& flight, MessageBuilder& builder,
                                       std::optional<StreamInterrupt>& watched, const Turn& t) {
  const ModelRequest req = BuildRequest(model);
  const int step = t.step;
  Emitter& emitter = parts_.emitter;
  emitter.Emit(event::MessageStart{step, &builder.message()});
  auto emit = [&](const StreamDelta& d) {
    emitter.Emit(event::MessageUpdate{step, &d, &builder.message(), builder.id()});
    // A call the provider runs itself is shown as a tool call that needs no running.
    EmitServerToolEvents(d, builder.message(), step, [&](const Event& e) { emitter.Emit(e); });
  };
  RetryHooks hooks;
  hooks.enabled = flight.retry;
  hooks.abort = flight.retry_abort->token();
  hooks.on_retry_start = [&](const RetryNotice& n) {
    emitter.Emit(event::AutoRetryStart{step, n});
  };
  hooks.on_retry_end = [&](bool success, int attempt, const std::string& err) {
    emitter.Emit(event::AutoRetryEnd{step, success, attempt, err});
  };
  CancelSource& stream = *flight.stream;
  auto stop = [&](std::optional<StreamInterrupt> hit) {
    watched = std::move(hit);
    stream.Cancel(watched->cause);
    return false;
  };
  auto on_delta = [&](const StreamDelta& d) {
    if (stream.cancelled()) return false;
    if (auto hit = parts_.rules.Watch(d, step)) return stop(std::move(hit));
    // The watcher sees the delta before anything of it leaves the engine.
    if (settings_.watcher)
      if (auto hit = settings_.watcher(d, builder.message())) return stop(std::move(hit));
    builder.Apply(d, emit);
    return !stream.cancelled();
  };
  Result<ModelResponse> resp = model.provider->Stream(req, on_delta, stream.token(), hooks);
  builder.Close(emit);
  return resp;
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

// The streamed message and how it ended. A stopped stream's message has no tool calls and is
// cancelled; the interrupt that stopped it (if the turn goes on) keeps what the editor was shown.
TurnRunner::Streamed TurnRunner::Settle(Result<ModelResponse> resp, const ModelChoice& model,
                                        CancelSource& stream,
                                        std::optional<StreamInterrupt> watched,
                                        MessageBuilder& builder, const Turn& t) {
  Streamed out;
  const bool stopped =
      stream.cancelled() || (resp.ok() && resp->message.stop_reason == StopReason::kCancelled);
  if (resp.ok()) {
    out.message = std::move(resp->message);
  } else {
    out.message = builder.Take(/*partial=*/true);
    if (!stopped) {
      out.message.stop_reason = StopReason::kError;
      out.message.assistant.Edit().error_message = resp.error().message;
      out.error = resp.error();
    }
  }
  out.message.role = Role::kAssistant;
  if (out.message.provider().empty()) out.message.assistant.Edit().provider = model.provider_name;
  if (out.message.model().empty()) out.message.assistant.Edit().model = model.model_id;
  if (!stopped) return out;
  out.aborted = stream.cause() == CancelCause::kNone ? CancelCause::kUser : stream.cause();
  out.message.content = WithoutToolCalls(std::move(out.message.content));
  out.message.stop_reason = StopReason::kCancelled;
  // A stream rule that fired stays fired even when the user cancelled at the same moment: its
  // injection joins the history (the prompt still ends), as the controller already counts it.
  if (!watched || (t.cancel.cancelled() && watched->ttsr_rules.empty())) return out;
  // What the editor was shown: the provider's own copy may hold the delta that was stopped.
  out.message.content = WithoutToolCalls(builder.Take(/*partial=*/true).content);
  out.interrupt = std::move(watched);
  if (!out.interrupt->keep_partial) out.message.content.clear();
  if (!out.interrupt->reason.empty())
    out.message.assistant.Edit().error_message = out.interrupt->reason;
  return out;
}

void TurnRunner::EmitUsage(const Turn& t, const Message& m, const ModelChoice& model) {
  if (m.usage().total() <= 0 || !model.provider || model.provider->ContextWindow() <= 0) return;
  event::UsageUpdate u;
  u.turn = t.step;
  u.context_used = m.usage().total();
  u.context_size = model.provider->ContextWindow();
  u.session_cost = parts_.transcript.TotalUsage().cost + t.result.usage.cost;
  parts_.emitter.Emit(u);
}

// --- commands ---

// The user's turn: links to MCP resources resolved, then a command expanded: the session's
// own, else a tool source's (an MCP prompt, fetched now). A source's command that fails keeps
// what the user typed, with the error for the model to pass on.
std::vector<ContentBlock> TurnRunner::ExpandCommand(std::vector<ContentBlock> content,
                                                    const CancelToken& cancel) const {
  parts_.tools.ResolveLinks(content, cancel);
  auto call = ParseSourceCall(settings_.commands, content);
  if (!call) return ExpandPromptCommand(settings_.commands, std::move(content));
  auto expanded = parts_.tools.ExpandCommand(call->name, ArgumentWords(call->args), cancel);
  if (!expanded) return content;
  if (!expanded->ok()) {
    const std::string why = "/" + call->name + " failed: " + expanded->error().message;
    parts_.emitter.Emit(event::Warning{"mcp", why, "MCP prompt", false});
    content.push_back(ContentBlock::Text("[" + why + ". Tell the user.]"));
    return content;
  }
  std::vector<ContentBlock> out = std::move(**expanded);
  for (size_t i = 1; i < content.size(); ++i) out.push_back(std::move(content[i]));
  return out;
}

// What a built-in command may do, within the prompt that called it.
class TurnRunner::Commands : public CommandHost {
 public:
  Commands(const TurnParts& parts, const AgentConfig& agent, Turn& t)
      : parts_(parts), agent_(agent), t_(t) {}
  void Note(const std::string& text) override { parts_.emitter.Note(0, text); }
  bool Compact(const std::string& instructions) override {
    (void)parts_.compactor.Run("manual", instructions, t_.cancel, false, &t_);
    return !t_.cancel.cancelled();
  }
  std::string CurrentModel() const override {
    const ModelChoice now = parts_.selection.model();
    return now.provider_name + "/" + now.model_id;
  }
  std::vector<std::string> OfferedModels() const override {
    std::vector<std::string> ids;
    for (const ModelOption& m : agent_.models) ids.push_back(m.id());
    return ids;
  }
  Status SelectModel(const std::string& id) override { return parts_.selection.SelectModel(id); }
  std::string Name() const override { return parts_.branching.Name(); }
  Status SetName(const std::string& name) override { return parts_.branching.SetName(name); }
  Result<std::filesystem::path> Export(const std::string& path) override {
    return parts_.transcript.ExportHtml(path);
  }
  Result<RewindOutcome> Rewind(size_t nth_last) override {  // [rewind]
    const std::vector<BranchPoint> users = parts_.branching.UserMessages();
    if (nth_last == 0 || nth_last > users.size())
      return MakeError(ErrorCode::kInvalidParams,
                       users.empty() ? std::string("there is no message to go back before")
                                     : "there are " + std::to_string(users.size()) +
                                           " messages to go back before");
    RewindRequest r;
    r.entry_id = users[users.size() - nth_last].entry_id;
    r.in_turn = true;
    r.prefill_editor = true;
    r.cancel = t_.cancel;
    return parts_.branching.Rewind(r);
  }

 private:
  const TurnParts& parts_;
  const AgentConfig& agent_;
  Turn& t_;
};

Result<TurnResult> TurnRunner::RunCommand(const CommandCall& call, const CancelToken& cancel) {
  Turn t;
  t.cancel = cancel;
  parts_.emitter.Emit(event::AgentStart{});
  // A command asks no model for a reply: messages sent meanwhile start a prompt of their own.
  parts_.queues.Stop();
  Commands host(parts_, *settings_.agent, t);
  const bool cancelled = call.command->run(host, call.args);
  return Finish(t, cancelled ? TurnStop::kCancelled : TurnStop::kEndTurn);
}

}  // namespace lousho::agent

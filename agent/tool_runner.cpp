// Running an assistant message's tool calls.
#include "agent/tool_runner.h"

#include <map>
#include <system_error>
#include <thread>

#include "agent/checkpoints.h"
#include "agent/git_snapshot.h"
#include "agent/input_queues.h"
#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/rule_watch.h"
#include "agent/sandbox_guard.h"
#include "agent/selection.h"
#include "agent/todo_tracker.h"
#include "agent/tools/tool_util.h"
#include "agent/toolset.h"
#include "agent/turn.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent {

// A tool call as it runs: what the editor was shown and the context it runs in.
struct ToolCallRunner::CallRun {
  event::ToolCall shown;
  std::shared_ptr<Tool> tool;
  ToolContext ctx;
  ToolOutput out;
};

ToolCallRunner::ToolCallRunner(ToolRunParts parts, ToolRunPlace place,
                               std::vector<PermissionRule> rules)
    : parts_(parts), place_(std::move(place)), policy_(std::move(rules), place_.cwd) {}

bool ToolCallRunner::Run(const Message& assistant, Turn& t) {
  // [rewind] Checkpoints are keyed by the assistant message's entry (the leaf now).
  parts_.recorder.Read([this](const History& h) { calls_entry_ = h.leaf(); });
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
        carried_on = RunOne(*calls[i], t);
        next = i + 1;
      }
    }
    if (!carried_on) {
      // Every call of the message still gets a result, so the history stays valid.
      Fail(calls, next, "Cancelled by the user.", t);
      return false;
    }
    if (next < calls.size() && t.hook_stopped) {  // hooks: "continue": false
      Fail(calls, next, "Skipped: a hook stopped the prompt.", t);
      return true;
    }
    if (next < calls.size() && parts_.queues.SteeringPending()) {
      // Immediate interrupt mode: the user's new message comes before the remaining calls.
      Fail(calls, next, "Skipped: the user sent a new message first.", t);
      return true;
    }
    i = next;
  }
  return true;
}

void ToolCallRunner::Fail(const std::vector<const ContentBlock*>& calls, size_t from,
                          const char* why, Turn& t) {
  for (size_t j = from; j < calls.size(); ++j) {
    CallRun run = Start(*calls[j], nullptr, t);
    Complete(run, ToolOutput::Error(why), t);
  }
}

ToolContext ToolCallRunner::MakeContext(const CancelToken& cancel) {
  ToolContext ctx;
  ctx.session_id = place_.session_id;
  ctx.cwd = place_.cwd;
  ctx.roots = place_.roots;
  if (place_.sandbox != nullptr) ctx.sandbox = place_.sandbox->PolicyFor(parts_.selection.mode());
  ctx.cancel = cancel;
  ctx.services = place_.services;
  ctx.plan = parts_.todos.plan();
  ctx.jobs = place_.jobs;
  ctx.saved_outputs = place_.saved_outputs;
  // The model reads and greps the outputs saved for it, wherever the session file lives.
  if (place_.saved_outputs) ctx.roots.push_back(place_.saved_outputs->dir());
  ctx.set_mode = [&selection = parts_.selection](const std::string& id) -> Status {
    auto mode = ParsePermissionMode(id);
    if (!mode) return MakeError(ErrorCode::kInvalidMode, "unknown mode '" + id + "'");
    return selection.SetMode(*mode);
  };
  if (CheckpointStore* store = place_.checkpoints) {  // [rewind]
    ctx.before_change = [store, entry = calls_entry_](const std::filesystem::path& path,
                                                      const std::string* after) {
      Status kept = store->KeepBefore(entry, path, after);
      if (!kept.ok()) log::Warn("checkpoint of " + path.string() + ": " + kept.error().message);
    };
  }
  return ctx;
}

ToolCallRunner::CallRun ToolCallRunner::Start(const ContentBlock& call,
                                              const std::shared_ptr<Tool>& tool, Turn& t) {
  CallRun run;
  run.tool = tool;
  run.ctx = MakeContext(t.cancel);
  run.ctx.tool_call_id = call.id();
  run.ctx.plan_mode = parts_.selection.mode() == PermissionMode::kPlan;
  run.shown.id = call.id();
  run.shown.name = call.name();
  run.shown.args = &call.arguments();
  if (tool) {
    run.shown.title = tool->Title(call.arguments(), run.ctx);
    run.shown.kind = tool->kind();
    run.shown.locations = tool->Locations(call.arguments(), run.ctx);
  } else {
    run.shown.title = call.name();
  }
  parts_.emitter.Emit(event::ToolExecutionStart{t.step, &run.shown});
  return run;
}

void ToolCallRunner::ShowSubagent(CallRun& run, Turn& t) {
  // A subagent's steps come from its own worker, and several may run at once: one at a time
  // here. The session's worker waits in the tool meanwhile, so it emits nothing of its own.
  run.ctx.on_subagent = [this, &run, &t](const event::SubagentStep& step) {
    std::lock_guard<std::mutex> lock(subagent_mu_);
    event::ToolExecutionUpdate u{t.step, &run.shown, event::ToolExecutionUpdate::Phase::kSubagent,
                                 "",     "",         ""};
    u.subagent = &step;
    parts_.emitter.Emit(u);
  };
}

void ToolCallRunner::Complete(CallRun& run, ToolOutput out, Turn& t) {
  t.result.usage.Add(out.usage);  // a subagent's model calls count as the prompt's
  if (!out.details.isNull() && !JsonFitsIn(out.details, kMaxToolDetailsBytes))
    out.details = DetailsTooLarge();
  parts_.emitter.Emit(event::ToolExecutionEnd{t.step, &run.shown, &out, out.is_error});
  parts_.rules.RemindInResult(run.shown.id, out);
  Message tr;
  tr.role = Role::kToolResult;
  tr.tool_call_id = run.shown.id;
  tr.tool_name = run.shown.name;
  tr.is_error = out.is_error;
  tr.content = std::move(out.content);
  tr.tool.Edit().title = run.shown.title;
  tr.tool.Edit().kind = run.shown.kind;
  tr.tool.Edit().args = run.shown.args ? *run.shown.args : Json::Value();
  tr.tool.Edit().locations = run.shown.locations;
  tr.tool.Edit().diffs = std::move(out.diffs);
  tr.tool.Edit().details = std::move(out.details);
  tr.tool.Edit().terminal_id = out.terminal_id;
  t.tool_results.push_back(tr);
  RecordTurnMessage(parts_.recorder, t, std::move(tr));
}

size_t ToolCallRunner::ParallelRun(const std::vector<const ContentBlock*>& calls,
                                   size_t first) const {
  const PermissionMode mode = parts_.selection.mode();
  size_t n = 0;
  std::map<std::string, int> side_by_side;  // calls of tools that run beside others (subagents)
  for (size_t i = first; i < calls.size(); ++i, ++n) {
    auto tool = parts_.tools.Find(calls[i]->name());
    if (!tool || !calls[i]->arguments().isObject()) break;
    if (tool->max_parallel() > 0) {
      if (++side_by_side[tool->name()] > tool->max_parallel()) break;
    } else if (!tool->read_only() ||
               (tool->kind() != ToolKind::kRead && tool->kind() != ToolKind::kSearch)) {
      break;  // only plain look-ups: a question or a plan change must keep its place
    }
    if (policy_.Evaluate(*tool, calls[i]->arguments(), mode).action != PermissionAction::kAllow)
      break;
    if (Hooked(calls[i]->name())) break;  // hooks run with the call, one at a time
  }
  return n;
}

bool ToolCallRunner::RunParallel(const std::vector<const ContentBlock*>& calls, Turn& t) {
  std::vector<CallRun> runs;
  runs.reserve(calls.size());
  for (const ContentBlock* call : calls) {
    runs.push_back(Start(*call, parts_.tools.Find(call->name()), t));
    runs.back().ctx.plan = nullptr;  // look-ups never touch the plan or the mode
    runs.back().ctx.set_mode = nullptr;
  }
  for (CallRun& run : runs) {
    parts_.emitter.Emit(event::ToolExecutionUpdate{
        t.step, &run.shown, event::ToolExecutionUpdate::Phase::kInProgress, "", "", ""});
    ShowSubagent(run, t);
  }
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
      threads.emplace_back(run_one, &runs[k], &calls[k]->arguments());
    } catch (const std::system_error&) {
      run_one(&runs[k], &calls[k]->arguments());  // no thread to be had: run it here
    }
  }
  run_one(&runs[0], &calls[0]->arguments());
  for (auto& th : threads) th.join();
  const bool cancelled = t.cancel.cancelled();
  for (CallRun& run : runs) {
    if (cancelled && !run.out.is_error) run.out.is_error = true;
    Complete(run, std::move(run.out), t);
  }
  return !cancelled;
}

PermissionDecision ToolCallRunner::Ask(const CallRun& run, const ContentBlock& call,
                                       const CancelToken& cancel) {
  // A client that cannot ask its user runs what the rules and the mode leave to the user.
  if (!place_.services.permissions) return PermissionDecision::kAllowOnce;
  PermissionRequest req;
  req.tool_call_id = call.id();
  req.tool_name = call.name();
  req.title = run.shown.title;
  req.kind = run.shown.kind;
  req.raw_input = call.arguments();
  req.locations = run.shown.locations;
  req.diffs = run.tool->Preview(call.arguments(), run.ctx);
  return place_.services.permissions->RequestPermission(place_.session_id, req, cancel);
}

std::optional<bool> ToolCallRunner::Permit(CallRun& run, const ContentBlock& call, Turn& t,
                                           HookDecision hook) {
  PermissionVerdict verdict =
      policy_.Evaluate(*run.tool, call.arguments(), parts_.selection.mode());
  // Hooks: "ask" asks even where the rules allow; "allow" skips asking, never a rule's denial.
  if (verdict.action != PermissionAction::kDeny && hook == HookDecision::kAsk)
    verdict.action = PermissionAction::kAsk;
  if (verdict.action == PermissionAction::kAsk && hook == HookDecision::kAllow)
    verdict.action = PermissionAction::kAllow;
  if (verdict.action == PermissionAction::kDeny) {
    Complete(run, ToolOutput::Error(verdict.reason.empty() ? "Permission denied." : verdict.reason),
             t);
    return true;
  }
  // [sandbox] "sandbox": "off" asks in every mode unless the spec opts out (agent/sandbox_guard.h).
  const OutsideSandbox outside =
      place_.sandbox != nullptr
          ? place_.sandbox->Outside(*run.tool, call.arguments(), parts_.selection.mode())
          : OutsideSandbox();
  if (!outside.refusal.empty()) {
    Complete(run, ToolOutput::Error(outside.refusal), t);
    return true;
  }
  if (outside.wanted) run.ctx.sandbox.reset();
  if (outside.asks) run.shown.title = outside.title;
  verdict.action = outside.asks      ? PermissionAction::kAsk
                   : outside.allowed ? PermissionAction::kAllow
                                     : verdict.action;
  if (verdict.action != PermissionAction::kAsk) return std::nullopt;
  // A call that cannot run (a patch naming a path outside the workspace) is not asked about.
  if (std::string why = run.tool->CheckBeforeAsking(call.arguments(), run.ctx); !why.empty()) {
    Complete(run, ToolOutput::Error(why), t);
    return true;
  }
  switch (Ask(run, call, t.cancel)) {
    case PermissionDecision::kCancelled:
      Complete(run, ToolOutput::Error("Cancelled by the user."), t);
      return false;
    case PermissionDecision::kRejectAlways:
      policy_.RememberAnswer(*run.tool, call.arguments(), PermissionAction::kDeny);
      Complete(run, ToolOutput::Error("The user rejected this tool call."), t);
      return true;
    case PermissionDecision::kRejectOnce:
      Complete(run, ToolOutput::Error("The user rejected this tool call."), t);
      return true;
    case PermissionDecision::kAllowAlways:
      if (outside.asks)
        place_.sandbox->RememberOutside(*run.tool, call.arguments());
      else
        policy_.RememberAnswer(*run.tool, call.arguments(), PermissionAction::kAllow);
      break;
    case PermissionDecision::kAllowOnce:
      break;
  }
  if (t.cancel.cancelled()) {
    Complete(run, ToolOutput::Error("Cancelled by the user."), t);
    return false;
  }
  return std::nullopt;
}

ToolOutput ToolCallRunner::Execute(CallRun& run, const ContentBlock& call, Turn& t) {
  using Phase = event::ToolExecutionUpdate::Phase;
  Emitter& emitter = parts_.emitter;
  emitter.Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kInProgress, "", "", ""});
  run.ctx.on_terminal = [&](const std::string& terminal_id) {
    emitter.Emit(
        event::ToolExecutionUpdate{t.step, &run.shown, Phase::kTerminal, terminal_id, "", ""});
  };
  run.ctx.on_output = [&](const std::string& output, const std::string& delta) {
    emitter.Emit(
        event::ToolExecutionUpdate{t.step, &run.shown, Phase::kPartialOutput, "", output, delta});
  };
  run.ctx.on_progress = [&](const std::string& note) {
    emitter.Emit(event::ToolExecutionUpdate{t.step, &run.shown, Phase::kProgress, "", note, ""});
  };
  if (place_.sandbox != nullptr && run.tool->kind() == ToolKind::kExecute)
    if (std::string notice = place_.sandbox->TakeNotice(); !notice.empty())
      emitter.Emit(event::Warning{"sandbox", notice, "Sandbox", false});
  ShowSubagent(run, t);
  // [rewind] A command's changes are seen as the working tree's before and after.
  CommandSnapshot snapshot =
      run.tool->kind() == ToolKind::kExecute
          ? CommandSnapshot::Begin(place_.checkpoints, calls_entry_, place_.cwd)
          : CommandSnapshot();
  ToolOutput out;
  try {
    out = run.tool->Run(call.arguments(), run.ctx);
  } catch (const std::exception& e) {
    // A tool's bug fails its call, never the process.
    out = ToolOutput::Error(call.name() + " failed: " + e.what());
  }
  snapshot.End();
  return out;
}

bool ToolCallRunner::RunOne(const ContentBlock& call, Turn& t) {
  CallRun run = Start(call, parts_.tools.Find(call.name()), t);
  if (!run.tool) {
    Complete(run, ToolOutput::Error("Unknown tool '" + call.name() + "'."), t);
    return true;
  }
  if (!call.arguments().isObject()) {
    Complete(run, ToolOutput::Error("Tool arguments must be a JSON object."), t);
    return true;
  }
  // --- hooks: PreToolUse may deny, ask, allow or rewrite the call ---
  ContentBlock rewritten;
  HookDecision decision = HookDecision::kNone;
  if (std::optional<bool> done = PreToolHooks(run, call, rewritten, decision, t)) return *done;
  const ContentBlock& used = rewritten.arguments().isObject() ? rewritten : call;
  // --- end of hooks ---
  if (std::optional<bool> done = Permit(run, used, t, decision)) return *done;
  ToolOutput out = Execute(run, used, t);
  if (out.plan_changed) parts_.emitter.Emit(event::PlanUpdate{parts_.todos.RecordPlan()});
  if (out.ends_turn) {
    t.ends_turn = true;
    t.question = out.content.empty() ? "" : out.content[0].text;
    out.content = {
        ContentBlock::Text("The question was shown to the user; their answer is the "
                           "next user message.")};
    Complete(run, std::move(out), t);
    return true;
  }
  const bool cancelled = t.cancel.cancelled();
  if (cancelled && !out.is_error) out.is_error = true;
  PostToolHooks(used, out, t);  // hooks: PostToolUse may add context
  Complete(run, std::move(out), t);
  return !cancelled;
}

// --- hooks (agent/hooks.h) ---

bool ToolCallRunner::Hooked(const std::string& tool) const {
  return hooks_ && (hooks_->Has(config::HookEvent::kPreToolUse, tool) ||
                    hooks_->Has(config::HookEvent::kPostToolUse, tool));
}

std::optional<bool> ToolCallRunner::PreToolHooks(CallRun& run, const ContentBlock& call,
                                                 ContentBlock& rewritten, HookDecision& decision,
                                                 Turn& t) {
  if (!hooks_ || !hooks_->Has(config::HookEvent::kPreToolUse, call.name())) return std::nullopt;
  HookVerdict v = hooks_->BeforeTool(call.name(), call.id(), call.arguments(), t.cancel);
  if (v.cancelled || t.cancel.cancelled()) {
    Complete(run, ToolOutput::Error("Cancelled by the user."), t);
    return false;
  }
  if (v.stop) t.hook_stopped = true;
  if (v.decision == HookDecision::kDeny || v.stop) {
    std::string why = v.decision == HookDecision::kDeny ? "A hook denied this tool call"
                                                        : "A hook stopped the prompt";
    const std::string& reason = v.decision == HookDecision::kDeny ? v.reason : v.stop_reason;
    Complete(run, ToolOutput::Error(why + (reason.empty() ? "." : ": " + reason)), t);
    return true;
  }
  decision = v.decision;
  if (v.updated_input) {
    rewritten = call;
    rewritten.more.Edit().arguments = std::move(*v.updated_input);
    run.shown.args = &rewritten.arguments();
  }
  return std::nullopt;
}

void ToolCallRunner::PostToolHooks(const ContentBlock& call, ToolOutput& out, Turn& t) {
  if (!hooks_ || out.is_error || t.cancel.cancelled() ||
      !hooks_->Has(config::HookEvent::kPostToolUse, call.name()))
    return;
  Json::Value response(Json::objectValue);
  std::string text;
  for (const ContentBlock& b : out.content)
    if (b.type == BlockType::kText) text += b.text;
  response["content"] = text;
  if (!out.details.isNull()) response["details"] = out.details;
  HookVerdict v = hooks_->AfterTool(call.name(), call.id(), call.arguments(), response, t.cancel);
  if (v.block) v.context.push_back(v.reason);
  if (!v.context.empty())
    out.content.push_back(ContentBlock::Text(
        "\n" + HookContextMessage(config::HookEvent::kPostToolUse, v.context).TextContent()));
  if (v.stop) t.hook_stopped = true;
}

}  // namespace lousho::agent

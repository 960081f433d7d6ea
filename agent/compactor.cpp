// Running compactions in a session: when, the summary request, the entry and its events.
#include "agent/compactor.h"

#include "agent/hooks.h"
#include "agent/recorder.h"
#include "agent/selection.h"
#include "agent/transcript.h"
#include "agent/turn.h"
#include "agent/turn_gate.h"

namespace lousho::agent {

Compactor::Compactor(std::shared_ptr<const AgentConfig> agent, Emitter& emitter, Recorder& recorder,
                     const Selection& selection, Transcript& transcript, TurnGate& gate)
    : agent_(std::move(agent)),
      emitter_(emitter),
      recorder_(recorder),
      selection_(selection),
      transcript_(transcript),
      gate_(gate),
      auto_(agent_->compaction.auto_compact) {}

Status Compactor::Compact(std::string instructions,
                          std::function<void(Result<CompactionResult>)> done) {
  auto source = gate_.Begin();
  if (!source.ok()) return source.error();
  Status st = post_([this, source = *source, instructions = std::move(instructions),
                     done = std::move(done)]() mutable {
    Result<CompactionResult> result = Run("manual", instructions, source->token(), false, nullptr);
    gate_.End();
    done(std::move(result));
  });
  if (!st.ok()) gate_.End();
  return st;
}

void Compactor::BeforeRequest(Turn& t) {
  if (t.threshold_failed || !auto_enabled()) return;
  const ModelChoice m = selection_.model();
  if (!m.provider) return;
  long long tokens = 0;
  recorder_.Read([&](const History& h) { tokens = h.ContextTokens(); });
  CompactionSettings settings = agent_->compaction;
  settings.auto_compact = true;  // the session's own switch (SetAuto) was checked
  if (!ShouldCompact(settings, tokens, m.provider->ContextWindow())) return;
  // A failure leaves the history as it was: the request may still fit, so the turn goes on.
  if (!Run("threshold", "", t.cancel, false, &t).ok()) t.threshold_failed = true;
}

bool Compactor::AfterOverflow(const Error& error, const Message* said, Turn& t) {
  if (error.code != ErrorCode::kProviderContextOverflow || t.overflow_compacted || said != nullptr)
    return false;
  // The request did not fit: compact once and send it again (the prompt goes on, so it still
  // takes queued messages).
  t.overflow_compacted = true;
  return Run("overflow", "", t.cancel, /*will_retry=*/true, &t).ok();
}

Result<CompactionResult> Compactor::Run(const std::string& reason, const std::string& instructions,
                                        const CancelToken& cancel, bool will_retry, Turn* t) {
  // Hooks: PreCompact runs first (it cannot stop the compaction).
  if (hooks_) hooks_->BeforeCompact(reason == "manual" ? "manual" : "auto", instructions, cancel);
  const ModelChoice model = selection_.model();
  event::AutoCompactionStart start;
  start.id = "compaction-" + std::to_string(++runs_);
  start.reason = reason;
  Result<CompactionPlan> plan = MakeError(ErrorCode::kCompaction, "not planned");
  recorder_.Read([&](const History& h) {
    start.tokens_before = h.ContextTokens();
    plan = PlanCompaction(h, agent_->compaction.keep_recent_tokens);
  });
  emitter_.Emit(start);
  event::AutoCompactionEnd end;
  end.id = start.id;
  end.reason = reason;
  end.tokens_before = start.tokens_before;
  auto fail = [&](Error e) -> Error {
    end.aborted = e.code == ErrorCode::kCancelled;
    if (!end.aborted) end.error = e.message;
    emitter_.Emit(end);
    return e;
  };
  if (!plan.ok()) return fail(plan.error());
  if (!model.provider) return fail(MakeError(ErrorCode::kModelUnknown, "no model to ask"));
  Result<std::string> summary = Summarize(model, *plan, instructions, cancel, t, start.id);
  if (!summary.ok()) return fail(summary.error());
  CompactionResult result = Commit(reason, *plan, *summary, start.tokens_before);
  end.will_retry = will_retry;
  end.summary = result.summary;
  end.first_kept_id = result.first_kept_id;
  end.tokens_after = result.tokens_after;
  emitter_.Emit(end);
  TellContext(model, result, t);
  return result;
}

// The summary request; a cancel is a kCancelled error.
Result<std::string> Compactor::Summarize(const ModelChoice& model, const CompactionPlan& plan,
                                         const std::string& instructions, const CancelToken& cancel,
                                         Turn* t, const std::string& id) {
  const std::vector<Message> prompt{SummaryPrompt(plan.to_summarize, instructions)};
  ModelRequest req;
  req.model = model.model_id;
  req.system = SummarySystemPrompt();
  req.messages = prompt;
  req.max_output_tokens = static_cast<int>(agent_->limits.max_output_tokens);
  // The summary's text is shown as it comes (ACP compaction_summary_chunk).
  auto on_delta = [&](const StreamDelta& d) {
    if (d.kind == DeltaKind::kText && !d.text.empty())
      emitter_.Emit(event::CompactionSummaryDelta{id, d.text});
    return !cancel.cancelled();
  };
  Result<ModelResponse> resp = model.provider->Stream(req, on_delta, cancel, RetryHooks{});
  if (resp.ok()) {
    // The summary costs like any request: the prompt's (its limits count it), or the session's.
    if (t != nullptr) {
      t->result.usage.Add(resp->message.usage());
    } else {
      transcript_.AddUsage(resp->message.usage());
    }
  }
  if (cancel.cancelled() || (resp.ok() && resp->message.stop_reason == StopReason::kCancelled))
    return MakeError(ErrorCode::kCancelled, "the compaction was cancelled");
  if (!resp.ok()) return resp.error();
  if (resp->message.stop_reason == StopReason::kError)
    return MakeError(ErrorCode::kCompaction, resp->message.error_message());
  return SummaryFromReply(resp->message);
}

CompactionResult Compactor::Commit(const std::string& reason, const CompactionPlan& plan,
                                   const std::string& summary, long long tokens_before) {
  Entry e;
  e.kind = EntryKind::kCompaction;
  e.more.Edit().summary = summary;
  e.more.Edit().first_kept_id = plan.first_kept_id;
  e.more.Edit().tokens_before = tokens_before;
  e.timestamp_ms = NowMs();
  CompactionResult result;
  result.summary = summary;
  result.first_kept_id = plan.first_kept_id;
  result.tokens_before = tokens_before;
  result.tokens_after = EstimateTokens(CompactionSummaryMessage(e)) + plan.kept_tokens;
  e.more.Edit().data = Json::Value(Json::objectValue);
  e.more.Edit().data["reason"] = reason;
  e.more.Edit().data["tokensAfter"] = static_cast<Json::Int64>(result.tokens_after);
  recorder_.Append(std::move(e));
  return result;
}

// The editor's context meter drops now, not at the next reply (an estimate until then).
void Compactor::TellContext(const ModelChoice& model, const CompactionResult& result,
                            const Turn* t) {
  if (model.provider->ContextWindow() <= 0) return;
  event::UsageUpdate u;
  u.turn = t ? t->step : 0;
  u.context_used = result.tokens_after;
  u.context_size = model.provider->ContextWindow();
  u.session_cost = transcript_.TotalUsage().cost + (t ? t->result.usage.cost : 0);
  emitter_.Emit(u);
}

}  // namespace lousho::agent

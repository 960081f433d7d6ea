// Compaction as a session runs it: manual (`/compact`, the RPC door's `compact`), automatic
// before a model request once the context reaches the threshold, and once after a context
// overflow. The summarizer itself is compaction.h's.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agent/agent_config.h"
#include "agent/compaction.h"
#include "agent/outbox.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

class HookRunner;
class Recorder;
class Selection;
class Transcript;
class TurnGate;
struct Turn;

// What a compaction did.
struct CompactionResult {
  std::string summary;
  std::string first_kept_id;
  long long tokens_before = 0;
  long long tokens_after = 0;  // estimated
};

// The engine's side runs on the worker; Compact, SetAuto and auto_enabled from any thread.
class Compactor {
 public:
  Compactor(std::shared_ptr<const AgentConfig> agent, Emitter& emitter, Recorder& recorder,
            const Selection& selection, Transcript& transcript, TurnGate& gate);
  Compactor(const Compactor&) = delete;
  Compactor& operator=(const Compactor&) = delete;
  void Attach(Poster post) { post_ = std::move(post); }
  // The session's hooks (PreCompact, agent/hooks.h); null: none.
  void UseHooks(HookRunner* hooks) { hooks_ = hooks; }

  // Summarizes the older history into a compaction entry, keeping the recent turns. Refused
  // while a prompt runs; the session's Cancel() aborts it. The auto_compaction_start/end events
  // (reason "manual") go out on the worker, then `done` runs. A failure or a cancel leaves the
  // history untouched.
  [[nodiscard]] Status Compact(std::string instructions,
                               std::function<void(Result<CompactionResult>)> done);
  // Automatic compaction (the spec's `compaction.auto` until changed).
  void SetAuto(bool enabled) { auto_.store(enabled); }
  bool auto_enabled() const { return auto_.load(); }

  // Before a model request: compacts when the context has reached the threshold of the model's
  // window (a failure: not again this prompt).
  void BeforeRequest(Turn& t);
  // After a failed request: true when it was a context overflow (the first of the prompt, with
  // nothing said) and a compaction succeeded, so the request is sent again.
  bool AfterOverflow(const Error& error, const Message* said, Turn& t);
  // One compaction. `t`: the prompt it runs in (its usage counts the summary request); null
  // outside a prompt.
  Result<CompactionResult> Run(const std::string& reason, const std::string& instructions,
                               const CancelToken& cancel, bool will_retry, Turn* t);

 private:
  Result<std::string> Summarize(const ModelChoice& model, const CompactionPlan& plan,
                                const std::string& instructions, const CancelToken& cancel, Turn* t,
                                const std::string& id);
  CompactionResult Commit(const std::string& reason, const CompactionPlan& plan,
                          const std::string& summary, long long tokens_before);
  void TellContext(const ModelChoice& model, const CompactionResult& result, const Turn* t);

  std::shared_ptr<const AgentConfig> agent_;
  Emitter& emitter_;
  Recorder& recorder_;
  const Selection& selection_;
  Transcript& transcript_;
  TurnGate& gate_;
  Poster post_;
  std::atomic<bool> auto_;
  int runs_ = 0;  // worker only: names compaction runs
  HookRunner* hooks_ = nullptr;
};

}  // namespace lousho::agent

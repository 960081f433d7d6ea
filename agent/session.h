// The session engine: one conversation, its history, its model and tools, and the turn loop run
// on the session's strand of a worker pool. Knows no protocol: it emits Events and asks
// ClientServices. Session composes the parts (each one job, below) and owns the lock discipline.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/branching.h"
#include "agent/builtin_commands.h"
#include "agent/compactor.h"
#include "agent/history.h"
#include "agent/input_queues.h"
#include "agent/selection.h"
#include "agent/session_context.h"
#include "agent/session_store.h"
#include "agent/skills/discovery.h"
#include "agent/stream_control.h"
#include "agent/todo_tracker.h"
#include "agent/toolset.h"
#include "agent/transcript.h"
#include "agent/turn.h"
#include "core/client_services.h"
#include "core/events.h"
#include "support/cancel.h"
#include "support/status.h"
#include "support/worker_pool.h"

namespace lousho::agent {

class CheckpointStore;
class Emitter;
class HookRunner;
class NoticeBoard;
class Recorder;
class Rewinder;
class RuleWatch;
class SandboxGuard;
class ToolCallRunner;
class TurnGate;
class TurnRunner;

struct SessionOptions {
  std::string id;
  std::filesystem::path cwd;  // absolute
  std::vector<std::filesystem::path> additional_roots;
  ClientServices services;     // what the client offers (each may be null); outlives the session
  EventSink sink;              // called on the session's worker, in order
  WorkerPool* pool = nullptr;  // outlives the session; null: a process-wide pool
  StreamWatcher watcher;       // may be empty
  TodoSettings todos;
  bool auto_title = true;  // the first prompt's gist names the session (the RPC door: off)
  // A stored history to continue (parents before children) and its leaf (empty: the last; any
  // other is a branch and recorded as one, see Branching::SetLeaf). The mode, plan, todo phases
  // and name recorded on its branch are restored.
  std::vector<Entry> seed;
  std::string seed_leaf;
  // Receives every entry appended from now on (the session file); may be null.
  std::shared_ptr<HistoryRecorder> recorder;
  std::string session_file;  // the recorder's file, for stats; empty: none
  // The editor's system prompt (ACP `systemPrompt`); recorded when it differs from the one the
  // seed holds last. None: the seed's, if any.
  std::optional<ClientPrompt> system_prompt;
  // Builds the session's context (project files, rules, environment) once, at the first model
  // request; empty: none.
  ContextSource context;
};

// What a session is, fixed at creation.
struct SessionInfo {
  std::string id;
  std::filesystem::path cwd;
  // The folders the session's tools may touch; roots[0] == cwd.
  std::vector<std::filesystem::path> roots;
  std::string session_file;  // empty: not saved
  // What opening the session's file repaired (an entry whose parent the file lacked), one line
  // each.
  std::vector<std::string> load_warnings;
  // Read when the session opened (agent/skills/, SessionCommands): its prompt commands (the
  // spec's, then the files'; the built-ins are kBuiltinCommands), its skills, and the files
  // and commands left out, one line each (also logged).
  std::vector<config::SlashCommand> commands;
  std::vector<skills::Skill> skills;
  std::vector<std::string> skill_notices;
  // [sandbox] The sandbox its stdio MCP servers run in (the spec's `sandbox.mcp`); null: none.
  std::shared_ptr<const SandboxPolicy> mcp_sandbox;
  // The agent's `proxy:` for its HTTP MCP servers; unset: the environment's.
  ProxySetting mcp_proxy;
};

// Thread-safe: every public method (and every part's) may be called from any thread, unless a
// part says otherwise. The turn and every event run on the session's strand (one task at a
// time); an idle session holds no thread. Held by shared_ptr: queued work keeps it alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  static Result<std::shared_ptr<Session>> Create(std::shared_ptr<const AgentConfig> agent,
                                                 SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionInfo& info() const { return info_; }

  // Starts a turn (or runs a built-in command). Fails with LOUSHO_SESSION_BUSY when something
  // runs. `done` runs on the worker after every event of the turn has been emitted.
  [[nodiscard]] Status Prompt(std::vector<ContentBlock> content,
                              std::function<void(Result<TurnResult>)> done);
  // Cancels the running turn (or compaction), if any, with that cause. Returns at once.
  void Cancel(CancelCause cause = CancelCause::kUser);
  // Cancels the running turn and refuses new prompts; `done` runs on the worker once the turn
  // has answered. Returns at once.
  void Close(std::function<void()> done, CancelCause cause = CancelCause::kUser);
  // Blocks until no work of this session is queued or running (never from the worker).
  void WaitIdle();
  bool busy() const;

  // The parts a door reaches (each thread-safe).
  InputQueues& queues() const { return *queues_; }         // steering, follow-ups, context
  Selection& selection() const { return *selection_; }     // mode, model, thinking
  TodoTracker& todos() const { return *todos_; }           // the todo list
  ToolSet& tools() const { return *tools_; }               // the session's tools
  Transcript& transcript() const { return *transcript_; }  // messages, entries, stats, export
  Branching& branches() const { return *branching_; }      // name, leaf, branching
  Compactor& compaction() const { return *compactor_; }    // manual and automatic compaction
  StreamControl& stream() const { return *stream_; }       // interrupt, retries, stream rules

 private:
  Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options);
  void Wire();
  void FindFileExtensions();
  Status Seed(std::vector<Entry> seed, const std::string& seed_leaf);
  void CloseInterruptedCalls();
  Status Post(std::function<void()> task);

  std::shared_ptr<const AgentConfig> agent_;
  SessionOptions options_;
  SessionInfo info_;
  std::shared_ptr<Strand> strand_;

  // The one lock: every part guards its state with it, and no part calls another while holding
  // it (the recorder's hooks, which run under it, touch only their own part's state).
  mutable std::mutex mu_;
  std::unique_ptr<TurnGate> gate_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<NoticeBoard> notices_;
  std::unique_ptr<Emitter> emitter_;
  std::unique_ptr<Selection> selection_;
  std::unique_ptr<TodoTracker> todos_;
  std::unique_ptr<ToolSet> tools_;
  std::unique_ptr<InputQueues> queues_;
  std::unique_ptr<CheckpointStore> checkpoints_;  // [rewind] beside the session file
  std::unique_ptr<SandboxGuard> sandbox_;         // [sandbox] the commands' confinement
  std::unique_ptr<tools::JobTable> jobs_;         // [jobs] bash's background jobs
  std::unique_ptr<tools::SavedOutputs> outputs_;  // [jobs] whole outputs, beside the file
  std::unique_ptr<Rewinder> rewinder_;
  std::unique_ptr<Branching> branching_;
  std::unique_ptr<Transcript> transcript_;
  std::unique_ptr<RuleWatch> rules_;
  std::unique_ptr<StreamControl> stream_;
  std::unique_ptr<Compactor> compactor_;
  std::unique_ptr<ToolCallRunner> calls_;
  std::unique_ptr<TurnRunner> runner_;
  std::unique_ptr<HookRunner> hooks_;
};

}  // namespace lousho::agent

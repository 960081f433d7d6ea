// The session engine: one conversation, its history, its model and tools, and the turn loop run
// on the session's strand of a worker pool. Knows no protocol: it emits Events and asks
// ClientServices.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/builtin_commands.h"
#include "core/client_services.h"
#include "agent/compaction.h"
#include "core/events.h"
#include "agent/history.h"
#include "core/message_builder.h"
#include "agent/permissions.h"
#include "core/provider.h"
#include "agent/rules/controller.h"
#include "agent/rules/loader.h"
#include "agent/session_store.h"
#include "core/tool.h"
#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/status.h"
#include "support/worker_pool.h"

namespace lousho::agent {

// The model a session talks to. Value type.
struct ModelChoice {
  std::string provider_name;           // "script", "openai", ...
  std::string model_id;                // id at the provider
  std::shared_ptr<Provider> provider;  // null only when the agent's provider_error is set
  ThinkingLevel thinking = ThinkingLevel::kOff;
};

// A model a session may switch to. Value type.
struct ModelOption {
  std::string provider;
  std::string model_id;
  std::string name;  // display name
  std::string id() const { return provider + "/" + model_id; }
};

// Builds the ModelChoice for a provider and model id (the spec's providers, the catalogue, the
// environment's keys). Thread-safe.
using ModelResolver =
    std::function<Result<ModelChoice>(const std::string& provider, const std::string& model_id)>;

// The template every session of one agent starts from. Immutable once built; shared across
// threads. A session copies the model and the tools and may change its own copies.
struct AgentConfig {
  std::string name;
  std::string version;
  std::string instructions;
  ModelChoice model;
  // Set when the provider cannot be used yet (a missing key): the agent still starts, so the
  // editor can show this error when a session is opened.
  std::optional<Error> provider_error;
  std::vector<std::shared_ptr<Tool>> tools;
  int max_steps = 50;
  config::Limits limits;
  std::vector<PermissionRule> permission_rules;
  PermissionMode default_mode = PermissionMode::kDefault;
  std::vector<std::string> extra_roots;
  std::vector<config::SlashCommand> commands;
  CompactionSettings compaction;
  // The models offered to switch to (the spec's `models:`, else the catalogue's models of every
  // provider with a key), the agent's own first; and how one is built. Null: only `model`.
  std::vector<ModelOption> models;
  ModelResolver resolve_model;
  std::string session_dir;  // the spec's sessionDir (absolute); empty: the door's default
  // Stream rules of the spec, the agent folder and the user, and the `ttsr:` settings; each
  // session adds its project's when it opens. Null: no stream rules at all.
  std::shared_ptr<const rules::AgentRules> rules;
  // The spec's MCP servers (each session starts its own) and their timeouts.
  std::vector<config::McpServerSpec> mcp_servers;
  config::McpSettings mcp;
};

// What a door may know of an agent: it never calls a provider or a tool itself.
struct AgentView {
  std::string name;
  bool images = false;  // the default model accepts images
  std::vector<config::SlashCommand> commands;
  std::optional<Error> provider_error;
  std::vector<ModelOption> models;                 // offered; the agent's own model first
  std::vector<config::McpServerSpec> mcp_servers;  // the spec's; a door starts them per session
  config::McpSettings mcp;
};
AgentView ViewOf(const AgentConfig& agent);

ThinkingLevel ParseThinkingLevel(const std::string& s);
const char* ThinkingLevelId(ThinkingLevel level);

// How a prompt ended (the protocol's stop reasons; failures are Errors instead).
enum class TurnStop { kEndTurn, kMaxTokens, kMaxTurnRequests, kRefusal, kCancelled };

// What a compaction did (Session::Compact).
struct CompactionResult {
  std::string summary;
  std::string first_kept_id;
  long long tokens_before = 0;
  long long tokens_after = 0;  // estimated
};

struct TurnResult {
  TurnStop stop = TurnStop::kEndTurn;
  Usage usage;  // this prompt
};

// Messages the user sends while a prompt runs. Steering messages join at the end of the current
// model request (or between tool calls when the interrupt mode is immediate); follow-up messages
// only when the prompt would otherwise end. Either way the same prompt goes on.
enum class QueueKind { kSteering, kFollowUp };
// How many queued messages are taken at once: one per model request, or all of them.
enum class QueueMode { kOneAtATime, kAll };
// When steering is looked at: once the model request and its tool calls are done (kWait), or
// also between tool calls, skipping the calls that remain (kImmediate).
enum class InterruptMode { kWait, kImmediate };
const char* QueueModeId(QueueMode mode);  // "one-at-a-time" | "all"
std::optional<QueueMode> ParseQueueModeId(const std::string& id);
const char* InterruptModeId(InterruptMode mode);  // "wait" | "immediate"
std::optional<InterruptMode> ParseInterruptModeId(const std::string& id);

struct QueueSettings {
  QueueMode steering = QueueMode::kOneAtATime;
  QueueMode follow_up = QueueMode::kOneAtATime;
  InterruptMode interrupt = InterruptMode::kWait;
};

// Stops the model stream in flight while the turn goes on (a stream rule, a steering message).
struct StreamInterrupt {
  CancelCause cause = CancelCause::kStreamRule;
  bool keep_partial = false;    // keep what was streamed in the history (tool calls never)
  std::vector<Message> inject;  // appended before the model is asked again
  std::string reason;           // the aborted message's error_message (empty: none)
  bool silent = false;          // the injected messages get no message_start/end events
  // A pause before the model is asked again; a cancel in it ends the turn (what was to be
  // injected still joins the history, for the next prompt).
  int delay_ms = 0;
  // Stream rules injected: recorded as a ttsr_injection entry with the injected messages.
  std::vector<std::string> ttsr_rules;
};

// Watches every stream delta before it leaves the engine; returning an interrupt aborts the
// stream (the delta is not emitted). Called on the session's worker.
using StreamWatcher =
    std::function<std::optional<StreamInterrupt>(const StreamDelta& delta, const Message& partial)>;

// What the engine does with open todos when a prompt would end (off unless a door asks).
struct TodoSettings {
  bool reminders = false;   // remind the model of open todos and ask it again
  int max_reminders = 3;    // per prompt
  bool auto_clear = false;  // clear the list when every task is done
};

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
  // other is a branch and recorded as one, see SetLeaf). The mode, plan, todo phases and name
  // recorded on its branch are restored.
  std::vector<Entry> seed;
  std::string seed_leaf;
  // Receives every entry appended from now on (the session file); may be null.
  std::shared_ptr<HistoryRecorder> recorder;
  std::string session_file;  // the recorder's file, for stats; empty: none
};

// Custom entry types the session records for itself: the todo tool's plan and the todo phases
// (data: their JSON), restored when a session is loaded.
inline constexpr char kPlanEntryType[] = "lousho.plan";
inline constexpr char kTodoPhasesEntryType[] = "lousho.todo_phases";

Json::Value TodoPhasesToJson(const std::vector<TodoPhase>& phases);
// Lenient: fields of the wrong type are left at their defaults.
std::vector<TodoPhase> TodoPhasesFromJson(const Json::Value& v);

// A user message of the current branch one may branch from.
struct BranchPoint {
  std::string entry_id;
  std::string text;
};

// What a session has said and spent. Plain value type.
struct SessionStats {
  std::string id;
  std::string file;  // empty: not saved
  int user_messages = 0;
  int assistant_messages = 0;
  int tool_calls = 0;
  int tool_results = 0;
  int total_messages = 0;
  Usage tokens;  // every assistant message of the tree, cost included
};

// A session name from a prompt: its first line, spaces collapsed, at most kMaxGistChars
// characters (cut at a word, with an ellipsis).
std::string PromptGist(const std::string& text);
inline constexpr size_t kMaxGistChars = 60;

// Thread-safe: every public method may be called from any thread. The turn and every event run
// on the session's strand (one task at a time); an idle session holds no thread. Held by
// shared_ptr: queued work keeps the session alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  static Result<std::shared_ptr<Session>> Create(std::shared_ptr<const AgentConfig> agent,
                                                 SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& id() const { return options_.id; }
  const std::filesystem::path& cwd() const { return options_.cwd; }
  // The folders the session's tools may touch; roots()[0] == cwd(). Fixed at creation.
  const std::vector<std::filesystem::path>& roots() const { return roots_; }

  // Starts a turn. Fails with LOUSHO_SESSION_BUSY when a turn is running. `done` runs on the
  // worker after every event of the turn has been emitted.
  [[nodiscard]] Status Prompt(std::vector<ContentBlock> content,
                              std::function<void(Result<TurnResult>)> done);
  // Cancels the running turn, if any, with that cause. Returns at once.
  void Cancel(CancelCause cause = CancelCause::kUser);
  // Aborts the model stream in flight, if any, and goes on with the turn. Returns at once.
  void Interrupt(StreamInterrupt interrupt);
  // Cancels the running turn and refuses new prompts; `done` runs on the worker once the turn
  // has answered. Returns at once.
  void Close(std::function<void()> done, CancelCause cause = CancelCause::kUser);
  // Blocks until no work of this session is queued or running (never from the worker).
  void WaitIdle();
  bool busy() const;

  PermissionMode mode() const;
  // Changes the mode at once; the mode_changed event follows on the worker, then `done` runs.
  // Fails (changing nothing) when kMaxPendingNotices changes already wait for a busy worker.
  [[nodiscard]] Status SetMode(PermissionMode mode, std::function<void()> done = nullptr);
  static constexpr size_t kMaxPendingNotices = 256;

  // Queues a message for the running prompt. False (nothing queued) when no prompt runs or it is
  // already ending: the caller starts a prompt instead.
  bool Enqueue(QueueKind kind, std::vector<ContentBlock> content);
  // Removes and returns every queued message, steering first.
  std::vector<std::vector<ContentBlock>> ClearQueues();
  size_t QueuedCount() const;
  QueueSettings queue_settings() const;
  void SetQueueSettings(QueueSettings settings);
  // A message for the model that the user's next prompt comes after (the output of a command the
  // user ran outside a turn, for example). It joins the history and the session file at once, or
  // when the running prompt ends (a crash before the next prompt loses nothing); the next prompt
  // announces it (its message events, its agent_end) before the user's message.
  void AddContext(Message message);

  // Automatic retries of transient provider failures (on by default). AbortRetry ends the wait
  // before a retry in progress: the request fails with "Retry cancelled".
  void SetAutoRetry(bool enabled);
  bool auto_retry() const;
  void AbortRetry();

  // The todo list in phases (replaced whole; the todo tool's plan replaces it too). Recorded in
  // the history, restored on load.
  void SetTodos(std::vector<TodoPhase> phases);
  std::vector<TodoPhase> Todos() const;

  // Model and thinking level. A change takes effect at once (the next model request uses it); a
  // model_change / thinking_level_change entry joins the history and the model_changed event
  // follows on the worker, then `done` runs. Fails like SetMode when changes pile up.
  ModelChoice model() const;
  [[nodiscard]] Status SetModel(ModelChoice model, std::function<void()> done = nullptr);
  [[nodiscard]] Status SetThinking(ThinkingLevel level, std::function<void()> done = nullptr);
  // Switches to the offered model "provider/model" (AgentConfig::models), building its provider.
  // LOUSHO_MODEL_UNKNOWN when it is not offered or cannot be built (a missing key).
  [[nodiscard]] Status SelectModel(const std::string& id, std::function<void()> done = nullptr);

  // Summarizes the older history into a compaction entry, keeping the recent turns (the
  // `/compact` command; the RPC door's `compact`). Refused while a prompt runs; Cancel() aborts
  // it. The auto_compaction_start/end events (reason "manual") go out on the worker, then `done`
  // runs. A failure or a cancel leaves the history untouched.
  [[nodiscard]] Status Compact(std::string instructions,
                               std::function<void(Result<CompactionResult>)> done);
  // Automatic compaction (the spec's `compaction.auto` until changed).
  void SetAutoCompaction(bool enabled);
  bool auto_compaction() const;
  bool SupportsImages() const;
  // The stream rules this session registered (null: none), for listings.
  const rules::RuleSet* stream_rules() const;

  // Adds a tool to this session only (MCP, host tools); a tool of the same name is replaced.
  void AddTool(std::shared_ptr<Tool> tool);
  // Removes this session's tool of that name; false when it has none.
  bool RemoveTool(const std::string& name);
  // Adds tools that may change (MCP servers): their current set is taken before each model
  // request, and the source is closed when the session closes (or is destroyed).
  void AddToolSource(std::shared_ptr<ToolSource> source);
  std::vector<std::shared_ptr<Tool>> tools() const;

  // The session's name (session_info entries); empty: none yet.
  std::string Name() const;
  // Names the session: records a session_info entry and emits SessionInfoChanged (on the worker,
  // before its next event). An empty or blank name is refused.
  [[nodiscard]] Status SetName(const std::string& name);
  // Moves the leaf to `entry_id` (empty: before the first entry); the next prompt continues from
  // there. The move is recorded (an empty branch_summary entry hanging off `entry_id`, which
  // becomes the leaf), so a session loaded from its file is where it was left. Refused while a
  // turn runs.
  [[nodiscard]] Status SetLeaf(const std::string& entry_id);
  // Branches before a user message: the leaf moves to its parent (recorded as SetLeaf does) and
  // the message's text is returned (to edit and send again). Refused while a turn runs or for
  // another kind of entry.
  Result<std::string> BranchFrom(const std::string& entry_id);
  // The user messages of the current branch, oldest first.
  std::vector<BranchPoint> UserMessages() const;
  // The text of the last assistant message of the branch; nullopt when there is none.
  std::optional<std::string> LastAssistantText() const;
  SessionStats Stats() const;
  // Writes the current branch as a standalone HTML page (an empty path: lousho-<id>.html in the
  // working directory; a relative one is taken from there) and returns the path written.
  Result<std::filesystem::path> ExportHtml(const std::filesystem::path& path) const;
  const std::string& session_file() const { return options_.session_file; }

  // A copy of the current branch's messages.
  std::vector<Message> History() const;
  // The entries from the root to the leaf.
  std::vector<Entry> BranchEntries() const;
  // Calls `fn` with the entries from the root to the leaf, under the session's lock (no copy):
  // `fn` must not call back into the session.
  void VisitBranch(const std::function<void(const std::vector<const Entry*>&)>& fn) const;
  // A copy of every entry of the tree, and the leaf.
  std::vector<Entry> Entries() const;
  std::string Leaf() const;
  Usage TotalUsage() const;
  // What opening the session's file repaired (an entry whose parent the file lacked), one line
  // each; set at creation, never changed.
  const std::vector<std::string>& load_warnings() const { return load_warnings_; }

 private:
  struct Turn;
  struct Streamed;
  struct CallRun;

  Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options);

  // The turn, in named steps.
  Result<TurnResult> RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel);
  std::optional<TurnStop> LimitReached(const Turn& t) const;
  Result<TurnResult> RunCommand(const CommandCall& call, const CancelToken& cancel);
  // The limits, then an automatic compaction when due, then the limits again.
  std::optional<TurnStop> BeforeRequest(Turn& t);
  // A model request failed: the prompt's end (nullopt: compacted after an overflow, go again).
  std::optional<Result<TurnResult>> FailedRequest(const Error& error, const Message* said, Turn& t);
  // Compacts when the context has reached the threshold of the model's window.
  void MaybeCompact(Turn& t);
  // After a failed request: true when it was a context overflow (the first of the prompt) and a
  // compaction succeeded, so the request is sent again.
  bool CompactAfterOverflow(const Error& error, const Message* said, Turn& t);
  // `t`: the prompt it runs in (its usage counts the summary request); null for Compact().
  Result<CompactionResult> RunCompaction(const std::string& reason, const std::string& instructions,
                                         const CancelToken& cancel, bool will_retry, Turn* t);
  Streamed StreamMessage(Turn& t);
  // A stopped stream's message: no tool calls, cancelled, and the interrupt that stopped it (if
  // it goes on with the turn) with what the editor was shown.
  void SettleStopped(Streamed& out, std::optional<StreamInterrupt> watched, MessageBuilder& builder,
                     const Turn& t);
  ModelRequest BuildRequest(const ModelChoice& model) const;
  // Takes the tool sources' current tools into tools_ (worker only).
  void RefreshSourceTools(const CancelToken& cancel);
  void CloseSources();
  void EmitUsage(const Turn& t, const Message& m, const ModelChoice& model);
  // Runs the message's tool calls; false when the turn was cancelled meanwhile.
  bool RunToolCalls(const Message& assistant, Turn& t);
  std::optional<TurnStop> DecideNext(const Message& assistant, Turn& t);
  Result<TurnResult> Finish(Turn& t, TurnStop stop);
  // Moves queued messages into the history (steering first; follow-ups only when `ending`).
  // False when none were taken; when `ending` the queue then stops accepting messages.
  bool TakeQueued(Turn& t, bool ending);
  // Stops taking queued messages unless some arrived: then false (take them first).
  bool CloseQueue();
  // Open todos at the end of a prompt: a reminder joins the history (true: ask again); every
  // task done: the list is cleared.
  bool RemindTodos(Turn& t);
  void StartPrompt(std::vector<ContentBlock> content, Turn& t);
  bool ApplyInterrupt(StreamInterrupt& interrupt, Turn& t);
  std::optional<TurnStop> AfterTools(const Message& assistant, Turn& t);
  void SetTodosLocked(std::vector<TodoPhase> phases);
  bool SteeringPending() const;

  // Tool calls.
  bool RunToolCall(const ContentBlock& call, Turn& t);
  // How many calls from `first` on may run side by side: read-only look-ups the policy allows
  // without asking.
  size_t ParallelRun(const std::vector<const ContentBlock*>& calls, size_t first) const;
  bool RunParallel(const std::vector<const ContentBlock*>& calls, Turn& t);
  std::shared_ptr<Tool> FindTool(const std::string& name) const;
  ToolContext MakeToolContext(const CancelToken& cancel);
  CallRun StartCall(const ContentBlock& call, const std::shared_ptr<Tool>& tool, Turn& t);
  void CompleteCall(CallRun& run, ToolOutput out, Turn& t);
  PermissionDecision AskPermission(const CallRun& run, const ContentBlock& call,
                                   const CancelToken& cancel);

  // Stream rules (worker only).
  void EmitTurnEnd(const Turn& t, const Message* said);
  std::optional<StreamInterrupt> WatchRules(const StreamDelta& d, int step);
  void EmitTtsr(const rules::Firing& f, int step);
  void RecordTtsr(const std::vector<std::string>& names);
  // Appends the context AddContext held back (a prompt ran) to the history. Worker only.
  void RecordContext();
  // Injects the prose rules that matched without interrupting; true when it did.
  bool InjectFollowUps(Turn& t);

  // History and events (worker only, except where locked inside).
  void AppendMessage(Message m, Turn* t);
  void AppendMessageLocked(Message m);  // mu_ held
  // Appends to the history, which records it (the session file), and keeps the name. mu_ held.
  const Entry& AppendEntryLocked(Entry e);
  // Moves the leaf so that it lasts (History::BranchTo, recorded) and restores the mode, plan,
  // todos and name of the new branch. mu_ held.
  Status BranchLocked(const std::string& entry_id);
  void RestoreFromBranch();
  void CloseInterruptedCalls();
  void EmitMessage(int turn, const Message& m);
  // An assistant message shown to the user but kept out of the history (a command's answer).
  void EmitNote(int turn, const std::string& text);
  // Makes a change under the lock and queues its event (and the entries it records) for the
  // worker; see SetMode. `change` returns the event (none: the change only records entries) and
  // adds the entries.
  Status Notice(std::function<void()> done,
                const std::function<std::optional<Event>(std::vector<Entry>*)>& change);
  void RestoreModel();
  void Emit(const Event& e);
  void FlushNotices();
  // Emits what the recorder reports of saving the session file (worker only; a cheap test when
  // nothing is to be told).
  void TellSaving();
  Status Post(std::function<void()> task);
  std::vector<ContentBlock> ExpandCommand(std::vector<ContentBlock> content) const;
  std::string SystemPrompt() const;

  std::shared_ptr<const AgentConfig> agent_;
  SessionOptions options_;
  std::vector<std::filesystem::path> roots_;
  std::shared_ptr<Strand> strand_;
  PermissionPolicy policy_;

  mutable std::mutex mu_;
  bool busy_ = false;
  bool closing_ = false;
  std::shared_ptr<CancelSource> cancel_;         // the running prompt's
  std::shared_ptr<CancelSource> stream_cancel_;  // the model stream in flight
  std::optional<StreamInterrupt> interrupt_;     // why stream_cancel_ fired, when not the user
  PermissionMode mode_;
  ModelChoice model_;
  std::vector<std::shared_ptr<Tool>> tools_;
  std::vector<std::shared_ptr<ToolSource>> sources_;
  std::vector<std::string> source_tool_names_;  // the names in tools_ that came from sources_
  // Records every entry it takes through options_.recorder. Written on the worker under mu_; read
  // there without it.
  agent::History history_;
  std::vector<std::string> load_warnings_;  // what reading the seed repaired (set by Create)
  std::vector<PlanEntry> plan_;             // the todo tool's (worker only)
  std::vector<TodoPhase> todos_;
  std::string name_;
  Usage total_usage_;
  // Events raised off the worker (a mode change during a turn), emitted there in order.
  std::vector<std::pair<std::optional<Event>, std::function<void()>>> notices_;
  // Set with notices_ under mu_; read without it, so the worker takes no lock per stream delta.
  std::atomic<bool> has_notices_{false};
  std::atomic<bool> auto_compaction_{true};
  int compactions_ = 0;  // worker only: names compaction runs
  // Messages queued for the running prompt, and whether it still takes them.
  std::vector<std::vector<ContentBlock>> steering_, follow_up_;
  bool accepting_ = false;
  QueueSettings queue_;
  std::vector<Message> context_;           // AddContext's, not yet in the history
  std::vector<Message> context_recorded_;  // in the history, announced by the next prompt
  bool auto_retry_ = true;
  std::shared_ptr<CancelSource> retry_abort_;  // the stream in flight's retry wait
  // Null when no stream rule is registered: then a delta costs one pointer test.
  std::unique_ptr<rules::Controller> rules_;
  int ttsr_fired_ = 0;  // for TtsrTriggered ids
};

}  // namespace lousho::agent

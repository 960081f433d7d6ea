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

#include "agent/client_services.h"
#include "agent/events.h"
#include "agent/history.h"
#include "agent/permissions.h"
#include "agent/provider.h"
#include "agent/tool.h"
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
  std::vector<config::McpServerSpec> mcp_servers;  // the spec's; a door starts them per session
  config::McpSettings mcp;
};
AgentView ViewOf(const AgentConfig& agent);

ThinkingLevel ParseThinkingLevel(const std::string& s);
const char* ThinkingLevelId(ThinkingLevel level);

// How a prompt ended (the protocol's stop reasons; failures are Errors instead).
enum class TurnStop { kEndTurn, kMaxTokens, kMaxTurnRequests, kRefusal, kCancelled };

struct TurnResult {
  TurnStop stop = TurnStop::kEndTurn;
  Usage usage;  // this prompt
};

// Stops the model stream in flight while the turn goes on (a stream rule, a steering message).
struct StreamInterrupt {
  CancelCause cause = CancelCause::kStreamRule;
  bool keep_partial = false;    // keep what was streamed in the history (tool calls never)
  std::vector<Message> inject;  // appended before the model is asked again
};

// Watches every stream delta before it leaves the engine; returning an interrupt aborts the
// stream (the delta is not emitted). Called on the session's worker.
using StreamWatcher =
    std::function<std::optional<StreamInterrupt>(const StreamDelta& delta, const Message& partial)>;

struct SessionOptions {
  std::string id;
  std::filesystem::path cwd;  // absolute
  std::vector<std::filesystem::path> additional_roots;
  ClientServices services;     // what the client offers (each may be null); outlives the session
  EventSink sink;              // called on the session's worker, in order
  WorkerPool* pool = nullptr;  // outlives the session; null: a process-wide pool
  StreamWatcher watcher;       // may be empty
  // A stored history to continue (parents before children) and its leaf (empty: the last).
  std::vector<Entry> seed;
  std::string seed_leaf;
};

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

  ModelChoice model() const;
  void SetModel(ModelChoice model);
  void SetThinking(ThinkingLevel level);
  bool SupportsImages() const;
  // Adds a tool to this session only (MCP, host tools); a tool of the same name is replaced.
  void AddTool(std::shared_ptr<Tool> tool);
  // Adds tools that may change (MCP servers): their current set is taken before each model
  // request, and the source is closed when the session closes (or is destroyed).
  void AddToolSource(std::shared_ptr<ToolSource> source);
  std::vector<std::shared_ptr<Tool>> tools() const;

  // A copy of the current branch's messages.
  std::vector<Message> History() const;
  // A copy of every entry of the tree, and the leaf.
  std::vector<Entry> Entries() const;
  std::string Leaf() const;
  Usage TotalUsage() const;

 private:
  struct Turn;
  struct Streamed;
  struct CallRun;

  Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options);

  // The turn, in named steps.
  Result<TurnResult> RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel);
  std::optional<TurnStop> LimitReached(const Turn& t) const;
  Streamed StreamMessage(Turn& t);
  ModelRequest BuildRequest(const ModelChoice& model) const;
  // Takes the tool sources' current tools into tools_ (worker only).
  void RefreshSourceTools(const CancelToken& cancel);
  void CloseSources();
  void EmitUsage(const Turn& t, const Message& m, const ModelChoice& model);
  // Runs the message's tool calls; false when the turn was cancelled meanwhile.
  bool RunToolCalls(const Message& assistant, Turn& t);
  std::optional<TurnStop> DecideNext(const Message& assistant, Turn& t);
  Result<TurnResult> Finish(Turn& t, TurnStop stop);

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

  // History and events (worker only, except where locked inside).
  void AppendMessage(Message m, Turn* t);
  void EmitMessage(int turn, const Message& m);
  void Emit(const Event& e);
  void FlushNotices();
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
  agent::History history_;  // written on the worker under mu_; read there without it
  std::vector<PlanEntry> plan_;
  Usage total_usage_;
  // Events raised off the worker (a mode change during a turn), emitted there in order.
  std::vector<std::pair<Event, std::function<void()>>> notices_;
  // Set with notices_ under mu_; read without it, so the worker takes no lock per stream delta.
  std::atomic<bool> has_notices_{false};
};

}  // namespace lousho::agent

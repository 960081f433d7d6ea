// The session engine: one conversation, its history, and the turn loop on its own worker thread.
// Knows no protocol: it emits Events and asks ClientServices.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/client_services.h"
#include "agent/events.h"
#include "agent/permissions.h"
#include "agent/provider.h"
#include "agent/tool.h"
#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

// Everything sessions of one agent share. Immutable once built; shared across threads.
struct AgentConfig {
  std::string name;
  std::string version;
  std::string instructions;
  std::string provider_name;           // "script", "openai", ...
  std::string model_id;                // id at the provider
  std::shared_ptr<Provider> provider;  // null only when provider_error is set
  // Set when the provider cannot be used yet (a missing key): the agent still starts, so the
  // editor can show this error when a session is opened.
  std::optional<Error> provider_error;
  std::vector<std::shared_ptr<Tool>> tools;
  ThinkingLevel thinking = ThinkingLevel::kOff;
  int max_steps = 50;
  config::Limits limits;
  std::vector<PermissionRule> permission_rules;
  PermissionMode default_mode = PermissionMode::kDefault;
  std::vector<std::string> extra_roots;
  std::vector<config::SlashCommand> commands;

  Tool* FindTool(const std::string& name) const;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Builds the shared agent from a loaded spec: provider, tools, rules.
Result<std::shared_ptr<const AgentConfig>> BuildAgent(const config::AgentSpec& spec,
                                                      const EnvLookup& getenv);

ThinkingLevel ParseThinkingLevel(const std::string& s);

// How a prompt ended (the protocol's stop reasons; failures are Errors instead).
enum class TurnStop { kEndTurn, kMaxTokens, kMaxTurnRequests, kRefusal, kCancelled };

struct TurnResult {
  TurnStop stop = TurnStop::kEndTurn;
  Usage usage;  // this prompt
};

struct SessionOptions {
  std::string id;
  std::filesystem::path cwd;  // absolute
  std::vector<std::filesystem::path> additional_roots;
  ClientServices* client = nullptr;  // outlives the session
  EventSink sink;                    // called on the worker thread
};

// A history entry: the history is a tree (id/parent) whose leaf is the current branch.
struct HistoryEntry {
  std::string id;
  std::string parent_id;
  Message message;
};

// Thread-safe: Prompt/Cancel/SetMode may be called from any thread; the turn runs on the
// session's worker. Destroying the session cancels the running turn and joins the worker.
class Session {
 public:
  Session(std::shared_ptr<const AgentConfig> agent, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& id() const { return options_.id; }
  const AgentConfig& agent() const { return *agent_; }

  // Starts a turn. Fails with LOUSHO_SESSION_BUSY when a turn is running. `done` runs on the
  // worker after every event of the turn has been emitted.
  Status Prompt(std::vector<ContentBlock> content, std::function<void(Result<TurnResult>)> done);
  // Cancels the running turn, if any. Returns at once.
  void Cancel();
  bool busy() const;

  PermissionMode mode() const;
  // Changes the mode and emits kModeChanged (on the caller's thread when idle).
  void SetMode(PermissionMode mode);

  // A copy of the current branch of the history.
  std::vector<Message> History() const;
  Usage TotalUsage() const;

 private:
  void WorkerLoop();
  Result<TurnResult> RunTurn(std::vector<ContentBlock> content, const CancelToken& cancel);
  // Runs one tool call; returns false when the turn was cancelled during it.
  bool RunToolCall(const ContentBlock& call, int turn, const CancelToken& cancel, bool* ends_turn,
                   std::string* question);
  // How many calls from `first` on may run side by side: read-only look-ups the policy allows
  // without asking.
  size_t ParallelRun(const std::vector<const ContentBlock*>& calls, size_t first) const;
  // Runs those calls at once; events and results still follow the calls' order. Returns false
  // when the turn was cancelled meanwhile.
  bool RunParallel(const std::vector<const ContentBlock*>& calls, int turn,
                   const CancelToken& cancel);
  ToolContext MakeToolContext(const CancelToken& cancel);
  Event ToolStartEvent(const ContentBlock& call, const Tool* tool, int turn,
                       const ToolContext& ctx) const;
  void CompleteToolCall(const Event& start, const ToolOutput& out);
  void Append(Message m);
  void Emit(const Event& e);
  std::vector<ContentBlock> ExpandCommand(std::vector<ContentBlock> content) const;

  std::shared_ptr<const AgentConfig> agent_;
  SessionOptions options_;
  std::vector<std::filesystem::path> roots_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  bool busy_ = false;
  std::shared_ptr<CancelSource> cancel_;
  PermissionMode mode_;
  PermissionPolicy policy_;
  std::vector<HistoryEntry> entries_;
  std::string leaf_;
  long long next_entry_ = 0;
  std::vector<PlanEntry> plan_;
  Usage total_usage_;
  std::thread worker_;
};

}  // namespace lousho::agent

// The turn runner: one prompt from the user's message to its end (model request -> stream ->
// tool calls -> next request), with its stop reasons, limits, retries, queued messages, stream
// rule injections and todo reminders; and a prompt that calls a built-in command.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "agent/agent_config.h"
#include "agent/builtin_commands.h"
#include "agent/session_context.h"
#include "agent/stream_control.h"
#include "agent/todo_tracker.h"
#include "agent/turn.h"
#include "core/message_builder.h"
#include "support/status.h"

namespace lousho::agent {

class Branching;
class Compactor;
class HookRunner;
class Emitter;
class InputQueues;
class Recorder;
class RuleWatch;
class Selection;
class ToolCallRunner;
class ToolSet;
class Transcript;

// The parts a prompt uses. All outlive the runner.
struct TurnParts {
  Selection& selection;
  ToolSet& tools;
  InputQueues& queues;
  TodoTracker& todos;
  Branching& branching;
  Transcript& transcript;
  Compactor& compactor;
  StreamControl& stream;
  RuleWatch& rules;
  ToolCallRunner& calls;
  Emitter& emitter;
  Recorder& recorder;
};

// How this session's prompts run.
struct TurnSettings {
  std::shared_ptr<const AgentConfig> agent;
  std::filesystem::path cwd;
  StreamWatcher watcher;  // may be empty
  TodoSettings todos;
  bool auto_title = true;  // the first prompt's gist names the session
  // The session's prompt commands (the spec's and the files', SessionCommands).
  std::vector<config::SlashCommand> commands;
  std::optional<ClientPrompt> client_prompt;  // the editor's system prompt
  ContextSource context;                      // may be empty
  const tools::JobTable* jobs = nullptr;      // [jobs] noted to the model at each prompt
};

// Worker only.
class TurnRunner {
 public:
  TurnRunner(TurnParts parts, TurnSettings settings);
  TurnRunner(const TurnRunner&) = delete;
  TurnRunner& operator=(const TurnRunner&) = delete;

  Result<TurnResult> Run(std::vector<ContentBlock> content, const CancelToken& cancel);
  Result<TurnResult> RunCommand(const CommandCall& call, const CancelToken& cancel);
  // The model request of the next step: the system prompt, the branch's messages, the tools.
  ModelRequest BuildRequest(const ModelChoice& model) const;
  // The session's hooks (agent/hooks.h); null: none.
  void UseHooks(HookRunner* hooks) { hooks_ = hooks; }
  // [rewind] The entry the working tree's changes of the moment belong to: the prompt being
  // submitted while its hooks run, else the newest entry.
  std::string ChangeEntry() const;

 private:
  class Commands;
  struct Streamed;

  void StartPrompt(std::vector<ContentBlock> content, Turn& t);
  std::optional<TurnStop> LimitReached(const Turn& t) const;
  // The limits, then an automatic compaction when due, then the limits again.
  std::optional<TurnStop> BeforeRequest(Turn& t);
  Streamed StreamMessage(Turn& t);
  Result<ModelResponse> Send(const ModelChoice& model, const StreamControl::Flight& flight,
                             MessageBuilder& builder, std::optional<StreamInterrupt>& watched,
                             const Turn& t);
  Streamed Settle(Result<ModelResponse> resp, const ModelChoice& model, CancelSource& stream,
                  std::optional<StreamInterrupt> watched, MessageBuilder& builder, const Turn& t);
  void EmitUsage(const Turn& t, const Message& m, const ModelChoice& model);
  void EmitTurnEnd(const Turn& t, const Message* said);
  // A model request failed: the prompt's end (nullopt: compacted after an overflow, go again).
  std::optional<Result<TurnResult>> FailedRequest(const Error& error, const Message* said, Turn& t);
  bool ApplyInterrupt(StreamInterrupt& interrupt, Turn& t);
  std::optional<TurnStop> AfterTools(const Message& assistant, Turn& t);
  std::optional<TurnStop> DecideNext(const Message& assistant, Turn& t);
  bool TakeQueued(Turn& t, bool ending);
  bool RemindTodos(Turn& t);
  Result<TurnResult> Finish(Turn& t, TurnStop stop);
  std::vector<ContentBlock> ExpandCommand(std::vector<ContentBlock> content,
                                          const CancelToken& cancel) const;
  std::string SystemPrompt() const;
  // Hooks: the session's start and UserPromptSubmit, their context recorded before the prompt
  // (false: a hook refused the prompt, which goes no further), and Stop (true: the model goes
  // on).
  bool PromptHooks(const std::vector<ContentBlock>& content, Turn& t);
  bool StopHooks(Turn& t);
  // The session's context, built at the first call and fixed from then on.
  const SessionContext& Context() const;
  void AddFileRules(const Message& assistant, Turn& t);
  void NoteJobs(Turn& t);

  TurnParts parts_;
  TurnSettings settings_;
  HookRunner* hooks_ = nullptr;
  std::string prompt_entry_;  // while the prompt's hooks run: the id its message will get
  // Built once, on the worker (the first model request); then only read.
  mutable std::optional<SessionContext> context_;
  mutable std::unique_ptr<FileRules> file_rules_;
  std::string jobs_note_;  // [jobs] the last note of the background jobs
};

}  // namespace lousho::agent

// Typed events the engine emits, one small struct per kind in one std::variant, so each door
// translates them exhaustively with std::visit (names follow the legacy RPC protocol's events).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/client_services.h"
#include "core/content.h"
#include "core/provider.h"
#include "core/tool.h"

namespace lousho::agent {

// Pointers in events are valid only during the sink call. `turn` is the model request number
// within the prompt, from 1 (0 outside a model request).
namespace event {

struct SubagentStep;  // below the Event variant

// A prompt began.
struct AgentStart {};
// A prompt ended; `messages` are the messages it added to the history, in order.
struct AgentEnd {
  const std::vector<Message>* messages = nullptr;
};
// One model request (and the tool calls of its reply) began / ended.
struct TurnStart {
  int turn = 0;
};
struct TurnEnd {
  int turn = 0;
  const Message* message = nullptr;                    // the assistant message; null when none
  const std::vector<Message>* tool_results = nullptr;  // results of its tool calls, in order
};
// A message of the history: the user's, a custom one, or the assistant's being streamed (then
// `message` is the partial message, empty at the start).
struct MessageStart {
  int turn = 0;
  const Message* message = nullptr;
};
// A streamed piece of the assistant message; `partial` is the message so far, delta included.
struct MessageUpdate {
  int turn = 0;
  const StreamDelta* delta = nullptr;
  const Message* partial = nullptr;
  // The id of the history entry the message is (or will be) recorded as: ACP's messageId, the
  // same on replay. Empty where none is known.
  std::string_view message_id;
};
// Every MessageStart gets its MessageEnd, also when the stream failed or was aborted:
// message->stop_reason says how it ended (kError with message->error_message, kCancelled).
struct MessageEnd {
  int turn = 0;
  const Message* message = nullptr;
};

// A tool call as the editor shows it.
struct ToolCall {
  std::string id;
  std::string name;
  const Json::Value* args = nullptr;
  std::string title;
  ToolKind kind = ToolKind::kOther;
  std::vector<ToolLocation> locations;
};
struct ToolExecutionStart {
  int turn = 0;
  const ToolCall* call = nullptr;
};
// A change while the tool runs: now running, a terminal to embed, partial output (bash
// output streamed while the command runs), progress (an MCP server's notes), or a subagent's
// step (the task tool).
struct ToolExecutionUpdate {
  enum class Phase { kInProgress, kTerminal, kPartialOutput, kProgress, kSubagent };
  int turn = 0;
  const ToolCall* call = nullptr;
  Phase phase = Phase::kInProgress;
  std::string terminal_id;     // kTerminal
  std::string partial_output;  // kPartialOutput: the output so far (may be a tail);
                               // kProgress: a progress note ("3/5: indexing")
  std::string output_delta;    // kPartialOutput: what is new since the call's last update (bash;
                               // empty for tools that only know the whole)
  const SubagentStep* subagent = nullptr;  // kSubagent
};
struct ToolExecutionEnd {
  int turn = 0;
  const ToolCall* call = nullptr;
  const ToolOutput* output = nullptr;
  bool is_error = false;
};

struct AutoRetryStart {
  int turn = 0;
  RetryNotice retry;
};
struct AutoRetryEnd {
  int turn = 0;
  bool success = false;
  int attempt = 0;
  std::string error;
};
struct PlanUpdate {
  std::vector<PlanEntry> plan;
};
struct ModeChanged {
  std::string mode_id;
};
// Tokens now in context, the window, and the session's cost so far.
struct UsageUpdate {
  int turn = 0;
  long long context_used = 0;
  long long context_size = 0;
  double session_cost = 0;
};
// One rule of a TtsrTriggered, as a door shows it.
struct TtsrRule {
  std::string name;
  std::string path;     // the rule's file as shown to the model (cwd-relative, ~/…, absolute)
  std::string content;  // the rule's text (what was injected)
  std::vector<std::string> conditions;
  std::vector<std::string> scope;
  std::string interrupt_mode;  // the rule's own, else the setting's
  std::string origin;          // where it was found: spec, agent, project, .omp, …, user
  std::string file;            // the rule's file as loaded (absolute, or "<spec>:<line>:<col>")
  std::string description;
  std::vector<std::string> globs;  // the path gate, as written
  std::string repeat_mode;         // the session's setting: once | after-gap
  int repeat_gap = 0;              // completed turns, for after-gap
};
// Stream rules matched. `interrupted`: the model stream was stopped (its message_end follows,
// cancelled, with error_message "TTSR matched rule: NAME"), and the turn goes on with the rules
// injected; otherwise a tool call's arguments matched rules that do not interrupt, and they are
// prepended to that call's result. (A prose rule that does not interrupt emits nothing: it
// arrives as a hidden custom message after the reply.)
struct TtsrTriggered {
  int turn = 0;
  std::vector<std::string> rules;  // names, in order
  std::vector<TtsrRule> details;   // parallel to `rules`
  bool interrupted = true;
  std::string source;        // "text" | "thinking" | "tool"
  std::string tool_call_id;  // source "tool"
  std::string id;            // unique within the session ("ttsr-1", …), for a door's own ids
};
// The prompt was about to end with open todos: a reminder joined the history and the model is
// asked again (`todos` are the open tasks).
struct TodoReminder {
  std::vector<TodoTask> todos;
  int attempt = 0;
  int max_attempts = 0;
};
// Every todo was done at the end of a prompt: the list was cleared.
struct TodoAutoClear {};
// The model or the thinking level changed (SetModel, SetThinking, a `/model` command).
struct ModelChanged {
  std::string provider;
  std::string model_id;
  std::string thinking;  // "off" | "minimal" | ... (ThinkingLevelId)
};
// A compaction of the history began / ended: automatic (`reason` "threshold" when the context
// reached the spec's share of the window, "overflow" when the provider refused the request as too
// long) or asked for (`reason` "manual": `/compact`, Session::Compact). `id` names the run, so a
// door can show start and end as one item.
struct AutoCompactionStart {
  std::string id;
  std::string reason;  // "threshold" | "overflow" | "manual"
  long long tokens_before = 0;
};
struct AutoCompactionEnd {
  std::string id;
  std::string reason;
  bool aborted = false;       // cancelled: the history is untouched
  bool will_retry = false;    // "overflow": the refused request is sent again
  std::string error;          // empty on success; on failure the history is untouched
  std::string summary;        // on success
  std::string first_kept_id;  // on success: the entry the kept part starts at
  long long tokens_before = 0;
  long long tokens_after = 0;  // estimated: the summary and the kept messages
};
// A piece of a compaction's summary as the model writes it (AutoCompactionEnd has the whole).
struct CompactionSummaryDelta {
  std::string id;  // the compaction's (AutoCompactionStart::id)
  std::string text;
};
// Something the user should know that is no message of the conversation, told once: a stream
// rule switched off because its condition could not be searched ("stream-rules"); saving the
// session file failed, or works again after a failure ("session-file"). `source` names what it is
// about; `text` says what happened and what to do; `title` is a short line that stands alone.
// `info`: good news (saving works again), not a warning. The doors show it where the user sees it
// (ACP: an agent message, and a notice for clients that take them; RPC: a notify).
struct Warning {
  std::string source;
  std::string text;
  std::string title;
  bool info = false;
};
// The session got a name (the first prompt's gist, /name, or a door's call).
struct SessionInfoChanged {
  std::string name;
};

}  // namespace event

using Event = std::variant<
    event::AgentStart, event::AgentEnd, event::TurnStart, event::TurnEnd, event::MessageStart,
    event::MessageUpdate, event::MessageEnd, event::ToolExecutionStart, event::ToolExecutionUpdate,
    event::ToolExecutionEnd, event::AutoRetryStart, event::AutoRetryEnd, event::PlanUpdate,
    event::ModeChanged, event::UsageUpdate, event::TtsrTriggered, event::AutoCompactionStart,
    event::AutoCompactionEnd, event::CompactionSummaryDelta, event::TodoReminder,
    event::TodoAutoClear, event::ModelChanged, event::SessionInfoChanged, event::Warning>;

namespace event {
// One of a subagent's tool calls, as its parent's editor is shown it.
struct SubagentCall {
  std::string id;
  std::string title;
  std::string status = "in_progress";  // in_progress | completed | failed
};
// A step of a subagent (a child session the `task` tool runs): the child's event, and what it
// did so far, for a door to show as the task call's content.
struct SubagentStep {
  std::string agent;       // the subagent's name
  std::string session_id;  // the child session's
  int depth = 1;           // 1: a child of the session the door shows
  const Event* event = nullptr;
  std::vector<SubagentCall> calls;  // its tool calls so far, in order
  std::string text;                 // its latest reply so far
  bool refresh = false;  // the summary changed enough to be shown again (text is throttled)
};
}  // namespace event

// Receives events on the session's worker, in order, one at a time.
using EventSink = std::function<void(const Event&)>;

}  // namespace lousho::agent

// The state of one prompt as the engine's parts see it (owned by the worker).
#pragma once

#include <string>
#include <vector>

#include "core/content.h"
#include "support/cancel.h"

namespace lousho::agent {

// How a prompt ended (the protocol's stop reasons; failures are Errors instead).
enum class TurnStop { kEndTurn, kMaxTokens, kMaxTurnRequests, kRefusal, kCancelled };

// The stop reason's wire name ("end_turn", "max_tokens", "max_turn_requests", "refusal",
// "cancelled"): ACP's, and a subagent's answer.
inline const char* TurnStopName(TurnStop stop) {
  switch (stop) {
    case TurnStop::kEndTurn:
      return "end_turn";
    case TurnStop::kMaxTokens:
      return "max_tokens";
    case TurnStop::kMaxTurnRequests:
      return "max_turn_requests";
    case TurnStop::kRefusal:
      return "refusal";
    case TurnStop::kCancelled:
      return "cancelled";
  }
  return "end_turn";
}

struct TurnResult {
  TurnStop stop = TurnStop::kEndTurn;
  Usage usage;  // this prompt
};

// One prompt in flight. Plain value type, used on the session's worker only.
struct Turn {
  CancelToken cancel;
  int step = 0;  // the model request number, from 1
  TurnResult result;
  std::vector<Message> added;         // messages this prompt added, for agent_end
  std::vector<Message> tool_results;  // of the current step, for turn_end
  bool ends_turn = false;             // a tool (ask) ended the turn
  std::string question;               // what that tool asked
  int todo_reminders = 0;             // reminders of open todos so far
  bool overflow_compacted = false;    // compacted once after a context overflow
  bool threshold_failed = false;      // an automatic compaction failed: not again this prompt
  bool hook_stopped = false;          // a hook answered "continue": false (agent/hooks.h)
  int stop_hook_runs = 0;             // times a Stop hook sent the model on
  std::string user_entry;             // the id the prompt's message is recorded with
};

}  // namespace lousho::agent

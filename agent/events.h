// Typed events the engine emits; each protocol adapter translates them (names follow the legacy
// RPC protocol's event names).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/client_services.h"
#include "agent/content.h"
#include "agent/provider.h"
#include "agent/tool.h"

namespace lousho::agent {

enum class EventType {
  kAgentStart,
  kAgentEnd,
  kTurnStart,
  kTurnEnd,
  kMessageStart,
  kMessageUpdate,
  kMessageEnd,
  kToolExecutionStart,
  kToolExecutionUpdate,
  kToolExecutionEnd,
  kAutoRetryStart,
  kAutoRetryEnd,
  kPlanUpdate,
  kModeChanged,
  kUsageUpdate,
};

// One event. Which fields are set depends on `type`; the rest stay default. Pointers are valid
// only during the sink call.
struct Event {
  EventType type = EventType::kAgentStart;
  int turn = 0;  // model request number within the prompt, from 1

  // kMessageStart / kMessageEnd: the message; kMessageUpdate: the delta.
  const Message* message = nullptr;
  StreamDelta delta;

  // kToolExecution*: the call and how the editor should show it.
  std::string tool_call_id;
  std::string tool_name;
  Json::Value args;
  std::string title;
  ToolKind kind = ToolKind::kOther;
  std::vector<ToolLocation> locations;
  // kToolExecutionUpdate: a status change or progress.
  enum class ToolPhase { kPending, kInProgress, kTerminal } phase = ToolPhase::kInProgress;
  std::string terminal_id;
  // kToolExecutionEnd: the outcome.
  const ToolOutput* output = nullptr;
  bool is_error = false;

  // kAutoRetryStart / kAutoRetryEnd.
  RetryNotice retry;
  bool retry_success = false;
  std::string retry_error;

  // kPlanUpdate.
  std::vector<PlanEntry> plan;

  // kModeChanged.
  std::string mode_id;

  // kUsageUpdate: tokens now in context, the window, and the session's cost so far.
  long long context_used = 0;
  long long context_size = 0;
  double session_cost = 0;
};

// Receives events on the session worker thread, in order.
using EventSink = std::function<void(const Event&)>;

}  // namespace lousho::agent

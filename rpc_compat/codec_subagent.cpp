// RPC codec: a subagent's steps as updates of the task call that runs it.
#include "core/subagents.h"
#include "rpc_compat/codec.h"
#include "rpc_compat/commands.h"

namespace lousho::rpc_compat {

std::optional<Json::Value> SubagentFrame(const agent::event::ToolCall& call,
                                         const agent::event::SubagentStep& step) {
  Json::Value events(Json::arrayValue);
  if (step.event)
    for (Json::Value& child : FramesFromEvent(*step.event)) events.append(std::move(child));
  if (events.empty() && !step.refresh) return std::nullopt;  // a delta between refreshes
  Json::Value f(Json::objectValue);
  f["type"] = frame::kToolExecutionUpdate;
  f["toolCallId"] = call.id;
  f["toolName"] = call.name;
  f["args"] = call.args ? *call.args : Json::Value(Json::objectValue);
  Json::Value text(Json::objectValue);
  text["type"] = "text";
  text["text"] = agent::SubagentSummary(step);
  Json::Value link(Json::objectValue);
  link["agent"] = step.agent;
  link["sessionId"] = step.session_id;
  link["depth"] = step.depth;
  Json::Value details(Json::objectValue);
  details["subagent"] = link;
  details["events"] = events;
  Json::Value result(Json::objectValue);
  result["content"] = Json::Value(Json::arrayValue);
  result["content"].append(text);
  result["details"] = details;
  f["partialResult"] = result;
  return f;
}

}  // namespace lousho::rpc_compat

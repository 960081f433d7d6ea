// ACP wire codec: a subagent's steps as the content of the task call that runs it.
#include "acp/codec.h"
#include "core/subagents.h"

namespace lousho::acp {

Json::Value SubagentMeta(const std::string& agent, const std::string& session_id,
                         const std::string& parent_tool_call_id) {
  Json::Value link(Json::objectValue);
  link["agent"] = agent;
  if (!session_id.empty()) link["sessionId"] = session_id;
  if (!parent_tool_call_id.empty()) link["parentToolCallId"] = parent_tool_call_id;
  Json::Value meta(Json::objectValue);
  meta["lousho/subagent"] = link;
  return meta;
}

std::optional<Json::Value> SubagentUpdate(const agent::event::ToolExecutionUpdate& update) {
  const agent::event::SubagentStep* step = update.subagent;
  if (step == nullptr || update.call == nullptr || !step->refresh) return std::nullopt;
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "tool_call_update";
  u["toolCallId"] = update.call->id;
  u["status"] = "in_progress";
  Json::Value item(Json::objectValue);
  item["type"] = "content";
  item["content"] = TextBlock(agent::SubagentSummary(*step));
  u["content"] = Json::Value(Json::arrayValue);
  u["content"].append(item);
  u["_meta"] = SubagentMeta(step->agent, step->session_id, "");
  return u;
}

}  // namespace lousho::acp

#include "core/server_tool.h"

#include "core/tool.h"
#include "support/json_util.h"

namespace lousho::agent {

std::string ServerToolEndText(const ServerToolResult& result) {
  Json::Value j(Json::objectValue);
  j["api"] = result.api;
  j["summary"] = result.summary;
  j["result"] = result.result;
  j["error"] = result.is_error;
  return WriteJson(j);
}

ServerToolResult ParseServerToolEnd(std::string_view text) {
  ServerToolResult out;
  auto json = ParseJson(text);
  if (!json.ok() || !json->isObject()) {
    out.is_error = true;
    return out;
  }
  out.api = StringOr(*json, "api");
  out.summary = StringOr(*json, "summary");
  if (const Json::Value* r = FindMember(*json, "result")) out.result = *r;
  out.is_error = BoolOr(*json, "error", false);
  return out;
}

std::string ServerToolTitle(const std::string& name, const Json::Value& arguments) {
  const std::string query = StringOr(arguments, "query");
  if (name == "web_search" || name == "web_search_preview")
    return query.empty() ? std::string("Web search") : "Web search: " + query;
  return query.empty() ? name : name + ": " + query;
}

void EmitServerToolEvents(const StreamDelta& d, const Message& partial, int turn,
                          const std::function<void(const Event&)>& emit) {
  if (d.kind != DeltaKind::kServerToolStart && d.kind != DeltaKind::kServerToolEnd) return;
  if (d.index < 0 || static_cast<size_t>(d.index) >= partial.content.size()) return;
  const ContentBlock& b = partial.content[static_cast<size_t>(d.index)];
  if (b.type != BlockType::kServerTool) return;
  event::ToolCall call;
  call.id = b.id();
  call.name = b.name();
  call.args = &b.arguments();
  call.title = ServerToolTitle(b.name(), b.arguments());
  call.kind = ToolKind::kSearch;
  if (d.kind == DeltaKind::kServerToolStart) {
    emit(event::ToolExecutionStart{turn, &call});
    event::ToolExecutionUpdate running;
    running.turn = turn;
    running.call = &call;
    emit(running);
    return;
  }
  ToolOutput out;
  out.is_error = b.server->is_error;
  out.content.push_back(ContentBlock::Text(b.server->summary));
  emit(event::ToolExecutionEnd{turn, &call, &out, out.is_error});
}

}  // namespace lousho::agent

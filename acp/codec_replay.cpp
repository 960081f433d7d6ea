// ACP wire codec: the session updates that show a stored branch again (session/load).
#include <unordered_map>

#include "acp/codec.h"
#include "agent/history.h"
#include "agent/mcp/resources.h"
#include "core/server_tool.h"
#include "support/json_util.h"

namespace lousho::acp {
using agent::BlockType;
using agent::ContentBlock;
namespace ev = agent::event;

namespace {
Json::Value BlockChunk(const char* kind, const ContentBlock& b, const std::string& message_id) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = kind;
  if (!message_id.empty()) u["messageId"] = message_id;
  if (b.type == BlockType::kImage) {
    Json::Value img(Json::objectValue);
    img["type"] = "image";
    img["data"] = b.data();
    img["mimeType"] = b.mime_type();
    u["content"] = img;
  } else {
    u["content"] = TextBlock(b.text);
  }
  return u;
}

// A stored tool result as the output the editor was shown when it ran. A terminal of the run is
// gone, so its output is shown as text instead.
agent::ToolOutput StoredOutput(const agent::Message& result) {
  agent::ToolOutput out;
  out.content = result.content;
  out.is_error = result.is_error;
  out.diffs = result.tool->diffs;
  out.details = result.tool->details;
  return out;
}

// A call the provider ran (its web search), shown again as it was: a search and what it found.
void ReplayServerTool(const ContentBlock& b, std::vector<Json::Value>* out) {
  agent::Message m;
  m.content.push_back(b);
  const auto emit = [&](const agent::Event& e) {
    if (auto u = UpdateFromEvent(e)) out->push_back(std::move(*u));
  };
  agent::StreamDelta d;
  d.kind = agent::DeltaKind::kServerToolStart;
  d.index = 0;
  agent::EmitServerToolEvents(d, m, 0, emit);
  d.kind = agent::DeltaKind::kServerToolEnd;
  agent::EmitServerToolEvents(d, m, 0, emit);
}

void ReplayAssistant(const agent::Message& m, const std::string& message_id,
                     const std::unordered_map<std::string, const agent::Message*>& results,
                     std::vector<Json::Value>* out) {
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        if (!b.text.empty()) out->push_back(BlockChunk("agent_message_chunk", b, message_id));
        break;
      case BlockType::kImage:
        out->push_back(BlockChunk("agent_message_chunk", b, message_id));
        break;
      case BlockType::kThinking:
        if (!b.redacted() && !b.text.empty())
          out->push_back(BlockChunk("agent_thought_chunk", b, message_id));
        break;
      case BlockType::kToolCall: {
        auto it = results.find(b.id());
        const agent::Message* result = it == results.end() ? nullptr : it->second;
        ev::ToolCall call;
        call.id = b.id();
        call.name = b.name();
        call.args = &b.arguments();
        call.title = result && !result->tool->title.empty() ? result->tool->title : b.name();
        if (result) {
          call.kind = result->tool->kind;
          call.locations = result->tool->locations;
        }
        out->push_back(*UpdateFromEvent(ev::ToolExecutionStart{0, &call}));
        if (result) {
          agent::ToolOutput output = StoredOutput(*result);
          output.resources = agent::mcp::StoredResources(b.name(), output.details);
          out->push_back(
              *UpdateFromEvent(ev::ToolExecutionEnd{0, &call, &output, output.is_error}));
        }
        break;
      }
      case BlockType::kServerTool:
        ReplayServerTool(b, out);
        break;
    }
  }
}
}  // namespace

namespace {
// The updates of one entry of a replayed branch, appended to *out.
void ReplayEntry(const agent::Entry& e,
                 const std::unordered_map<std::string, const agent::Message*>& results,
                 std::vector<Json::Value>* out_vector) {
  std::vector<Json::Value>& out = *out_vector;
  switch (e.kind) {
    case agent::EntryKind::kMessage: {
      const agent::Message& m = e.message;
      if (!m.display) break;
      switch (m.role) {
        case agent::Role::kUser:
          for (const auto& b : m.content)
            if (b.type == BlockType::kText || b.type == BlockType::kImage)
              out.push_back(BlockChunk("user_message_chunk", b, e.id));
          break;
        case agent::Role::kAssistant:
          ReplayAssistant(m, e.id, results, &out);
          break;
        case agent::Role::kToolResult:
          break;  // shown with its call
      }
      break;
    }
    case agent::EntryKind::kModeChange:
      out.push_back(*UpdateFromEvent(ev::ModeChanged{e.more->mode}));
      break;
    case agent::EntryKind::kCustom:
      if (e.more->custom_type == agent::kPlanEntryType) {
        ev::PlanUpdate plan;
        for (const auto& p : e.more->data) {
          agent::PlanEntry pe;
          pe.content = StringOr(p, "content");
          pe.priority = StringOr(p, "priority", "medium");
          pe.status = StringOr(p, "status", "pending");
          plan.plan.push_back(std::move(pe));
        }
        out.push_back(*UpdateFromEvent(plan));
      }
      break;
    case agent::EntryKind::kSessionInfo: {
      Json::Value u(Json::objectValue);
      u["sessionUpdate"] = "session_info_update";
      u["title"] = e.more->name;
      out.push_back(u);
      break;
    }
    case agent::EntryKind::kModelChange:
    case agent::EntryKind::kThinkingChange:
    case agent::EntryKind::kLabel:
    case agent::EntryKind::kCompaction:
    case agent::EntryKind::kBranchSummary:
    case agent::EntryKind::kTtsrInjection:
      break;
  }
}
}  // namespace

void ForEachReplayUpdate(const std::vector<const agent::Entry*>& branch,
                         const std::function<void(const Json::Value&)>& visit) {
  std::unordered_map<std::string, const agent::Message*> results;
  for (const agent::Entry* e : branch)
    if (e->kind == agent::EntryKind::kMessage && e->message.role == agent::Role::kToolResult)
      results[e->message.tool_call_id] = &e->message;
  // One entry's updates at a time: a long session's replay never holds them all.
  std::vector<Json::Value> updates;
  for (const agent::Entry* e : branch) {
    updates.clear();
    ReplayEntry(*e, results, &updates);
    for (const Json::Value& u : updates) visit(u);
  }
}

std::vector<Json::Value> ReplayUpdates(const std::vector<const agent::Entry*>& branch) {
  std::vector<Json::Value> out;
  ForEachReplayUpdate(branch, [&](const Json::Value& u) { out.push_back(u); });
  return out;
}

}  // namespace lousho::acp

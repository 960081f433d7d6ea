// ACP wire codec: session updates from engine events (codec_replay.cpp: those of a stored
// branch; codec_notices.cpp: notices, compaction updates and which updates a client is sent),
// the terminal updates and the permission request.
#include <algorithm>

#include "acp/codec.h"
#include "support/json_util.h"
#include "support/json_writer.h"
#include "support/text.h"

namespace lousho::acp {
using agent::BlockType;
using agent::Event;

Json::Value TextBlock(const std::string& text) {
  Json::Value b(Json::objectValue);
  b["type"] = "text";
  b["text"] = text;
  return b;
}

Json::Value DiffToJson(const agent::FileDiff& diff) {
  Json::Value d(Json::objectValue);
  d["type"] = "diff";
  d["path"] = diff.path;
  d["oldText"] = diff.old_text ? Json::Value(*diff.old_text) : Json::Value();
  d["newText"] = diff.new_text;
  return d;
}

Json::Value LocationToJson(const agent::ToolLocation& loc) {
  Json::Value l(Json::objectValue);
  l["path"] = loc.path;
  if (loc.line > 0) l["line"] = loc.line;
  return l;
}

namespace {
Json::Value Locations(const std::vector<agent::ToolLocation>& locs) {
  Json::Value arr(Json::arrayValue);
  for (const auto& l : locs) arr.append(LocationToJson(l));
  return arr;
}

// A resource a tool returned: embedded (its text or blob) or as a link.
Json::Value ResourceBlock(const agent::ResourceRef& r) {
  Json::Value block(Json::objectValue);
  if (r.embedded && (r.text || r.blob)) {
    block["type"] = "resource";
    Json::Value res(Json::objectValue);
    res["uri"] = r.uri;
    if (!r.mime_type.empty()) res["mimeType"] = r.mime_type;
    if (r.text) {
      res["text"] = *r.text;
    } else {
      res["blob"] = *r.blob;
    }
    block["resource"] = res;
  } else {
    block["type"] = "resource_link";
    block["uri"] = r.uri;
    block["name"] = r.name.empty() ? r.uri : r.name;
    if (!r.mime_type.empty()) block["mimeType"] = r.mime_type;
  }
  return block;
}

// A tool call content item {type: "content", content: block}.
Json::Value ContentItem(Json::Value block) {
  Json::Value c(Json::objectValue);
  c["type"] = "content";
  c["content"] = std::move(block);
  return c;
}

Json::Value ToolOutputContent(const agent::ToolOutput& out) {
  Json::Value content(Json::arrayValue);
  if (!out.terminal_id.empty()) {
    Json::Value t(Json::objectValue);
    t["type"] = "terminal";
    t["terminalId"] = out.terminal_id;
    content.append(t);
  }
  for (const auto& d : out.diffs) content.append(DiffToJson(d));
  for (const auto& b : out.content) {
    if (b.type == BlockType::kImage) {
      Json::Value img(Json::objectValue);
      img["type"] = "image";
      img["data"] = b.data();
      img["mimeType"] = b.mime_type();
      content.append(ContentItem(std::move(img)));
    } else if (out.terminal_id.empty() || out.is_error) {
      // The terminal already shows a command's output; the diff already shows an edit.
      content.append(ContentItem(TextBlock(b.text)));
    }
  }
  for (const auto& r : out.resources) content.append(ContentItem(ResourceBlock(r)));
  return content;
}

// `text` as a Markdown code block, its fence longer than any run of backticks in it.
std::string FencedOutput(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  return fence + "\n" + text + "\n" + fence;
}

Json::Value RawOutput(const agent::ToolOutput& out) {
  if (!out.details.isNull()) return out.details;
  Json::Value raw(Json::objectValue);
  std::string text;
  for (const auto& b : out.content)
    if (b.type == BlockType::kText) text += b.text;
  raw[out.is_error ? "error" : "output"] = text;
  return raw;
}
}  // namespace

namespace {
namespace ev = agent::event;
using Update = std::optional<Json::Value>;

Json::Value ToolCallUpdate(const ev::ToolCall& call) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "tool_call_update";
  u["toolCallId"] = call.id;
  return u;
}

Json::Value Chunk(const char* kind, const std::string& text) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = kind;
  u["content"] = TextBlock(text);
  return u;
}

// One overload per event kind and no catch-all: a new kind breaks this door's build until it
// says what the kind becomes on the wire.
struct UpdateVisitor {
  // Text and thinking deltas are written by ChunkUpdateParamsJson alone (the per-delta path);
  // the other deltas have no update (a tool call is shown when the tool starts).
  Update operator()(const ev::MessageUpdate&) const { return std::nullopt; }
  Update operator()(const ev::ToolExecutionStart& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.call->id;
    u["title"] = e.call->title;
    if (!e.call->name.empty()) u["name"] = e.call->name;  // the tool's own name
    u["kind"] = ToolKindName(e.call->kind);
    u["status"] = "pending";
    u["rawInput"] = e.call->args ? *e.call->args : Json::Value();
    if (!e.call->locations.empty()) u["locations"] = Locations(e.call->locations);
    return u;
  }
  Update operator()(const ev::ToolExecutionUpdate& e) const {
    Json::Value u = ToolCallUpdate(*e.call);
    using Phase = ev::ToolExecutionUpdate::Phase;
    switch (e.phase) {
      case Phase::kInProgress:
        u["status"] = "in_progress";
        return u;
      case Phase::kTerminal: {
        Json::Value t(Json::objectValue);
        t["type"] = "terminal";
        t["terminalId"] = e.terminal_id;
        u["content"] = Json::Value(Json::arrayValue);
        u["content"].append(t);
        return u;
      }
      case Phase::kPartialOutput:
        // The output so far, replacing the last: a code block, as editors render text content
        // as Markdown. (An editor terminal shows the output itself and sends none.)
        u["content"] = Json::Value(Json::arrayValue);
        u["content"].append(ContentItem(TextBlock(FencedOutput(e.partial_output))));
        return u;
      case Phase::kProgress: {
        Json::Value c(Json::objectValue);
        c["type"] = "content";
        c["content"] = TextBlock(e.partial_output);
        u["status"] = "in_progress";
        u["content"] = Json::Value(Json::arrayValue);
        u["content"].append(c);
        return u;
      }
      case Phase::kSubagent:
        return SubagentUpdate(e);  // codec_subagent.cpp
    }
    return std::nullopt;
  }
  Update operator()(const ev::ToolExecutionEnd& e) const {
    Json::Value u = ToolCallUpdate(*e.call);
    u["status"] = e.is_error ? "failed" : "completed";
    if (e.output) {
      u["content"] = ToolOutputContent(*e.output);
      u["rawOutput"] = RawOutput(*e.output);
    }
    return u;
  }
  Update operator()(const ev::PlanUpdate& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "plan";
    Json::Value entries(Json::arrayValue);
    for (const auto& p : e.plan) {
      Json::Value entry(Json::objectValue);
      entry["content"] = p.content;
      entry["priority"] = p.priority;
      entry["status"] = p.status;
      entries.append(entry);
    }
    u["entries"] = entries;
    return u;
  }
  Update operator()(const ev::ModeChanged& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "current_mode_update";
    u["currentModeId"] = e.mode_id;
    return u;
  }
  Update operator()(const ev::UsageUpdate& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "usage_update";
    u["used"] = static_cast<Json::Int64>(e.context_used);
    u["size"] = static_cast<Json::Int64>(e.context_size);
    Json::Value cost(Json::objectValue);
    cost["amount"] = e.session_cost;
    cost["currency"] = "USD";
    u["cost"] = cost;
    return u;
  }
  // A stream rule stopped the answer the editor was showing (or flagged a tool call's
  // arguments): ACP has no message retraction, so the interruption is shown as what it is, a
  // completed "think" step titled with the rule, holding the rule's text; the retry streams
  // after it. See docs/architecture.md (Stream rules).
  Update operator()(const ev::TtsrTriggered& e) const {
    const std::string names = JoinStrings(e.rules, ", ");
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.id;
    u["title"] =
        std::string(e.rules.size() == 1 ? "Rule " : "Rules ") + names +
        (e.interrupted ? ": answer interrupted, retrying" : ": reminder added to the tool result");
    u["kind"] = "think";
    u["status"] = "completed";
    Json::Value raw(Json::objectValue);
    Json::Value list(Json::arrayValue);
    for (const auto& n : e.rules) list.append(n);
    raw["rules"] = list;
    raw["source"] = e.source;
    raw["interrupted"] = e.interrupted;
    if (!e.tool_call_id.empty()) raw["toolCallId"] = e.tool_call_id;
    u["rawInput"] = raw;
    Json::Value content(Json::arrayValue);
    for (const auto& d : e.details) {
      Json::Value c(Json::objectValue);
      c["type"] = "content";
      c["content"] = TextBlock(d.content);
      content.append(c);
    }
    u["content"] = content;
    return u;
  }
  // As the notes about MCP servers that did not start: a paragraph of the agent's text, set apart
  // from the answer around it, which every client shows; a client that declared
  // `session.notices` gets a notice as well (NoticeUpdateFromEvent). The session sends it
  // between messages, never inside a streamed one.
  Update operator()(const ev::Warning& e) const {
    return Chunk("agent_message_chunk",
                 "\n\n" + std::string(e.info ? "" : "**Warning:** ") + e.text + "\n\n");
  }
  // No ACP counterpart: the prompt's response and the updates above carry what ACP shows.
  Update operator()(const ev::AgentStart&) const { return std::nullopt; }
  Update operator()(const ev::AgentEnd&) const { return std::nullopt; }
  Update operator()(const ev::TurnStart&) const { return std::nullopt; }
  Update operator()(const ev::TurnEnd&) const { return std::nullopt; }
  Update operator()(const ev::MessageStart&) const { return std::nullopt; }
  Update operator()(const ev::MessageEnd&) const { return std::nullopt; }
  Update operator()(const ev::AutoRetryStart&) const { return std::nullopt; }
  Update operator()(const ev::AutoRetryEnd&) const { return std::nullopt; }
  // A compaction is shown as a "think" tool call: started, then completed with the summary, or
  // failed with why (cancelled: "Cancelled"). Nothing of it is hidden from the user.
  Update operator()(const ev::AutoCompactionStart& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.id;
    u["title"] = CompactionTitle(e.reason);
    u["kind"] = "think";
    u["status"] = "in_progress";
    Json::Value in(Json::objectValue);
    in["reason"] = e.reason;
    in["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
    u["rawInput"] = in;
    return u;
  }
  Update operator()(const ev::AutoCompactionEnd& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call_update";
    u["toolCallId"] = e.id;
    const bool ok = !e.aborted && e.error.empty();
    u["status"] = ok ? "completed" : "failed";
    std::string text;
    if (ok) {
      text = "Compacted: about " + std::to_string(e.tokens_before) + " tokens of context became " +
             std::to_string(e.tokens_after) + ".\n\n" + e.summary;
    } else {
      text = e.aborted ? "Compaction cancelled; the history is unchanged."
                       : "Compaction failed; the history is unchanged: " + e.error;
    }
    Json::Value c(Json::objectValue);
    c["type"] = "content";
    c["content"] = TextBlock(text);
    u["content"] = Json::Value(Json::arrayValue);
    u["content"].append(c);
    Json::Value out(Json::objectValue);
    out["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
    if (ok) out["tokensAfter"] = static_cast<Json::Int64>(e.tokens_after);
    out["aborted"] = e.aborted;
    out["willRetry"] = e.will_retry;
    if (!e.error.empty()) out["error"] = e.error;
    u["rawOutput"] = out;
    return u;
  }
  static std::string CompactionTitle(const std::string& reason) {
    if (reason == "overflow") return "Compacting the conversation (it no longer fit the model)";
    if (reason == "threshold") return "Compacting the conversation (the context is nearly full)";
    return "Compacting the conversation";
  }
  // The door sends the config options itself: they need the session's other values.
  Update operator()(const ev::ModelChanged&) const { return std::nullopt; }
  // The reminder itself is a hidden message; the plan shows the todos.
  Update operator()(const ev::TodoReminder&) const { return std::nullopt; }
  Update operator()(const ev::TodoAutoClear&) const { return std::nullopt; }
  // Only for clients that take compaction updates (CompactionUpdateFromEvent).
  Update operator()(const ev::CompactionSummaryDelta&) const { return std::nullopt; }
  Update operator()(const ev::SessionInfoChanged& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "session_info_update";
    u["title"] = e.name;
    return u;
  }
};
}  // namespace

std::optional<Json::Value> UpdateFromEvent(const Event& e) {
  return std::visit(UpdateVisitor{}, e);
}

namespace {
// The `_meta` member naming the display terminal of a call (terminal_info, terminal_output,
// terminal_exit), `fields` besides its id.
Json::Value TerminalMeta(const char* key, const std::string& call_id, Json::Value fields) {
  fields["terminal_id"] = call_id;
  Json::Value meta(Json::objectValue);
  meta[key] = std::move(fields);
  return meta;
}

// The bash call's status at its end: its exit code and signal (null when none).
Json::Value TerminalExit(const agent::ToolOutput& out) {
  Json::Value exit(Json::objectValue);
  const Json::Value& code = MemberOrNull(out.details, "exitCode");
  exit["exit_code"] = code.isInt() ? code : Json::Value();
  const Json::Value& signal = MemberOrNull(out.details, "signal");
  exit["signal"] = signal.isString() ? signal : Json::Value();
  return exit;
}
}  // namespace

std::optional<Json::Value> TerminalMetaUpdateFromEvent(const Event& e) {
  if (const auto* start = std::get_if<ev::ToolExecutionStart>(&e)) {
    if (start->call == nullptr || start->call->name != "bash") return std::nullopt;
    Json::Value u = *UpdateFromEvent(e);
    Json::Value t(Json::objectValue);
    t["type"] = "terminal";
    t["terminalId"] = start->call->id;
    u["content"] = Json::Value(Json::arrayValue);
    u["content"].append(t);
    u["_meta"] = TerminalMeta("terminal_info", start->call->id, Json::Value(Json::objectValue));
    return u;
  }
  if (const auto* update = std::get_if<ev::ToolExecutionUpdate>(&e)) {
    if (update->call == nullptr || update->call->name != "bash" ||
        update->phase != ev::ToolExecutionUpdate::Phase::kPartialOutput)
      return std::nullopt;
    Json::Value u = ToolCallUpdate(*update->call);
    Json::Value data(Json::objectValue);
    data["data"] = update->output_delta;  // the terminal appends it
    u["_meta"] = TerminalMeta("terminal_output", update->call->id, data);
    return u;
  }
  const auto* end = std::get_if<ev::ToolExecutionEnd>(&e);
  if (end == nullptr || end->call == nullptr || end->output == nullptr ||
      end->call->name != "bash" || !end->output->terminal_id.empty())
    return std::nullopt;
  agent::ToolOutput shown = *end->output;
  shown.terminal_id = end->call->id;  // the terminal shows the output; a failure says why too
  Json::Value u =
      *UpdateFromEvent(ev::ToolExecutionEnd{end->turn, end->call, &shown, end->is_error});
  u["_meta"] = TerminalMeta("terminal_exit", end->call->id, TerminalExit(*end->output));
  return u;
}

namespace {
const char* ChunkKind(agent::DeltaKind kind) {
  switch (kind) {
    case agent::DeltaKind::kText:
      return "agent_message_chunk";
    case agent::DeltaKind::kThinking:
      return "agent_thought_chunk";
    case agent::DeltaKind::kToolCallStart:
    case agent::DeltaKind::kToolCallArgs:
    case agent::DeltaKind::kToolCallEnd:
    case agent::DeltaKind::kTextStart:
    case agent::DeltaKind::kTextEnd:
    case agent::DeltaKind::kThinkingStart:
    case agent::DeltaKind::kThinkingEnd:
    case agent::DeltaKind::kServerToolStart:  // shown as a tool call (its ToolExecution events)
    case agent::DeltaKind::kServerToolEnd:
      break;
  }
  return nullptr;
}
}  // namespace

std::optional<std::string> ChunkUpdateParamsJson(const std::string& session_id, const Event& e) {
  const auto* update = std::get_if<ev::MessageUpdate>(&e);
  if (update == nullptr || update->delta == nullptr) return std::nullopt;
  const char* kind = ChunkKind(update->delta->kind);
  if (kind == nullptr) return std::nullopt;
  const std::string& text = update->delta->text;
  std::string out;
  out.reserve(96 + session_id.size() + text.size());
  // Members in jsoncpp's sorted order, as every other update is written.
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("sessionId", session_id);
  w.AttributeBegin("update");
  w.ObjectBegin();
  w.AttributeBegin("content");
  w.ObjectBegin();
  w.Attribute("text", text);
  w.Attribute("type", "text");
  w.ObjectEnd();
  w.AttributeEnd();
  // The message's history entry id (the same on replay); none known, no member.
  if (!update->message_id.empty()) w.Attribute("messageId", update->message_id);
  w.Attribute("sessionUpdate", kind);
  w.ObjectEnd();
  w.AttributeEnd();
  w.ObjectEnd();
  return out;
}

std::string UpdateParamsJson(const std::string& session_id, const Json::Value& update) {
  std::string out;
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("sessionId", session_id);
  w.Attribute("update", update);
  w.ObjectEnd();
  return out;
}

Json::Value PermissionRequestToJson(const std::string& session_id,
                                    const agent::PermissionRequest& request) {
  Json::Value p(Json::objectValue);
  p["sessionId"] = session_id;
  Json::Value tc(Json::objectValue);
  tc["toolCallId"] = request.tool_call_id;
  tc["title"] = request.title;
  tc["kind"] = ToolKindName(request.kind);
  tc["status"] = "pending";
  tc["rawInput"] = request.raw_input;
  if (!request.locations.empty()) tc["locations"] = Locations(request.locations);
  if (!request.diffs.empty()) {
    Json::Value content(Json::arrayValue);
    for (const auto& d : request.diffs) content.append(DiffToJson(d));
    tc["content"] = content;
  }
  if (!request.subagent.empty())
    tc["_meta"] = SubagentMeta(request.subagent, "", request.parent_tool_call_id);
  p["toolCall"] = tc;
  Json::Value options(Json::arrayValue);
  const char* kinds[][2] = {{"allow_once", "Allow once"},
                            {"allow_always", "Always allow"},
                            {"reject_once", "Reject"},
                            {"reject_always", "Always reject"}};
  for (const auto& k : kinds) {
    Json::Value o(Json::objectValue);
    o["optionId"] = k[0];
    o["name"] = k[1];
    o["kind"] = k[0];
    options.append(o);
  }
  p["options"] = options;
  return p;
}

agent::PermissionDecision PermissionDecisionFromJson(const Json::Value& result) {
  // Anything but a well-formed selection of one of our options counts as a rejection.
  const Json::Value& outcome = MemberOrNull(result, "outcome");
  const std::string kind = StringOr(outcome, "outcome");
  if (kind == "cancelled") return agent::PermissionDecision::kCancelled;
  if (kind != "selected") return agent::PermissionDecision::kRejectOnce;
  const std::string id = StringOr(outcome, "optionId");
  if (id == "allow_once") return agent::PermissionDecision::kAllowOnce;
  if (id == "allow_always") return agent::PermissionDecision::kAllowAlways;
  if (id == "reject_always") return agent::PermissionDecision::kRejectAlways;
  return agent::PermissionDecision::kRejectOnce;
}

}  // namespace lousho::acp

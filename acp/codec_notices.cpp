// ACP wire codec: the editor's notices and compaction updates from engine events, and which
// updates of an event a client is sent (ForEachSessionUpdate); the other updates are in
// codec_updates.cpp.
#include "acp/codec.h"
#include "support/json_util.h"
#include "support/text.h"

namespace lousho::acp {
using agent::Event;

Json::Value NoticeUpdate(const char* severity, const std::string& title,
                         const std::string& description) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "notice";
  u["severity"] = severity;
  u["title"] = title.empty() ? std::string("lousho") : title;  // the schema wants one character
  if (!description.empty()) u["description"] = description;
  return u;
}

namespace {
// The notices of the events whose tool-call placeholder they replace (NoticeReplacesUpdate).
std::optional<Json::Value> PlaceholderNotice(const Event& e) {
  if (const auto* t = std::get_if<agent::event::TtsrTriggered>(&e)) {
    if (!t->interrupted) return std::nullopt;
    return NoticeUpdate("info", "Stream rule: " + JoinStrings(t->rules, ", "),
                        "The reply was stopped and goes on with the rule's guidance (" +
                            JoinStrings(t->rules, ", ") + ").");
  }
  if (const auto* s = std::get_if<agent::event::AutoCompactionStart>(&e))
    return NoticeUpdate("info", "Compacting the conversation",
                        "Summarizing older messages (" + s->reason + ", " +
                            std::to_string(s->tokens_before) + " tokens).");
  const auto* end = std::get_if<agent::event::AutoCompactionEnd>(&e);
  if (end == nullptr) return std::nullopt;
  if (end->aborted)
    return NoticeUpdate("info", "Compaction cancelled", "The history is unchanged.");
  if (!end->error.empty())
    return NoticeUpdate("warning", "Compaction failed", "The history is unchanged: " + end->error);
  return NoticeUpdate("info", "Conversation compacted",
                      std::to_string(end->tokens_before) + " tokens became about " +
                          std::to_string(end->tokens_after) + ".");
}
}  // namespace

bool NoticeReplacesUpdate(const Event& e) {
  return std::holds_alternative<agent::event::TtsrTriggered>(e) ||
         std::holds_alternative<agent::event::AutoCompactionStart>(e) ||
         std::holds_alternative<agent::event::AutoCompactionEnd>(e);
}

std::optional<Json::Value> NoticeUpdateFromEvent(const Event& e) {
  if (const auto* w = std::get_if<agent::event::Warning>(&e))
    return NoticeUpdate(w->info ? "info" : "warning", w->title.empty() ? w->text : w->title,
                        w->text);
  return PlaceholderNotice(e);
}

void ForEachSessionUpdate(const Event& e, const ClientCapabilities& caps,
                          const std::function<void(const Json::Value&)>& send) {
  std::optional<Json::Value> update;
  // A client that runs commands itself shows them in its own terminals instead.
  if (caps.meta_terminal_output && !caps.terminal) update = TerminalMetaUpdateFromEvent(e);
  if (caps.compaction && !update) update = CompactionUpdateFromEvent(e);
  std::optional<Json::Value> notice;
  if (caps.notices && !update) notice = NoticeUpdateFromEvent(e);
  if (!update && !(notice && NoticeReplacesUpdate(e))) update = UpdateFromEvent(e);
  if (update) send(*update);
  if (notice) send(*notice);
}

std::optional<Json::Value> CompactionUpdateFromEvent(const Event& e) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "compaction_update";
  if (const auto* start = std::get_if<agent::event::AutoCompactionStart>(&e)) {
    u["compactionId"] = start->id;
    u["status"] = "in_progress";
    return u;
  }
  if (const auto* delta = std::get_if<agent::event::CompactionSummaryDelta>(&e)) {
    u["sessionUpdate"] = "compaction_summary_chunk";
    u["compactionId"] = delta->id;
    u["content"] = TextBlock(delta->text);
    return u;
  }
  const auto* end = std::get_if<agent::event::AutoCompactionEnd>(&e);
  if (end == nullptr) return std::nullopt;
  u["compactionId"] = end->id;
  if (end->aborted) {
    u["status"] = "cancelled";
  } else if (!end->error.empty()) {
    u["status"] = "failed";
    u["error"] = "The history is unchanged: " + end->error;
  } else {
    u["status"] = "completed";
    u["summary"] = Json::Value(Json::arrayValue);
    u["summary"].append(TextBlock(end->summary));
  }
  return u;
}

}  // namespace lousho::acp

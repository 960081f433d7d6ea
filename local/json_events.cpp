// The --json lines: lousho run's own objects here, the engine's events through the RPC codec.
#include "local/json_events.h"

#include <utility>

#include "rpc_compat/codec.h"
#include "support/json_util.h"

namespace lousho::local {
namespace {

Json::Value TypedObject(const char* type) {
  Json::Value v(Json::objectValue);
  v["type"] = type;
  return v;
}

Json::Value UsageJson(const agent::Usage& u) {
  Json::Value v(Json::objectValue);
  v["input"] = Json::Int64(u.input);
  v["output"] = Json::Int64(u.output);
  v["cacheRead"] = Json::Int64(u.cache_read);
  v["cacheWrite"] = Json::Int64(u.cache_write);
  v["totalTokens"] = Json::Int64(u.total());
  return v;
}

}  // namespace

JsonEventWriter::JsonEventWriter(std::function<void(const std::string& line)> write_line)
    : write_(std::move(write_line)) {}

void JsonEventWriter::Start(const RunStart& start) {
  Json::Value v = TypedObject("start");
  v["version"] = kRunJsonVersion;
  v["lousho"] = LOUSHO_VERSION;
  v["sessionId"] = start.session_id;
  v["sessionFile"] = start.session_file.empty() ? Json::Value() : Json::Value(start.session_file);
  v["cwd"] = start.cwd;
  v["agent"] = start.agent;
  v["model"] = start.model;
  v["mode"] = start.mode;
  write_(WriteJson(v));
}

void JsonEventWriter::Event(const agent::Event& event) {
  if (const auto* w = std::get_if<agent::event::Warning>(&event)) {
    Json::Value v = TypedObject("warning");
    v["source"] = w->source;
    v["title"] = w->title;
    v["text"] = w->text;
    v["info"] = w->info;
    write_(WriteJson(v));
    return;
  }
  // A reply's delta: its line without a DOM of the message, as the RPC door writes it.
  if (auto line = rpc_compat::MessageUpdateLine(event)) {
    write_(*line);
    return;
  }
  for (const Json::Value& frame : rpc_compat::FramesFromEvent(event)) write_(WriteJson(frame));
}

void JsonEventWriter::Refused(const Refusal& refusal) {
  Json::Value v = TypedObject("permission_refused");
  v["toolCallId"] = refusal.tool_call_id;
  v["toolName"] = refusal.tool_name;
  v["title"] = refusal.title;
  if (!refusal.subagent.empty()) v["subagent"] = refusal.subagent;
  v["suggestion"] = refusal.suggestion;
  write_(WriteJson(v));
}

void JsonEventWriter::Result(const RunOutcome& outcome) {
  Json::Value v = TypedObject("result");
  v["exitCode"] = outcome.exit_code;
  v["stopReason"] = outcome.stop_reason;
  if (!outcome.error.empty()) v["error"] = outcome.error;
  v["answer"] = outcome.answer;
  v["usage"] = UsageJson(outcome.usage);
  v["cost"] = outcome.usage.cost;
  v["refused"] = outcome.refused;
  v["sessionId"] = outcome.session_id;
  v["sessionFile"] =
      outcome.session_file.empty() ? Json::Value() : Json::Value(outcome.session_file);
  write_(WriteJson(v));
}

}  // namespace lousho::local

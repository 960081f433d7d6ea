// RPC wire codec: engine values <-> the RPC dialect's JSON, as pure functions (no I/O, no state).
#pragma once

#include <json/json.h>

#include <optional>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/turn.h"
#include "core/client_services.h"
#include "core/content.h"
#include "core/events.h"
#include "support/status.h"

namespace lousho::rpc_compat {

inline constexpr int kProtocolVersion = 1;
inline constexpr long long kMaxFrameBytes = 1048576;

// The first line lousho writes (omp's start-up frame; hosts that do not know it ignore it).
// A frame of `type`, its other members to be set (every frame starts here).
Json::Value NewFrame(const char* type);

Json::Value ReadyFrame();

// A response frame. `id` is echoed whenever the command had one (null: none).
Json::Value ResponseFrame(const Json::Value& id, const std::string& command, bool success,
                          const Json::Value* data, const std::string& error);

// A frame whose line (with its LF) is longer than kMaxFrameBytes, made to fit as the v1 dialect
// does: a response becomes a failure ("RPC response exceeded the transport limit"), an
// agent_end drops its messages (already streamed one by one) and says how many there were,
// anything else becomes an rpc_frame_error naming its type.
Json::Value FitFrame(const Json::Value& frame);

// Typed fields of each command. FromJson checks every field before use and names the first bad
// one ("message: expected string"); unknown fields are ignored.
struct NoParams {
  static Result<NoParams> FromJson(const Json::Value& cmd);
};
// prompt, steer, follow_up, abort_and_prompt.
struct PromptParams {
  std::vector<agent::ContentBlock> content;  // the message, then its images
  std::string streaming_behavior;            // "", "steer" or "followUp"
  static Result<PromptParams> FromJson(const Json::Value& cmd);
};
struct NewSessionParams {
  std::string parent_session;
  static Result<NewSessionParams> FromJson(const Json::Value& cmd);
};
struct SetModelParams {
  std::string provider, model_id;
  static Result<SetModelParams> FromJson(const Json::Value& cmd);
};
struct LevelParams {
  std::string level;
  static Result<LevelParams> FromJson(const Json::Value& cmd);
};
struct ModeParams {
  std::string mode;
  static Result<ModeParams> FromJson(const Json::Value& cmd);
};
struct EnabledParams {
  bool enabled = false;
  static Result<EnabledParams> FromJson(const Json::Value& cmd);
};
struct BashParams {
  std::string command;
  static Result<BashParams> FromJson(const Json::Value& cmd);
};
struct EntryParams {
  std::string entry_id;
  bool restore_files = false;  // [rewind] branch/fork: lousho's `restoreFiles`
  static Result<EntryParams> FromJson(const Json::Value& cmd);
};
struct NameParams {
  std::string name;
  static Result<NameParams> FromJson(const Json::Value& cmd);
};
// export_html (outputPath?), switch_session (sessionPath), compact (customInstructions?).
struct PathParams {
  std::string path;
  static Result<PathParams> FromJson(const Json::Value& cmd);
};
struct TodosParams {
  std::vector<agent::TodoPhase> phases;  // [{id?, name, tasks:[{id?, content, status, blocker?}]}]
  static Result<TodosParams> FromJson(const Json::Value& cmd);
};
Json::Value TodoTaskToJson(const agent::TodoTask& task);
Json::Value TodosToJson(const std::vector<agent::TodoPhase>& phases);
struct HostToolsParams {
  std::vector<agent::HostToolSpec> tools;  // names unique, descriptions non-empty
  static Result<HostToolsParams> FromJson(const Json::Value& cmd);
};
struct NegotiateParams {
  long long version = 0;
  static Result<NegotiateParams> FromJson(const Json::Value& cmd);
};

// An extension_ui_response: a value, a confirmation, or a cancellation.
struct UiResponse {
  std::string id;
  std::optional<std::string> value;
  std::optional<bool> confirmed;
  bool cancelled = false;
  static Result<UiResponse> FromJson(const Json::Value& frame);
};
// host_tool_update (partialResult) and host_tool_result (result, isError).
struct HostToolReply {
  std::string id;
  agent::HostToolResult result;
  static Result<HostToolReply> FromJson(const Json::Value& frame, bool final);
};

// A message as the RPC dialect shows it (AgentMessage).
Json::Value MessageToRpc(const agent::Message& m);
Json::Value MessagesToRpc(const std::vector<agent::Message>& messages);
// A tool call's result as the tool-result message that follows tool_execution_end.
agent::Message ToolResultMessage(const agent::event::ToolCall& call,
                                 const agent::ToolOutput& output, bool is_error);

// A subagent's step as the task call's tool_execution_update: partialResult holds the summary
// (agent::SubagentSummary) as text and, in details, {subagent: {agent, sessionId, depth},
// events: the frames the child's event becomes} (codec_subagent.cpp); nullopt for a text delta
// between two refreshes of the summary.
std::optional<Json::Value> SubagentFrame(const agent::event::ToolCall& call,
                                         const agent::event::SubagentStep& step);

// The frames an engine event becomes (none, one, or a few), in order.
std::vector<Json::Value> FramesFromEvent(const agent::Event& event);

// The status key a compaction in progress shows under (setStatus).
inline constexpr char kCompactionStatusKey[] = "compaction";
// The extension-UI setStatus request ({method, statusKey, statusText}; HostChannel::Tell adds
// the type and id) of what lasts: a compaction from its start (statusText set) to its end
// (cleared: ""). nullopt for every other event.
std::optional<Json::Value> StatusRequestFromEvent(const agent::Event& event);

// The line of the message_update frame a delta becomes (its assistantMessageEvent and the
// partial message), written by the JsonWriter without a DOM of the message: every delta of a
// reply takes this path, and its line carries the whole message so far. A line over
// kMaxFrameBytes becomes FitFrame's rpc_frame_error. nullopt for any other event (and a delta
// without its message): those take FramesFromEvent, which makes no message_update frame.
std::optional<std::string> MessageUpdateLine(const agent::Event& event);

// A model the host may choose, and its Model object.
struct ModelOption {
  std::string provider, id, name, api, base_url;
  bool reasoning = false;
  bool images = false;
  double input_price = 0, output_price = 0, cache_read_price = 0, cache_write_price = 0;
  long long context_window = 0;
  long long max_tokens = 0;
};
Json::Value ModelToJson(const ModelOption& model);

}  // namespace lousho::rpc_compat

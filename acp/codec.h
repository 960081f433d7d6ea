// ACP wire codec: engine values <-> ACP JSON, as pure functions (no I/O, no state).
#pragma once

#include <json/json.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent_config.h"
#include "agent/permissions.h"
#include "agent/session_context.h"
#include "agent/turn.h"
#include "core/client_services.h"
#include "core/content.h"
#include "core/events.h"

namespace lousho::acp {

inline constexpr int kProtocolVersion = 1;

struct ClientCapabilities {
  bool fs_read = false;
  bool fs_write = false;
  bool terminal = false;
  bool compaction = false;          // session.compaction: compaction_update may be sent
  bool notices = false;             // session.notices: notice updates may be sent
  bool auth_terminal = false;       // auth.terminal: runs `terminal` auth methods (args appended)
  bool meta_terminal_auth = false;  // _meta["terminal-auth"]: the older full-command form
  bool elicitation_form = false;    // elicitation.form: elicitation/create in form mode
  bool elicitation_url = false;     // elicitation.url: elicitation/create in URL mode
  Json::Value raw;                  // as sent, for later use

  // _meta.terminal_output: shows display-only terminals the agent fills (Zed's convention).
  bool meta_terminal_output = false;
};
ClientCapabilities ClientCapabilitiesFromJson(const Json::Value& caps);

// Typed params of each client -> agent method. FromJson checks every field before use and names
// the first bad one by path ("params.sessionId: required"); unknown fields are ignored.
struct InitializeParams {
  long long protocol_version = 0;
  ClientCapabilities capabilities;
  static Result<InitializeParams> FromJson(const Json::Value& params);
};
struct NewSessionParams {
  std::string cwd;
  Json::Value mcp_servers;  // array (null when absent)
  std::vector<std::string> additional_directories;
  // `systemPrompt` (ACP 1.30: {mode: append | override, content: [text blocks]}; the earlier
  // draft's plain string: append). Another mode or block type: -32602.
  std::optional<agent::ClientPrompt> system_prompt;
  static Result<NewSessionParams> FromJson(const Json::Value& params);
};
// `sessionCapabilities.systemPrompt` as initialize advertises it: append and override.
Json::Value SystemPromptCapability();
// session/load and session/resume (sessionId, then what session/new takes).
struct LoadSessionParams {
  std::string session_id;
  NewSessionParams session;
  static Result<LoadSessionParams> FromJson(const Json::Value& params);
};
// session/fork (unstable): the session to fork, then what session/new takes; `_meta.messageId`
// (a message id of that session's chunks) forks at that message, kept; absent: the whole history.
struct ForkSessionParams {
  std::string session_id;
  std::string message_id;
  NewSessionParams session;
  static Result<ForkSessionParams> FromJson(const Json::Value& params);
};
// `logout`: nothing but an optional `_meta`.
struct LogoutParams {
  static Result<LogoutParams> FromJson(const Json::Value& params);
};
struct ListSessionsParams {
  std::string cwd;     // empty: every session
  std::string cursor;  // empty: the first page
  static Result<ListSessionsParams> FromJson(const Json::Value& params);
};
// session/new and session/load `mcpServers`: stdio ({name, command, args, env: [{name, value}]}),
// {type: "http", name, url, headers: [{name, value}]} and {type: "sse", ...}. Errors name the
// field by path.
Result<std::vector<config::McpServerSpec>> McpServersFromJson(
    const Json::Value& list, const std::string& path = "params.mcpServers");

struct PromptParams {
  std::string session_id;
  Json::Value prompt;  // a non-empty array of content blocks (see PromptFromJson)
  static Result<PromptParams> FromJson(const Json::Value& params);
};
struct SetModeParams {
  std::string session_id;
  std::string mode_id;
  static Result<SetModeParams> FromJson(const Json::Value& params);
};
// session/close and session/cancel.
struct SessionIdParams {
  std::string session_id;
  static Result<SessionIdParams> FromJson(const Json::Value& params);
};
// session/set_config_option: a value id (a string; `type: "boolean"` values are not offered).
struct SetConfigOptionParams {
  std::string session_id;
  std::string config_id;
  Json::Value value;  // as sent
  static Result<SetConfigOptionParams> FromJson(const Json::Value& params);
};
// session/set_model (the older, since removed unstable method some clients still send).
struct SetModelParams {
  std::string session_id;
  std::string model_id;
  static Result<SetModelParams> FromJson(const Json::Value& params);
};
struct AuthenticateParams {
  std::string method_id;
  static Result<AuthenticateParams> FromJson(const Json::Value& params);
};
struct CancelRequestParams {
  Json::Value request_id;
  static Result<CancelRequestParams> FromJson(const Json::Value& params);
};

// Converts a prompt (ContentBlock[]) to engine blocks. Fails (with the field path) only on
// malformed blocks; unsupported kinds degrade to text notes.
Result<std::vector<agent::ContentBlock>> PromptFromJson(const Json::Value& prompt,
                                                        bool images_supported);

const char* ToolKindName(agent::ToolKind kind);
// The unstable PromptResponse `usage` of a prompt: inputTokens counts every input token (cached
// ones too, also given apart), totalTokens input and output.
Json::Value PromptUsageToJson(const agent::Usage& usage);
const char* StopReasonName(agent::TurnStop stop);
const char* ModeName(agent::PermissionMode mode);

// The `modes` object of session/new: every mode with the current one.
Json::Value ModesToJson(agent::PermissionMode current);

// The ids of the session config options.
inline constexpr char kConfigMode[] = "mode";
inline constexpr char kConfigModel[] = "model";
inline constexpr char kConfigThoughtLevel[] = "thought_level";

// The current values a session's config options show.
struct SessionConfigValues {
  agent::PermissionMode mode = agent::PermissionMode::kDefault;
  std::string model;  // "provider/model"
  std::string thinking = "off";
};
// A thinking level a picker offers: its id and the name shown (the session host's list).
using ThinkingLevelNames = std::vector<std::pair<std::string, std::string>>;
// `configOptions`: the mode, the model (the offered ones) and the thinking level, as selects.
Json::Value ConfigOptionsToJson(const SessionConfigValues& current,
                                const std::vector<agent::ModelOption>& models,
                                const ThinkingLevelNames& levels);
// The older `models` object ({currentModelId, availableModels}) for session/set_model clients.
Json::Value ModelsToJson(const std::string& current, const std::vector<agent::ModelOption>& models);
// The `config_option_update` update.
Json::Value ConfigOptionUpdate(const SessionConfigValues& current,
                               const std::vector<agent::ModelOption>& models,
                               const ThinkingLevelNames& levels);

// A text content block {type: "text", text}.
Json::Value TextBlock(const std::string& text);

// The session/update `update` object for an engine event, or nullopt when the event has no ACP
// counterpart or is a text or thinking delta (ChunkUpdateParamsJson writes those).
std::optional<Json::Value> UpdateFromEvent(const agent::Event& event);

// The session/update `update` objects that show a stored branch again (session/load): the
// user's and the agent's messages, thoughts, tool calls with their final status and content,
// plans, mode changes and the session's name, in order.
std::vector<Json::Value> ReplayUpdates(const std::vector<const agent::Entry*>& branch);
// The same, each handed to `visit` as it is made (a long branch's updates are never all held).
void ForEachReplayUpdate(const std::vector<const agent::Entry*>& branch,
                         const std::function<void(const Json::Value&)>& visit);

// The session/update params of a text or thinking delta (agent_message_chunk,
// agent_thought_chunk), written by the JsonWriter straight from the delta: the per-delta path,
// and the only one these updates take. nullopt for every other event (UpdateFromEvent).
std::optional<std::string> ChunkUpdateParamsJson(const std::string& session_id,
                                                 const agent::Event& event);
// The session/update params {sessionId, update} of any other update, written by the JsonWriter
// (the update is not copied into a params value).
std::string UpdateParamsJson(const std::string& session_id, const Json::Value& update);

// For a client that declared `session.compaction`: a compaction as the newer
// `compaction_update` (in_progress, then completed with the summary, failed with the error, or
// cancelled) instead of a think tool call, and the summary as the model writes it as
// `compaction_summary_chunk`s between the two; nullopt for every other event.
std::optional<Json::Value> CompactionUpdateFromEvent(const agent::Event& event);

// For a client that declared `_meta.terminal_output` and runs no commands itself (no
// `terminal`): the local bash tool's call as a display-only terminal, the convention of Zed and
// the Claude and Codex adapters. The `tool_call` holds a terminal item (id: the call's id) and
// `_meta.terminal_info`; each piece of output while it runs is a `tool_call_update` with
// `_meta.terminal_output {terminal_id, data}` (the new bytes: the editor appends them); the
// final update keeps the terminal item (with the result's text when the call failed) and adds
// `_meta.terminal_exit {terminal_id, exit_code, signal}`. nullopt for every other event, which
// UpdateFromEvent shows as usual.
std::optional<Json::Value> TerminalMetaUpdateFromEvent(const agent::Event& event);

// For a client that declared `session.notices`: the `notice` update of an event that warns or
// informs the user outside the conversation (saving the session failed or works again), sent
// besides the agent message UpdateFromEvent gives; nullopt for every other event.
// Also (taking the place of their tool-call placeholder, NoticeReplacesUpdate): a stream rule
// that interrupted the reply, a compaction begun and ended (when compaction_update is not
// sent).
std::optional<Json::Value> NoticeUpdateFromEvent(const agent::Event& event);
bool NoticeReplacesUpdate(const agent::Event& event);
// A `notice` update (the title is never empty; no description when `description` is).
Json::Value NoticeUpdate(const char* severity, const std::string& title,
                         const std::string& description);
// The updates of an event other than a chunk, as the client's capabilities choose them:
// compaction_update (session.compaction), else a notice in place of a placeholder
// (session.notices), else today's update, then a notice beside it (a warning).
void ForEachSessionUpdate(const agent::Event& event, const ClientCapabilities& caps,
                          const std::function<void(const Json::Value&)>& send);

// A subagent's step (ToolExecutionUpdate kSubagent) as the task call's `tool_call_update`: its
// tool calls and its text so far as the call's content, and `_meta["lousho/subagent"]`; nullopt
// when the step changes nothing shown (codec_subagent.cpp).
std::optional<Json::Value> SubagentUpdate(const agent::event::ToolExecutionUpdate& update);
// `{"lousho/subagent": {agent, sessionId, parentToolCallId}}` (empty members left out).
Json::Value SubagentMeta(const std::string& agent, const std::string& session_id,
                         const std::string& parent_tool_call_id);

// The session/request_permission params.
Json::Value PermissionRequestToJson(const std::string& session_id,
                                    const agent::PermissionRequest& request);
// Maps a request_permission result to a decision; unknown option ids reject once.
agent::PermissionDecision PermissionDecisionFromJson(const Json::Value& result);

Json::Value DiffToJson(const agent::FileDiff& diff);
Json::Value LocationToJson(const agent::ToolLocation& loc);

}  // namespace lousho::acp

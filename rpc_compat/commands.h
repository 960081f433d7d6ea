// RPC (xcsh / omp / pi `--mode rpc`) wire names: every command, event and frame type, defined once.
#pragma once

namespace lousho::rpc_compat {

// Host -> lousho: commands (answered by a `response`).
namespace command {
inline constexpr char kNegotiateProtocol[] = "negotiate_protocol";
inline constexpr char kPrompt[] = "prompt";
inline constexpr char kSteer[] = "steer";
inline constexpr char kFollowUp[] = "follow_up";
inline constexpr char kAbort[] = "abort";
inline constexpr char kAbortAndPrompt[] = "abort_and_prompt";
inline constexpr char kNewSession[] = "new_session";
inline constexpr char kGetState[] = "get_state";
inline constexpr char kSetTodos[] = "set_todos";
inline constexpr char kSetHostTools[] = "set_host_tools";
inline constexpr char kSetModel[] = "set_model";
inline constexpr char kCycleModel[] = "cycle_model";
inline constexpr char kGetAvailableModels[] = "get_available_models";
inline constexpr char kSetThinkingLevel[] = "set_thinking_level";
inline constexpr char kCycleThinkingLevel[] = "cycle_thinking_level";
inline constexpr char kGetAvailableThinkingLevels[] = "get_available_thinking_levels";
inline constexpr char kSetSteeringMode[] = "set_steering_mode";
inline constexpr char kSetFollowUpMode[] = "set_follow_up_mode";
inline constexpr char kSetInterruptMode[] = "set_interrupt_mode";
inline constexpr char kCompact[] = "compact";
inline constexpr char kSetAutoCompaction[] = "set_auto_compaction";
inline constexpr char kSetAutoRetry[] = "set_auto_retry";
inline constexpr char kAbortRetry[] = "abort_retry";
inline constexpr char kBash[] = "bash";
inline constexpr char kAbortBash[] = "abort_bash";
inline constexpr char kGetSessionStats[] = "get_session_stats";
inline constexpr char kExportHtml[] = "export_html";
inline constexpr char kSwitchSession[] = "switch_session";
inline constexpr char kBranch[] = "branch";
inline constexpr char kFork[] = "fork";  // pi's name for branch
inline constexpr char kGetBranchMessages[] = "get_branch_messages";
inline constexpr char kGetForkMessages[] = "get_fork_messages";  // pi's name
inline constexpr char kGetLastAssistantText[] = "get_last_assistant_text";
inline constexpr char kSetSessionName[] = "set_session_name";
inline constexpr char kGetMessages[] = "get_messages";
inline constexpr char kGetCommands[] = "get_commands";                     // pi hosts
inline constexpr char kGetAvailableCommands[] = "get_available_commands";  // omp hosts
inline constexpr char kParse[] = "parse";  // the `command` of a reply to an unreadable line
}  // namespace command

// Host -> lousho: side-channel replies (no response).
namespace inbound {
inline constexpr char kExtensionUiResponse[] = "extension_ui_response";
inline constexpr char kHostToolUpdate[] = "host_tool_update";
inline constexpr char kHostToolResult[] = "host_tool_result";
}  // namespace inbound

// lousho -> host.
namespace frame {
inline constexpr char kReady[] = "ready";
inline constexpr char kResponse[] = "response";
inline constexpr char kAgentStart[] = "agent_start";
inline constexpr char kAgentEnd[] = "agent_end";
inline constexpr char kAgentSettled[] = "agent_settled";
inline constexpr char kTurnStart[] = "turn_start";
inline constexpr char kTurnEnd[] = "turn_end";
inline constexpr char kMessageStart[] = "message_start";
inline constexpr char kMessageUpdate[] = "message_update";
inline constexpr char kMessageEnd[] = "message_end";
inline constexpr char kToolExecutionStart[] = "tool_execution_start";
inline constexpr char kToolExecutionUpdate[] = "tool_execution_update";
inline constexpr char kToolExecutionEnd[] = "tool_execution_end";
inline constexpr char kAutoCompactionStart[] = "auto_compaction_start";
inline constexpr char kAutoCompactionEnd[] = "auto_compaction_end";
inline constexpr char kAutoRetryStart[] = "auto_retry_start";
inline constexpr char kAutoRetryEnd[] = "auto_retry_end";
inline constexpr char kTtsrTriggered[] = "ttsr_triggered";
inline constexpr char kTodoReminder[] = "todo_reminder";
inline constexpr char kTodoAutoClear[] = "todo_auto_clear";
inline constexpr char kBashExecutionUpdate[] = "bash_execution_update";
inline constexpr char kExtensionUiRequest[] = "extension_ui_request";
inline constexpr char kExtensionError[] = "extension_error";
inline constexpr char kHostToolCall[] = "host_tool_call";
inline constexpr char kHostToolCancel[] = "host_tool_cancel";
inline constexpr char kRpcFrameError[] = "rpc_frame_error";
}  // namespace frame

// extension_ui_request methods.
namespace ui {
inline constexpr char kSelect[] = "select";
inline constexpr char kConfirm[] = "confirm";
inline constexpr char kInput[] = "input";
inline constexpr char kEditor[] = "editor";
inline constexpr char kNotify[] = "notify";
inline constexpr char kCancel[] = "cancel";  // withdraws a pending dialog: {targetId}
inline constexpr char kSetStatus[] = "setStatus";
inline constexpr char kSetWidget[] = "setWidget";
inline constexpr char kSetTitle[] = "setTitle";
inline constexpr char kSetEditorText[] = "set_editor_text";
}  // namespace ui

// assistantMessageEvent types.
namespace delta {
inline constexpr char kTextStart[] = "text_start";
inline constexpr char kTextDelta[] = "text_delta";
inline constexpr char kTextEnd[] = "text_end";
inline constexpr char kThinkingStart[] = "thinking_start";
inline constexpr char kThinkingDelta[] = "thinking_delta";
inline constexpr char kThinkingEnd[] = "thinking_end";
inline constexpr char kToolCallStart[] = "toolcall_start";
inline constexpr char kToolCallDelta[] = "toolcall_delta";
inline constexpr char kToolCallEnd[] = "toolcall_end";
}  // namespace delta

}  // namespace lousho::rpc_compat

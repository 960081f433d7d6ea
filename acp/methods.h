// ACP method and update names: every wire string of the protocol surface, defined once.
#pragma once

namespace lousho::acp::method {

// Client -> agent.
inline constexpr char kInitialize[] = "initialize";
inline constexpr char kAuthenticate[] = "authenticate";
inline constexpr char kSessionNew[] = "session/new";
inline constexpr char kSessionLoad[] = "session/load";
inline constexpr char kSessionList[] = "session/list";
inline constexpr char kSessionResume[] = "session/resume";
inline constexpr char kSessionPrompt[] = "session/prompt";
inline constexpr char kSessionCancel[] = "session/cancel";
inline constexpr char kSessionSetMode[] = "session/set_mode";
inline constexpr char kSessionSetConfigOption[] = "session/set_config_option";
inline constexpr char kSessionSetModel[] = "session/set_model";  // removed from unstable; kept
inline constexpr char kSessionClose[] = "session/close";
inline constexpr char kSessionDelete[] = "session/delete";
inline constexpr char kSessionFork[] = "session/fork";  // unstable
inline constexpr char kLogout[] = "logout";
inline constexpr char kCancelRequest[] = "$/cancel_request";  // both directions
// lousho's extension: back to before a user message, with the files (acp/rewind.cpp); the key
// in agentCapabilities._meta that says it is served.
inline constexpr char kLoushoRewind[] = "_lousho/rewind";
inline constexpr char kRewindCapability[] = "lousho/rewind";

// Agent -> client.
inline constexpr char kSessionUpdate[] = "session/update";
inline constexpr char kRequestPermission[] = "session/request_permission";
inline constexpr char kFsRead[] = "fs/read_text_file";
inline constexpr char kFsWrite[] = "fs/write_text_file";
inline constexpr char kTerminalCreate[] = "terminal/create";
inline constexpr char kTerminalOutput[] = "terminal/output";
inline constexpr char kTerminalWait[] = "terminal/wait_for_exit";
inline constexpr char kTerminalKill[] = "terminal/kill";
inline constexpr char kTerminalRelease[] = "terminal/release";
inline constexpr char kElicitationCreate[] = "elicitation/create";
inline constexpr char kElicitationComplete[] = "elicitation/complete";  // a notification

}  // namespace lousho::acp::method

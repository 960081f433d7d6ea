// `lousho chat`'s loop: opens the session the flags name (host::OpenChosenSession, as `lousho
// run` and the RPC door do), reads inputs, runs each as a prompt of the engine (Ctrl-C cancels it
// through the engine), answers the chat's own commands (/help, /thinking, /resume, /exit) and
// passes every other slash command to the session, which runs built-in, spec, file and MCP
// commands as for an editor.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "agent/permissions.h"
#include "host/session_choice.h"
#include "host/session_host.h"

namespace lousho::cli::chat {

struct ChatRequest {
  std::filesystem::path cwd;  // absolute
  host::SessionChoice choice;
  std::optional<agent::PermissionMode> mode;  // --mode; none: the session's
  int interrupt_fd = -1;                      // readable at each Ctrl-C (SIGINT)
};

// Runs the chat on the terminal (stdin, stdout) until the user leaves; returns the exit code.
int RunChat(host::SessionHost& host, const ChatRequest& request);

}  // namespace lousho::cli::chat

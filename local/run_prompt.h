// `lousho run`'s engine side: opens the session the flags name (host::OpenChosenSession, as the
// RPC door does), runs one prompt to its end with a PermissionGate in place of a user, reports
// progress (ProgressPrinter) or JSON lines (JsonEventWriter), prints the answer and returns the
// exit code. A stop signal cancels the turn through the engine (a second one ends lousho).
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "agent/permissions.h"
#include "host/session_choice.h"
#include "host/session_host.h"
#include "local/permission_gate.h"

namespace lousho::local {

// The exit codes (docs/run.md).
inline constexpr int kExitAnswered = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRefused = 3;  // a permission request was refused
inline constexpr int kExitLimit = 4;    // max_turn_requests or max_tokens
inline constexpr int kExitCancelled = 130;

struct RunRequest {
  std::string prompt;
  std::filesystem::path cwd;  // absolute
  host::SessionChoice choice;
  std::optional<agent::PermissionMode> mode;  // --mode; none: the session's
  GateOptions gate;
  bool json = false;     // --json: JSON lines on stdout
  bool spinner = false;  // stderr is a terminal
  int stop_fd = -1;      // readable when a stop signal arrived (cli::InstallStopSignals); -1: none
};

// Runs `request` on `host` (loaded); the answer (or the JSON lines) on `out`, progress and errors
// on `err`. Returns the exit code.
int RunPrompt(host::SessionHost& host, const RunRequest& request, FILE* out, FILE* err);

}  // namespace lousho::local

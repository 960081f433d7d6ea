// What `lousho run` and `lousho chat` both take: the session's model, permission mode and sandbox,
// and which session to continue or where to save it; registered and read the same way for both.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "agent/permissions.h"
#include "host/session_host.h"
#include "support/status.h"

namespace lousho::cli {

struct SessionFlags {
  std::string model;
  std::string mode;
  std::string sandbox;
  std::string session;
  bool continue_session = false;
  bool no_session = false;
  std::string session_dir;
};
void AddSessionFlags(CLI::App* app, SessionFlags& flags);

// `--mode`: none when not given; a usage error naming the modes when unknown.
Result<std::optional<agent::PermissionMode>> ModeFlag(const SessionFlags& flags);

// The host of the agent `spec` names (the same lookup as `lousho acp` when empty) with the flags'
// model, session folder, no-session and sandbox.
host::HostOptions HostOptionsFor(const SessionFlags& flags, const std::string& spec,
                                 const std::filesystem::path& cwd);

}  // namespace lousho::cli

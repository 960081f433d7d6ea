// Which session a door's start-up flags open (`--session FILE|ID`, `--continue`, `--no-session`):
// one copy for `--mode rpc` and `lousho run`.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "agent/session.h"
#include "host/session_host.h"
#include "support/status.h"

namespace lousho::host {

struct SessionChoice {
  std::string session;           // --session: a session file (relative to cwd) or a saved id
  bool continue_newest = false;  // --continue: the newest saved session of cwd
};

// kUsage when the flags contradict each other (--no-session with --session or --continue).
Status CheckSessionChoice(const SessionChoice& choice, bool no_session);

// Opens the session `choice` names, in `cwd` (absolute): --session's file (created when it does
// not exist, unless the text is the id of a saved session, which is then opened); else with
// --continue the newest saved session of cwd; else (or when cwd has none) a new session.
Result<std::shared_ptr<agent::Session>> OpenChosenSession(const SessionHost& host,
                                                          agent::SessionOptions options,
                                                          const std::filesystem::path& cwd,
                                                          const SessionChoice& choice);

}  // namespace lousho::host

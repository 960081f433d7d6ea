// The sandbox on macOS: the same policy (support/sandbox.h) as a Seatbelt profile, which
// `/usr/bin/sandbox-exec -p PROFILE -- COMMAND` applies to the command and everything it starts.
// The profile is text, made and tested on every system; only macOS runs it.
#pragma once

#include <string>
#include <vector>

#include "support/sandbox.h"

namespace lousho {

// The profile for `policy` (active): everything allowed, then writes outside `writable` (and the
// devices every shell writes to) denied, reads and writes beneath `deny_read` denied, signals to
// processes outside the sandbox denied, and with the network off every connection but Unix
// sockets (with `loopback`, also 127.0.0.1 and ::1: on macOS that is the host's loopback).
std::string SeatbeltProfile(const SandboxPolicy& policy);

// `argv` run under the profile: {sandbox-exec, -p, profile, --, argv...}.
std::vector<std::string> SeatbeltArgv(const SandboxPolicy& policy,
                                      const std::vector<std::string>& argv);

// Where macOS keeps the launcher.
inline constexpr const char* kSeatbeltLauncher = "/usr/bin/sandbox-exec";

}  // namespace lousho

// Child processes in their own process group: merged output capture with a cap, timeout and
// cancellation that kill the whole group.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace lousho {

struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0] is the program (absolute, or found in PATH)
  std::string cwd;                // empty: inherit
  // Added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Only the last `max_output_bytes` of the merged stdout+stderr are kept; 0: keep all.
  size_t max_output_bytes = 0;
  long timeout_ms = 0;        // 0: none. On expiry the group gets SIGTERM, then SIGKILL.
  long kill_grace_ms = 2000;  // between SIGTERM and SIGKILL after a timeout
  // Cancellation kills the group with SIGKILL at once.
  CancelToken cancel;
  // After the direct child exits, how long to keep reading output that background processes
  // still write; they may hold the pipe open for ever (`server &`), so we stop waiting.
  long drain_after_exit_ms = 250;
};

struct SubprocessResult {
  std::string output;            // merged stdout+stderr; the tail when truncated
  bool truncated = false;        // bytes were dropped from the start
  size_t total_bytes = 0;        // everything the process wrote
  std::optional<int> exit_code;  // set when it exited normally
  std::optional<int> signal;     // set when a signal ended it
  bool timed_out = false;
  bool cancelled = false;
  int pid = 0;  // also the process group id
};

// Runs argv to completion (or timeout/cancel). Errors only when the process cannot be started
// (fork/pipe failure, program not found, cwd missing). Thread-safe; blocks the caller.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

}  // namespace lousho

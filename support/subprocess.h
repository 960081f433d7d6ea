// Child processes under a per-command reaper: merged output capture with a cap, timeout and
// cancellation, and nothing the command started outlives it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace lousho {

// How a command is contained. RunSubprocess forks a small keeper process (no exec; the same
// binary) that makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER) and then starts
// the command in a new process group. Every process the command starts stays below the keeper
// whatever it does: leaving the group (setsid), double forking and `&` background jobs all end
// up as the keeper's children once their parents exit. When the run ends the keeper signals the
// whole tree (found through /proc) until it has no children left, reaps them all, and exits.
// So waitpid(-1) only ever runs in the keeper, never stealing a status from this process's own
// children, and lousho itself needs no SIGCHLD handling. If lousho dies (even by SIGKILL) the
// keeper sees its control pipe close and ends the tree the same way.
struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0] is the program (absolute, or found in PATH)
  std::string cwd;                // empty: inherit
  // Added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Only the last `max_output_bytes` of the merged stdout+stderr are kept; 0: keep all.
  size_t max_output_bytes = 0;
  long timeout_ms = 0;        // 0: none. On expiry the tree gets SIGTERM, then SIGKILL.
  long kill_grace_ms = 2000;  // between SIGTERM and SIGKILL whenever the tree is ended
  // Cancellation kills the tree with SIGKILL at once.
  CancelToken cancel;
  // After the direct child exits, how long to keep reading output that background processes
  // still write; they may hold the pipe open for ever (`server &`). Then the background
  // processes are ended (SIGTERM, SIGKILL after kill_grace_ms): a run leaves nothing behind.
  long drain_after_exit_ms = 250;
  // Called on the calling thread with each piece of merged output as it arrives (before the
  // cap applies). May be empty.
  std::function<void(std::string_view chunk)> on_output;
};

struct SubprocessResult {
  std::string output;            // merged stdout+stderr; the tail when truncated
  bool truncated = false;        // bytes were dropped from the start
  size_t total_bytes = 0;        // everything the process wrote
  std::optional<int> exit_code;  // set when it exited normally
  std::optional<int> signal;     // set when a signal ended it
  bool timed_out = false;
  bool cancelled = false;
  int pid = 0;  // the command's pid, also its process group id (the keeper is not reported)
};

// Runs argv to completion (or timeout/cancel). On return every process the command started has
// been ended and reaped (unless the keeper itself stopped answering for kill_grace_ms + 5 s,
// which is logged). Errors only when the process cannot be started (fork/pipe failure, program
// not found, cwd missing). Thread-safe; blocks the caller.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

// A long-lived command that talks over its stdin and stdout (an MCP server), under the same
// keeper as RunSubprocess: its own process group, and nothing it starts outlives Stop() (or
// lousho itself, even killed). Its stderr is kept as a tail for error reports.
struct ProcessOptions {
  std::vector<std::string> argv;  // argv[0] is the program (absolute, or found in PATH)
  std::string cwd;                // empty: inherit
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  long kill_grace_ms = 2000;                             // between SIGTERM and SIGKILL
  size_t stderr_tail_bytes = 16384;
};

// Owns the child's pipes and a thread that collects its stderr. Thread-safe: Stop() may be
// called from any thread, any number of times; the destructor calls it.
class ChildProcess {
 public:
  // Fails when the program cannot be started (not found, not executable, cwd missing).
  static Result<std::unique_ptr<ChildProcess>> Start(const ProcessOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes all of `data` to the command's stdin (blocking while its pipe is full); false once
  // the command is gone or stdin was closed. Never raises SIGPIPE.
  bool WriteStdin(const std::string& data);
  int stdout_fd() const { return stdout_r_; }  // read end, blocking; EOF once the tree is gone
  int pid() const { return pid_; }             // also its process group id
  // The last bytes the command wrote to stderr.
  std::string StderrTail() const;
  // Closes stdin (at once when no write is blocked on it), sends the tree SIGTERM, then SIGKILL
  // after the grace, and reaps the keeper.
  // Returns when every process of the tree is gone (or the keeper stopped answering, logged).
  void Stop();

 private:
  ChildProcess() = default;
  void CollectStderr();

  int pid_ = 0;
  int keeper_ = -1;
  std::mutex stdin_mu_;  // serializes writes and the close of stdin
  int stdin_w_ = -1;     // guarded by stdin_mu_
  int stdout_r_ = -1;
  int stderr_r_ = -1;
  int stat_r_ = -1;
  int ctl_w_ = -1;
  int ctl_r_ = -1;
  int wake_r_ = -1;
  int wake_w_ = -1;
  long grace_ms_ = 2000;
  size_t tail_cap_ = 16384;
  mutable std::mutex mu_;
  std::string tail_;      // guarded by mu_
  bool stopped_ = false;  // guarded by stop_mu_
  std::mutex stop_mu_;
  std::thread stderr_thread_;
};

}  // namespace lousho

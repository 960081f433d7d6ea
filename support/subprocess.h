// Child processes under a per-command reaper: merged output capture with a cap, timeout and
// cancellation, and nothing the command started outlives it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
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
#include "support/sandbox.h"
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
  // What the command reads on its stdin (from an unlinked temporary file, so a command that
  // never reads it cannot block the run); empty: /dev/null.
  std::string input;
  // Keep stderr apart (SubprocessResult::error_output, capped like the output) instead of
  // merging it into the output; on_output then sees stdout only.
  bool separate_stderr = false;
  // Called on the calling thread about every `tick_ms` while the run lasts (0: never), so a
  // caller that holds output back (a throttled live view) can hand it on without a thread.
  long tick_ms = 0;
  std::function<void()> on_tick;
  // The kernel sandbox of the command and everything it starts (support/sandbox.h), applied in
  // the forked child before exec; null or off: not confined. When it cannot be applied the
  // command does not run (the error says why).
  std::shared_ptr<const SandboxPolicy> sandbox;
};

struct SubprocessResult {
  std::string output;            // merged stdout+stderr; the tail when truncated
  std::string error_output;      // stderr, with separate_stderr (its tail when truncated)
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
  // Bytes that may wait for the command to read its stdin; WriteStdin refuses more.
  size_t stdin_queue_bytes = size_t{16} << 20;
  std::shared_ptr<const SandboxPolicy> sandbox;  // as SubprocessOptions::sandbox
};

// Owns the child's pipes, a thread that collects its stderr and one that writes its stdin.
// Thread-safe: Stop() may be called from any thread, any number of times; the destructor calls
// it.
class ChildProcess {
 public:
  // Fails when the program cannot be started (not found, not executable, cwd missing).
  static Result<std::unique_ptr<ChildProcess>> Start(const ProcessOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Queues `data` for the command's stdin and returns at once: the stdin thread writes it, in
  // the order of the calls, so no caller (a thread reading the command's stdout above all) ever
  // waits on a command that does not read. False, with nothing queued, once stdin is closed or
  // the command is gone, and when more than stdin_queue_bytes already wait (the command has
  // stopped reading: stdin_full() then says so). Never raises SIGPIPE.
  bool WriteStdin(std::string data);
  // True once a WriteStdin was refused because the queue was full.
  bool stdin_full() const;
  // Asks the keeper to end the tree (SIGTERM, SIGKILL after the grace) and returns at once;
  // the command's stdout then ends. Stop() still reaps it.
  void Terminate();
  int stdout_fd() const { return stdout_r_; }  // read end, blocking; EOF once the tree is gone
  int pid() const { return pid_; }             // also its process group id
  // The last bytes the command wrote to stderr.
  std::string StderrTail() const;
  // Drops what still waits for stdin, closes it, sends the tree SIGTERM, then SIGKILL after the
  // grace, and reaps the keeper.
  // Returns when every process of the tree is gone (or the keeper stopped answering, logged).
  void Stop();

 private:
  ChildProcess() = default;
  void CollectStderr();
  void WriteStdinLoop();
  // Writes all of `data` unless stdin breaks or Stop wakes the stdin thread; false then.
  bool WriteToStdin(const std::string& data);

  int pid_ = 0;
  int keeper_ = -1;
  int stdin_w_ = -1;  // non-blocking; written by the stdin thread only, closed by Stop
  int stdin_wake_r_ = -1;
  int stdin_wake_w_ = -1;  // Stop writes here: the stdin thread leaves a blocked write
  mutable std::mutex stdin_mu_;
  std::condition_variable stdin_cv_;
  std::deque<std::string> stdin_queue_;  // guarded by stdin_mu_
  size_t stdin_queued_ = 0;              // bytes in stdin_queue_ and in the write under way
  size_t stdin_cap_ = 0;
  bool stdin_closed_ = false;  // Stop, or a broken pipe: nothing more is written
  bool stdin_full_ = false;
  std::thread stdin_thread_;
  std::mutex ctl_mu_;  // the write of 'T' by Terminate and the close of ctl_w_ by Stop
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

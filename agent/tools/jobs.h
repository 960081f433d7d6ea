// A session's background jobs: commands the `bash` tool started with `background: true` (or a
// trailing `&`), each under the process keeper (support/subprocess ChildProcess), read with
// `bash_output` and stopped with `bash_kill`. Nothing a job starts outlives the session: the
// table ends every job when the session closes or is destroyed, and the keeper ends the tree
// when lousho itself dies, even by SIGKILL.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/sandbox.h"
#include "support/status.h"

namespace lousho::agent::tools {

struct JobLimits {
  size_t max_running = 8;  // jobs running at once; more are refused
  size_t max_kept = 32;    // jobs in the table; the oldest ended ones go first
  // Unread output kept per job: its tail; what comes before is counted as dropped.
  size_t max_unread_bytes = size_t{1} << 20;
  long kill_grace_ms = 2000;  // SIGTERM, then SIGKILL
};

// What a job is and how it stands.
struct JobInfo {
  std::string id;  // "job1", ...
  std::string command;
  int pid = 0;  // the shell's pid, also its process group id
  bool running = true;
  bool killed = false;           // bash_kill or the session's end stopped it
  std::optional<int> exit_code;  // the command's status once it exited
  uint64_t unread_bytes = 0;     // output not read yet (kept or dropped)
  uint64_t total_bytes = 0;      // everything it wrote
};

// One bash_output read: the output new since the last read.
struct JobRead {
  JobInfo info;          // as it stood after the read
  std::string output;    // the new output kept
  uint64_t dropped = 0;  // new bytes that were not kept (more than max_unread_bytes came)
};

// Thread-safe.
class JobTable {
 public:
  explicit JobTable(JobLimits limits = {});
  ~JobTable();  // EndAll()
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  // Starts `command` with /bin/bash in `cwd`, stdin from /dev/null and stderr merged into
  // stdout. Errors: too many jobs running, the shell could not be started, the table is closed.
  // `sandbox`: the kernel sandbox the job runs in, as a foreground command would (null: none).
  Result<JobInfo> Start(const std::string& command, const std::filesystem::path& cwd,
                        std::shared_ptr<const SandboxPolicy> sandbox = nullptr);
  // The output new since the last read (LOUSHO_TOOL_ARGS for an unknown id).
  Result<JobRead> Read(const std::string& id);
  // Ends the job's process tree (SIGTERM, SIGKILL after the grace) and waits until it is gone.
  Result<JobInfo> Kill(const std::string& id);
  std::vector<JobInfo> List() const;
  // The jobs as the model is reminded of them (running ones, and ended ones with unread
  // output); empty when there are none.
  std::string Note() const;
  // Ends every job and refuses new ones (the session closes). Returns when all are gone.
  void EndAll();

 private:
  struct Job;
  std::shared_ptr<Job> Find(const std::string& id) const;
  void Forget();  // drops the oldest ended jobs past max_kept; mu_ held

  JobLimits limits_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Job>> jobs_;  // guarded by mu_, in start order
  uint64_t next_ = 1;                       // guarded by mu_
  bool closed_ = false;                     // guarded by mu_
};

}  // namespace lousho::agent::tools

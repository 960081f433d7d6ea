// A session's background jobs (jobs.h).
#include "agent/tools/jobs.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <utility>

#include "support/files.h"
#include "support/log.h"
#include "support/subprocess.h"

namespace lousho::agent::tools {

namespace fs = std::filesystem;

struct JobTable::Job {
  std::string id;
  std::string command;
  std::unique_ptr<ChildProcess> process;
  std::string status_file;  // the shell writes the command's status here when it exits
  std::thread reader;
  size_t max_unread = 0;

  std::mutex mu;
  std::string unread;       // guarded by mu: the tail of the output not read yet
  uint64_t dropped = 0;     // guarded by mu: unread bytes not kept
  uint64_t total = 0;       // guarded by mu
  bool running = true;      // guarded by mu: until its output ends (the whole tree is gone)
  bool killed = false;      // guarded by mu
  std::optional<int> exit;  // guarded by mu

  // Reads the job's output until every process that holds it is gone.
  void Read() {
    char buf[16384];
    for (;;) {
      const ssize_t n = read(process->stdout_fd(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mu);
      unread.append(buf, static_cast<size_t>(n));
      total += static_cast<uint64_t>(n);
      if (unread.size() > 2 * max_unread) {
        const size_t cut = unread.size() - max_unread;
        unread.erase(0, cut);
        dropped += cut;
      }
    }
    process->Stop();  // reaps the keeper
    std::optional<int> status = ReadStatus();
    std::lock_guard<std::mutex> lock(mu);
    exit = status;
    running = false;
  }

  std::optional<int> ReadStatus() const {
    std::ifstream in(status_file);
    int code = 0;
    std::optional<int> status;
    if (in >> code) status = code;
    std::error_code ec;
    fs::remove(status_file, ec);
    return status;
  }

  // The state, with the unread bytes as they stand; mu held.
  JobInfo InfoLocked() const {
    JobInfo info;
    info.id = id;
    info.command = command;
    info.pid = process->pid();
    info.running = running;
    info.killed = killed;
    info.exit_code = exit;
    info.unread_bytes = unread.size() + dropped;
    info.total_bytes = total;
    return info;
  }

  // Ends the tree (SIGTERM, SIGKILL after the grace) and waits for the reader.
  void End() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (running) killed = true;
    }
    process->Stop();
    if (reader.joinable()) reader.join();
  }
};

namespace {

// A fresh file for the shell to write the command's status to.
Result<std::string> StatusFile() {
  std::string path = (fs::temp_directory_path() / "lousho-job-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return MakeError(ErrorCode::kSubprocess, "cannot create a job status file");
  close(fd);
  return path;
}

std::string StateText(const JobInfo& j) {
  if (j.running) return "running (pid " + std::to_string(j.pid) + ")";
  if (j.killed) return "stopped";
  if (j.exit_code) return "exited with code " + std::to_string(*j.exit_code);
  return "ended";
}

}  // namespace

JobTable::JobTable(JobLimits limits) : limits_(limits) {}

JobTable::~JobTable() { EndAll(); }

Result<JobInfo> JobTable::Start(const std::string& command, const fs::path& cwd,
                                std::shared_ptr<const SandboxPolicy> sandbox) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return MakeError(ErrorCode::kSessionClosed, "the session is closing");
  const size_t running = static_cast<size_t>(
      std::count_if(jobs_.begin(), jobs_.end(), [](const std::shared_ptr<Job>& j) {
        std::lock_guard<std::mutex> jl(j->mu);
        return j->running;
      }));
  if (running >= limits_.max_running)
    return MakeError(ErrorCode::kResourceExhausted,
                     std::to_string(running) +
                         " background jobs are running already; stop one with bash_kill first");
  auto status = StatusFile();
  if (!status.ok()) return status.error();
  auto job = std::make_shared<Job>();
  job->id = "job" + std::to_string(next_);
  job->command = command;
  job->status_file = *status;
  job->max_unread = limits_.max_unread_bytes;
  ProcessOptions po;
  // The command runs in a subshell so that its status is known whatever it does (exit, exec);
  // nothing reads stdin, and stderr joins stdout.
  po.argv = {"/bin/bash", "-c",
             "exec </dev/null 2>&1\n(\n" + command +
                 "\n)\nprintf '%s\\n' \"$?\" >\"$LOUSHO_JOB_STATUS\"\n"};
  po.cwd = cwd.string();
  po.env = {{"LOUSHO_JOB_STATUS", *status}};
  po.kill_grace_ms = limits_.kill_grace_ms;
  po.sandbox = std::move(sandbox);  // [sandbox] confined like a foreground command
  auto proc = ChildProcess::Start(po);
  if (!proc.ok()) {
    std::error_code ec;
    fs::remove(*status, ec);
    return proc.error();
  }
  job->process = std::move(*proc);
  try {
    job->reader = std::thread([raw = job.get()] { raw->Read(); });
  } catch (const std::system_error& e) {
    job->process->Stop();
    return MakeError(ErrorCode::kResourceExhausted, std::string("thread: ") + e.what());
  }
  ++next_;
  jobs_.push_back(job);
  Forget();
  std::lock_guard<std::mutex> jl(job->mu);
  return job->InfoLocked();
}

std::shared_ptr<JobTable::Job> JobTable::Find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& j : jobs_)
    if (j->id == id) return j;
  return nullptr;
}

Result<JobRead> JobTable::Read(const std::string& id) {
  std::shared_ptr<Job> job = Find(id);
  if (!job) return MakeError(ErrorCode::kToolArgs, "no background job " + id);
  std::lock_guard<std::mutex> lock(job->mu);
  JobRead r;
  r.output = std::move(job->unread);
  job->unread.clear();
  r.dropped = job->dropped;
  job->dropped = 0;
  r.info = job->InfoLocked();
  return r;
}

Result<JobInfo> JobTable::Kill(const std::string& id) {
  std::shared_ptr<Job> job = Find(id);
  if (!job) return MakeError(ErrorCode::kToolArgs, "no background job " + id);
  job->End();
  std::lock_guard<std::mutex> lock(job->mu);
  return job->InfoLocked();
}

std::vector<JobInfo> JobTable::List() const {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs = jobs_;
  }
  std::vector<JobInfo> out;
  out.reserve(jobs.size());
  for (const auto& j : jobs) {
    std::lock_guard<std::mutex> lock(j->mu);
    out.push_back(j->InfoLocked());
  }
  return out;
}

std::string JobTable::Note() const {
  std::string lines;
  for (const JobInfo& j : List()) {
    if (!j.running && j.unread_bytes == 0) continue;
    lines += "- " + j.id + ": `" + j.command.substr(0, 200) + "` " + StateText(j) +
             (j.unread_bytes > 0 ? ", new output waiting" : "") + "\n";
  }
  if (lines.empty()) return "";
  return "Background jobs of this session (bash_output reads a job's new output, bash_kill "
         "stops it):\n" +
         lines;
}

void JobTable::EndAll() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    jobs = jobs_;
  }
  // Every tree is asked to end first, so the graces run side by side.
  for (const auto& j : jobs) j->process->Terminate();
  for (const auto& j : jobs) j->End();
}

void JobTable::Forget() {
  while (jobs_.size() > limits_.max_kept) {
    auto ended = std::find_if(jobs_.begin(), jobs_.end(), [](const std::shared_ptr<Job>& j) {
      std::lock_guard<std::mutex> jl(j->mu);
      return !j->running;
    });
    if (ended == jobs_.end()) return;
    (*ended)->End();  // joins its reader
    jobs_.erase(ended);
  }
}

}  // namespace lousho::agent::tools

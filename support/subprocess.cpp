// Subprocesses: fork/exec into a new process group, poll the merged output pipe, reap.
#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>

extern char** environ;

namespace lousho {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

bool MakePipe(Fd* r, Fd* w) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  r->Reset(fds[0]);
  w->Reset(fds[1]);
  return true;
}

long MsUntil(Clock::time_point t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return d < 0 ? 0 : static_cast<long>(d);
}

// Keeps the tail of a stream within `cap` bytes without quadratic copying.
class TailBuffer {
 public:
  explicit TailBuffer(size_t cap) : cap_(cap) {}
  void Append(const char* d, size_t n) {
    total_ += n;
    buf_.append(d, n);
    if (cap_ > 0 && buf_.size() > 2 * cap_) Trim();
  }
  std::string Take(bool* truncated) {
    if (cap_ > 0 && buf_.size() > cap_) Trim();
    *truncated = total_ > buf_.size();
    return std::move(buf_);
  }
  size_t total() const { return total_; }

 private:
  void Trim() { buf_.erase(0, buf_.size() - cap_); }
  size_t cap_;
  size_t total_ = 0;
  std::string buf_;
};

}  // namespace

Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return MakeError("LOUSHO_SUBPROCESS", "empty command");

  // Everything the child needs is prepared before fork: after fork in a threaded process only
  // async-signal-safe calls are allowed.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  {
    std::map<std::string, std::string> overrides(options.env.begin(), options.env.end());
    for (char** e = environ; e && *e; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq != std::string::npos && overrides.count(kv.substr(0, eq))) continue;
      env_strings.push_back(std::move(kv));
    }
    for (const auto& [k, v] : overrides) env_strings.push_back(k + "=" + v);
  }
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  // PATH search in the child without execvpe's allocations: try each candidate ourselves.
  std::vector<std::string> candidates;
  const std::string& prog = options.argv[0];
  if (prog.find('/') != std::string::npos) {
    candidates.push_back(prog);
  } else {
    std::string path = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& s : env_strings)
      if (s.rfind("PATH=", 0) == 0) path = s.substr(5);
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(start, end - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + prog);
      start = end + 1;
    }
  }

  Fd out_r, out_w, err_r, err_w;
  // Shared with the cancel callback, which may still be running on another thread when this
  // function returns.
  // (Both ends, so its write can never hit a pipe without a reader and raise SIGPIPE.)
  auto wake_r = std::make_shared<Fd>();
  auto wake_w = std::make_shared<Fd>();
  if (!MakePipe(&out_r, &out_w) || !MakePipe(&err_r, &err_w) ||
      !MakePipe(wake_r.get(), wake_w.get()))
    return MakeError("LOUSHO_SUBPROCESS", std::string("pipe: ") + std::strerror(errno));
  fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
  fcntl(wake_r->get(), F_SETFL, O_NONBLOCK);
  fcntl(wake_w->get(), F_SETFL, O_NONBLOCK);

  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  pid_t pid = fork();
  if (pid < 0) return MakeError("LOUSHO_SUBPROCESS", std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) signal(s, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_w.get(), 1);
    dup2(out_w.get(), 2);
    int err = 0;
    if (cwd && chdir(cwd) != 0) {
      err = errno;
    } else {
      for (const auto& c : candidates) {
        execve(c.c_str(), argv.data(), envp.data());
        if (errno != ENOENT || err == 0) err = errno;
      }
    }
    ssize_t ignored = write(err_w.get(), &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  // Also in the parent, so a kill(-pid) right after fork cannot miss the group.
  setpgid(pid, pid);
  out_w.Reset();
  err_w.Reset();

  int exec_errno = 0;
  if (read(err_r.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    int st = 0;
    waitpid(pid, &st, 0);
    std::string what = cwd && exec_errno == ENOENT && access(cwd, F_OK) != 0
                           ? std::string("cannot enter ") + cwd
                           : "cannot run " + prog;
    return MakeError("LOUSHO_SUBPROCESS", what + ": " + std::strerror(exec_errno));
  }

  SubprocessResult result;
  result.pid = pid;
  TailBuffer tail(options.max_output_bytes);
  ScopedCancelCallback on_cancel(options.cancel, [wake_r, wake_w] {
    char b = 'c';
    ssize_t ignored = write(wake_w->get(), &b, 1);
    (void)ignored;
  });

  const bool has_deadline = options.timeout_ms > 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
  Clock::time_point kill_at{};
  bool term_sent = false, kill_sent = false, exited = false, eof = false;
  Clock::time_point drain_until{};
  int status = 0;
  char buf[65536];

  auto kill_group = [&](int sig) { kill(-pid, sig); };

  while (!(exited && eof)) {
    if (!exited) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        exited = true;
        drain_until = Clock::now() + std::chrono::milliseconds(options.drain_after_exit_ms);
      }
    }
    if (exited && !eof && Clock::now() >= drain_until) break;
    if (!result.cancelled && options.cancel.cancelled()) {
      result.cancelled = true;
      kill_group(SIGKILL);
      kill_sent = true;
    }
    if (has_deadline && !term_sent && !exited && Clock::now() >= deadline) {
      result.timed_out = true;
      term_sent = true;
      kill_group(SIGTERM);
      kill_at = Clock::now() + std::chrono::milliseconds(options.kill_grace_ms);
    }
    if (term_sent && !kill_sent && Clock::now() >= kill_at) {
      kill_sent = true;
      kill_group(SIGKILL);
    }

    // Wake at least every 50 ms to notice the child's exit (there is no fd for it here).
    long wait_ms = 50;
    if (has_deadline && !term_sent) wait_ms = std::min(wait_ms, MsUntil(deadline));
    if (term_sent && !kill_sent) wait_ms = std::min(wait_ms, MsUntil(kill_at));
    if (exited) wait_ms = std::min(wait_ms, MsUntil(drain_until));
    pollfd fds[2] = {{eof ? -1 : out_r.get(), POLLIN, 0}, {wake_r->get(), POLLIN, 0}};
    int n = poll(fds, 2, static_cast<int>(wait_ms));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (fds[1].revents) {
      while (read(wake_r->get(), buf, sizeof buf) > 0) {
      }
    }
    if (fds[0].revents) {
      for (;;) {
        ssize_t got = read(out_r.get(), buf, sizeof buf);
        if (got > 0) {
          tail.Append(buf, static_cast<size_t>(got));
          continue;
        }
        if (got == 0) eof = true;
        if (got < 0 && errno == EINTR) continue;
        break;
      }
    }
  }
  if (!exited) {
    // Output ended but the child lives on (it closed its stdout): wait, still honouring
    // cancel and timeout.
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid || r < 0) break;
      if (!result.cancelled && options.cancel.cancelled()) {
        result.cancelled = true;
        kill_group(SIGKILL);
      }
      if (has_deadline && !term_sent && Clock::now() >= deadline) {
        result.timed_out = term_sent = true;
        kill_group(SIGTERM);
        kill_at = Clock::now() + std::chrono::milliseconds(options.kill_grace_ms);
      }
      if (term_sent && !kill_sent && Clock::now() >= kill_at) {
        kill_sent = true;
        kill_group(SIGKILL);
      }
      options.cancel.WaitFor(20);
    }
  }
  // A timed-out or cancelled command leaves nothing behind in its group.
  if (result.timed_out || result.cancelled) kill_group(SIGKILL);

  result.total_bytes = tail.total();
  result.output = tail.Take(&result.truncated);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace lousho

// Subprocesses: a forked keeper (child subreaper) runs the command in a new process group and
// ends its whole process tree; the caller polls the merged output and the keeper's reports.
#include "support/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "support/log.h"
#include "support/posix.h"

extern char** environ;

namespace lousho {
namespace {

using Clock = std::chrono::steady_clock;

// How long past its own grace the caller waits for a keeper that was told to end the tree
// before giving up on it (only a keeper stopped from outside can take that long).
constexpr long kKeeperSlackMs = 5000;

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
  if (PipeCloexec(fds, false) != 0) return false;
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

// ---------------------------------------------------------------------------------------------
// The keeper. It runs in a child forked from a threaded process, so everything below uses only
// async-signal-safe system calls: no allocation, no stdio, no locks.

// Write end of the keeper's self-pipe. A global because a signal handler needs it; it is only
// ever set inside a keeper process, never in lousho.
int g_keeper_signal_fd = -1;

void KeeperOnSignal(int sig) {
  int saved = errno;
  char c = static_cast<char>(sig);
  ssize_t ignored = write(g_keeper_signal_fd, &c, 1);
  (void)ignored;
  errno = saved;
}

void SetDisposition(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

long NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void ReportErrnoAndExit(int fd, int err) {
  WriteAll(fd, &err, sizeof err);
  _exit(127);
}

// A decimal pid, or -1 when `s` is not one (a /proc entry such as "self").
pid_t ParsePid(const char* s) {
  if (*s == '\0') return -1;
  long v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || v > 100000000L) return -1;
    v = v * 10 + (*s - '0');
  }
  return static_cast<pid_t>(v);
}

// The parent pid from /proc/<name>/stat ("pid (comm) S ppid ..."), or -1 when gone.
pid_t ReadParentPid(const char* name) {
  char path[64] = "/proc/";
  size_t len = 6;
  for (const char* s = name; *s != '\0' && len < 40; ++s) path[len++] = *s;
  for (const char* s = "/stat"; *s != '\0'; ++s) path[len++] = *s;
  path[len] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  // The command name may hold anything, ')' included: the last ')' ends it.
  ssize_t close_paren = -1;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] == ')') close_paren = i;
  ssize_t i = close_paren + 4;  // past ") S "
  if (close_paren < 0 || i >= n) return -1;
  long v = 0;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + (buf[i] - '0');
  return static_cast<pid_t>(v);
}

// The processes below `root`, found by walking /proc until no new child of a known member
// shows up. Bounded: a tree larger than kMaxTree is signalled in parts over several sweeps
// (members that die hand their children to the keeper, which the next sweep finds).
constexpr int kMaxTree = 4096;
struct Tree {
  int n = 0;
  pid_t pids[kMaxTree];
  bool Has(pid_t p) const {
    for (int i = 0; i < n; ++i)
      if (pids[i] == p) return true;
    return false;
  }
};

void CollectTree(pid_t root, Tree* tree) {
  tree->n = 0;
  for (bool grew = true; grew && tree->n < kMaxTree;) {
    grew = false;
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    alignas(8) char buf[8192];
    for (;;) {
      ssize_t got = getdents64(dir, buf, sizeof buf);
      if (got <= 0) break;
      for (ssize_t off = 0; off < got;) {
        const auto* entry = reinterpret_cast<const dirent64*>(buf + off);
        off += entry->d_reclen;
        pid_t pid = ParsePid(entry->d_name);
        if (pid <= 0 || pid == root || tree->Has(pid)) continue;
        pid_t ppid = ReadParentPid(entry->d_name);
        if ((ppid == root || tree->Has(ppid)) && tree->n < kMaxTree) {
          tree->pids[tree->n++] = pid;
          grew = true;
        }
      }
    }
    close(dir);
  }
}

// Signals every process below the keeper. While the command itself is not yet reaped its
// pid cannot be reused, so its group is signalled too (catching children forked a moment ago).
void SignalTree(pid_t group, bool group_valid, int sig) {
  if (group_valid) kill(-group, sig);
  Tree tree;
  CollectTree(getpid(), &tree);
  for (int i = 0; i < tree.n; ++i) kill(tree.pids[i], sig);
  if (sig == SIGTERM) {
    // A stopped process would hold SIGTERM pending until the SIGKILL.
    if (group_valid) kill(-group, SIGCONT);
    for (int i = 0; i < tree.n; ++i) kill(tree.pids[i], SIGCONT);
  }
}

// close_range (Linux, FreeBSD); -1 elsewhere, and the caller closes one by one.
int CloseRange(unsigned lo, unsigned hi) {
#if defined(__linux__) || defined(__FreeBSD__)
  return close_range(lo, hi, 0);
#else
  (void)lo;
  (void)hi;
  return -1;
#endif
}

// Closes every descriptor from 3 up except those in keep (which must be >= 3): the keeper
// does not exec, so O_CLOEXEC does not protect it from pipes other threads opened.
void CloseOtherFds(int* keep, int n) {
  std::sort(keep, keep + n);
  unsigned lo = 3;
  for (int i = 0; i < n; ++i) {
    auto k = static_cast<unsigned>(keep[i]);
    if (k < lo) continue;
    if (k > lo && CloseRange(lo, k - 1) != 0)
      for (unsigned fd = lo; fd < k; ++fd) close(static_cast<int>(fd));
    lo = k + 1;
  }
  if (CloseRange(lo, ~0U) != 0)
    for (unsigned fd = lo; fd < 65536; ++fd) close(static_cast<int>(fd));
}

// What the keeper needs, all prepared before fork.
struct KeeperPlan {
  char* const* argv;
  char* const* envp;
  const std::vector<std::string>* candidates;  // only c_str() is used after fork
  const char* cwd;
  int out_w;      // the command's stdout (and stderr when err_out_w < 0)
  int in_r;       // the command's stdin; < 0: /dev/null
  int err_out_w;  // the command's stderr; < 0: out_w
  int err_w;      // exec failure: an errno, then EOF; success: EOF alone
  int stat_w;     // to the caller: the command's pid, then its wait status
  int ctl_r;      // from the caller: 'T' end the tree gracefully, 'K' kill it; EOF as 'T'
  long grace_ms;
  const SandboxPlan* sandbox;  // null: not confined
};

// Sent instead of a plain errno when the sandbox could not be applied.
constexpr int kSandboxErrnoFlag = 1 << 20;

[[noreturn]] void ExecCommand(const KeeperPlan& plan) {
  // Signals are still blocked (see RunKeeper): the keeper's handlers must not run here.
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) SetDisposition(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  RestoreChildFileLimit();
  if (plan.in_r >= 0) dup2(plan.in_r, 0);
  dup2(plan.out_w, 1);
  dup2(plan.err_out_w >= 0 ? plan.err_out_w : plan.out_w, 2);
  int err = 0;
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) {
    err = errno;
  } else if (int refused = plan.sandbox != nullptr ? plan.sandbox->Apply() : 0; refused != 0) {
    err = refused | kSandboxErrnoFlag;
  } else {
    for (const auto& c : *plan.candidates) {
      execve(c.c_str(), plan.argv, plan.envp);
      if (errno != ENOENT || err == 0) err = errno;
    }
  }
  ReportErrnoAndExit(plan.err_w, err);
}

// The keeper's descriptors: its pipes above 0-2, which become /dev/null, and nothing else open.
// Also its own process group, which keeps a terminal's Ctrl-C, meant for lousho, away from it.
void SettleKeeperDescriptors(KeeperPlan* plan) {
  // A pipe that got one of the numbers 0-2 (lousho started with a closed stdio descriptor)
  // moves up first.
  for (int* fd :
       {&plan->out_w, &plan->err_w, &plan->stat_w, &plan->ctl_r, &plan->in_r, &plan->err_out_w})
    if (*fd >= 0 && *fd < 3) *fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  setpgid(0, 0);
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    // Not lousho's stdio: the protocol pipes must close when lousho exits.
    for (int fd = 0; fd < 3; ++fd) dup2(devnull, fd);
    if (devnull > 2) close(devnull);
  }
  // Unused optional pipes are -1; a repeated descriptor keeps the list sorted and harmless.
  int keep[] = {plan->out_w,
                plan->err_w,
                plan->stat_w,
                plan->ctl_r,
                plan->in_r >= 0 ? plan->in_r : plan->out_w,
                plan->err_out_w >= 0 ? plan->err_out_w : plan->out_w,
                plan->sandbox != nullptr && plan->sandbox->ruleset_fd() >= 0
                    ? plan->sandbox->ruleset_fd()
                    : plan->out_w};
  CloseOtherFds(keep, 7);
}

// SIGCHLD and SIGTERM arrive on a self-pipe (its read end returned), the terminal's signals are
// ignored, and orphans of the tree are handed to the keeper (Linux: a child subreaper).
int InstallKeeperSignals(const KeeperPlan& plan) {
  int sig_pipe[2];
  if (PipeCloexec(sig_pipe, true) != 0) ReportErrnoAndExit(plan.err_w, errno);
  g_keeper_signal_fd = sig_pipe[1];
  SetDisposition(SIGCHLD, KeeperOnSignal);
  SetDisposition(SIGTERM, KeeperOnSignal);
  for (int s : {SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) SetDisposition(s, SIG_IGN);
#ifdef __linux__
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) ReportErrnoAndExit(plan.err_w, errno);
#endif
  // Elsewhere there is no subreaper: a process that leaves the command's group and outlives
  // its parent escapes the keeper (Linux-only containment, docs/architecture.md).
  return sig_pipe[0];
}

// Forks the command in its own group, reports its pid and closes the keeper's copies of the
// command's pipe ends.
pid_t ForkCommand(const KeeperPlan& plan) {
  pid_t pid = fork();
  if (pid < 0) ReportErrnoAndExit(plan.err_w, errno);
  if (pid == 0) ExecCommand(plan);
  // The caller forked us with every signal blocked; only now, with our own handlers in place
  // and the command forked, may they arrive.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Also here, so a group kill right after fork cannot miss the group.
  setpgid(pid, pid);
  WriteAll(plan.stat_w, &pid, sizeof pid);
  close(plan.out_w);
  close(plan.err_w);
  if (plan.in_r >= 0) close(plan.in_r);
  if (plan.err_out_w >= 0) close(plan.err_out_w);
  return pid;
}

// Where the keeper is in ending the command's tree.
struct KeeperState {
  enum class Phase { kRunning, kTerm, kKill };
  Phase phase = Phase::kRunning;
  bool reaped = false;   // the command itself has been waited for
  bool ctl_open = true;  // the caller's control pipe
  long kill_at = 0;      // in kTerm: when kKill follows
};

// Reaps every child that has ended, reporting the command's status. Returns false once no
// child is left (every descendant has been reaped).
bool ReapChildren(pid_t command, int stat_w, KeeperState* st) {
  for (;;) {
    int status = 0;
    pid_t r = waitpid(-1, &status, WNOHANG);
    if (r > 0) {
      if (r == command) {
        st->reaped = true;
        WriteAll(stat_w, &status, sizeof status);
      }
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    return r >= 0;  // < 0: ECHILD
  }
}

// How long the keeper may wait for news: forever while the command runs, until the SIGKILL in
// kTerm, and briefly in kKill, to sweep again for late reparented orphans.
int KeeperPollTimeout(const KeeperState& st) {
  if (st.phase == KeeperState::Phase::kTerm)
    return static_cast<int>(std::clamp(st.kill_at - NowMs(), 0L, 50L));
  if (st.phase == KeeperState::Phase::kKill) return 20;
  return -1;
}

// What the keeper was told: end the tree gracefully, or kill it now.
struct KeeperOrders {
  bool end = false;
  bool kill_now = false;
};

// A SIGTERM sent to the keeper itself ends the tree.
void ReadSignalPipe(int sig_r, KeeperOrders* orders) {
  char b[64];
  ssize_t n = 0;
  while ((n = read(sig_r, b, sizeof b)) > 0)
    for (ssize_t i = 0; i < n; ++i) orders->end = orders->end || b[i] == SIGTERM;
}

// 'T' and 'K' from the caller; EOF (the caller is gone, or done) ends the tree.
void ReadControlPipe(int ctl_r, KeeperState* st, KeeperOrders* orders) {
  char b[16];
  ssize_t n = read(ctl_r, b, sizeof b);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    st->ctl_open = false;
    orders->end = true;
  }
  for (ssize_t i = 0; i < n; ++i) {
    orders->end = orders->end || b[i] == 'T';
    orders->kill_now = orders->kill_now || b[i] == 'K';
  }
}

void FollowOrders(const KeeperOrders& orders, pid_t command, long grace_ms, KeeperState* st) {
  if (orders.kill_now) {
    st->phase = KeeperState::Phase::kKill;
  } else if (orders.end && st->phase == KeeperState::Phase::kRunning) {
    st->phase = KeeperState::Phase::kTerm;
    st->kill_at = NowMs() + grace_ms;
    SignalTree(command, !st->reaped, SIGTERM);
  }
}

[[noreturn]] void RunKeeper(KeeperPlan plan) {
  SettleKeeperDescriptors(&plan);
  const int sig_r = InstallKeeperSignals(plan);
  const pid_t pid = ForkCommand(plan);
  KeeperState st;
  while (ReapChildren(pid, plan.stat_w, &st)) {
    if (st.phase == KeeperState::Phase::kTerm && NowMs() >= st.kill_at)
      st.phase = KeeperState::Phase::kKill;
    if (st.phase == KeeperState::Phase::kKill) SignalTree(pid, !st.reaped, SIGKILL);
    pollfd fds[2] = {{st.ctl_open ? plan.ctl_r : -1, POLLIN, 0}, {sig_r, POLLIN, 0}};
    if (poll(fds, 2, KeeperPollTimeout(st)) < 0) continue;
    KeeperOrders orders;
    if (fds[1].revents != 0) ReadSignalPipe(sig_r, &orders);
    if (fds[0].revents != 0) ReadControlPipe(plan.ctl_r, &st, &orders);
    FollowOrders(orders, pid, plan.grace_ms, &st);
  }
  _exit(0);
}

// ---------------------------------------------------------------------------------------------

// Reads an int-sized message stream from the keeper: first the command's pid, then its status.
class KeeperReports {
 public:
  // Returns false on EOF (the keeper exited).
  bool Read(int fd) {
    char buf[64];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        pending_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      Parse();
      return n != 0;
    }
  }
  std::optional<int> pid;
  std::optional<int> status;

 private:
  void Parse() {
    while (pending_.size() >= sizeof(int)) {
      int v = 0;
      std::memcpy(&v, pending_.data(), sizeof v);
      pending_.erase(0, sizeof v);
      if (!pid) {
        pid = v;
      } else if (!status) {
        status = v;
      }
    }
  }
  std::string pending_;
};

void WaitForKeeper(pid_t keeper) {
  while (waitpid(keeper, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// Everything the keeper and the command need, prepared before fork: after fork in a threaded
// process only async-signal-safe calls are allowed.
struct ExecPrep {
  std::vector<std::string> argv_strings;  // what argv points into
  std::vector<char*> argv;
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  // PATH search in the child without execvpe's allocations: each candidate is tried in turn.
  std::vector<std::string> candidates;
  std::unique_ptr<SandboxPlan> sandbox;  // null: not confined
  std::optional<Error> sandbox_error;    // the sandbox was asked for and cannot be had
};

void PrepareSandbox(const std::shared_ptr<const SandboxPolicy>& policy, ExecPrep* prep) {
  if (!policy || !policy->active()) return;
  auto plan = SandboxPlan::Prepare(*policy);
  if (plan.ok()) {
    prep->sandbox = std::move(*plan);
  } else {
    prep->sandbox_error =
        MakeError(ErrorCode::kSubprocess, "cannot confine the command: " + plan.error().message);
  }
}

void PrepareExec(const std::vector<std::string>& args,
                 const std::vector<std::pair<std::string, std::string>>& env, ExecPrep* prep) {
  prep->argv_strings = args;
  for (auto& a : prep->argv_strings) prep->argv.push_back(a.data());
  prep->argv.push_back(nullptr);
  std::map<std::string, std::string> overrides(env.begin(), env.end());
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos && overrides.count(kv.substr(0, eq))) continue;
    prep->env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : overrides) prep->env_strings.push_back(k + "=" + v);
  prep->envp.reserve(prep->env_strings.size() + 1);
  for (auto& s : prep->env_strings) prep->envp.push_back(s.data());
  prep->envp.push_back(nullptr);
  const std::string& prog = args[0];
  if (prog.find('/') != std::string::npos) {
    prep->candidates.push_back(prog);
    return;
  }
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& s : prep->env_strings)
    if (s.rfind("PATH=", 0) == 0) path = s.substr(5);
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    prep->candidates.push_back((dir.empty() ? "." : dir) + "/" + prog);
    start = end + 1;
  }
}

// A started keeper: its pid, the pipes the caller keeps, and the command's pid.
struct Keeper {
  pid_t pid = -1;
  Fd stat_r;  // the command's pid, then its wait status; EOF when the keeper exits
  Fd ctl_w;   // 'T' ends the tree gracefully, 'K' kills it; closing it ends the tree too
  Fd ctl_r;   // kept open so writing to ctl_w can never raise SIGPIPE
  KeeperReports reports;
};

// Forks the keeper, which starts the command with the given pipe ends (each closed here once
// the keeper has them). Returns once the command has been exec'd, or the reason it was not.
Status StartKeeper(const std::vector<std::string>& args, const ExecPrep& prep, const char* cwd,
                   long grace_ms, int out_w, int in_r, int err_out_w, Keeper* k) {
  if (prep.sandbox_error) return Status(*prep.sandbox_error);
  Fd err_r, err_w, stat_w;
  if (!MakePipe(&err_r, &err_w) || !MakePipe(&k->stat_r, &stat_w) ||
      !MakePipe(&k->ctl_r, &k->ctl_w))
    return MakeError(ErrorCode::kSubprocess, std::string("pipe: ") + std::strerror(errno));
  for (int fd : {k->stat_r.get(), k->ctl_w.get()}) fcntl(fd, F_SETFL, O_NONBLOCK);
  KeeperPlan plan{prep.argv.data(),
                  prep.envp.data(),
                  &prep.candidates,
                  cwd,
                  out_w,
                  in_r,
                  err_out_w,
                  err_w.get(),
                  stat_w.get(),
                  k->ctl_r.get(),
                  std::max(0L, grace_ms),
                  prep.sandbox.get()};
  // No signal may reach the keeper before it has replaced lousho's handlers with its own.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t keeper = fork();
  if (keeper == 0) RunKeeper(plan);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (keeper < 0)
    return MakeError(ErrorCode::kSubprocess, std::string("fork: ") + std::strerror(fork_errno));
  k->pid = keeper;
  err_w.Reset();
  stat_w.Reset();

  int exec_errno = 0;
  ssize_t got = 0;
  while ((got = read(err_r.get(), &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  if (got != sizeof exec_errno) k->reports.Read(k->stat_r.get());  // the pid was sent before EOF
  if (got == sizeof exec_errno || !k->reports.pid) {
    k->ctl_w.Reset();  // the keeper ends whatever is left and exits
    WaitForKeeper(keeper);
    k->pid = -1;
    const std::string& prog = args[0];
    if (got != sizeof exec_errno) return MakeError(ErrorCode::kSubprocess, "cannot start " + prog);
    if ((exec_errno & kSandboxErrnoFlag) != 0)
      return MakeError(ErrorCode::kSubprocess, "cannot confine " + prog + " in the sandbox: " +
                                                   std::strerror(exec_errno & ~kSandboxErrnoFlag));
    std::string what = cwd && exec_errno == ENOENT && access(cwd, F_OK) != 0
                           ? std::string("cannot enter ") + cwd
                           : "cannot run " + prog;
    return MakeError(ErrorCode::kSubprocess, what + ": " + std::strerror(exec_errno));
  }
  return Status::Ok();
}

// Watches one command of RunSubprocess through its keeper: collects its output, has the tree
// ended on cancel, on timeout and once the command exited (after the drain time), and gives up
// on a keeper that does not end the tree in time.
class CommandWatch {
 public:
  CommandWatch(const SubprocessOptions& options, Keeper* keeper, int out_r, int err_r, int wake_r)
      : options_(options),
        keeper_(keeper),
        out_r_(out_r),
        err_r_(err_r),
        wake_r_(wake_r),
        tail_(options.max_output_bytes),
        err_tail_(options.max_output_bytes),
        err_eof_(err_r < 0),
        grace_(std::max(0L, options.kill_grace_ms)),
        has_deadline_(options.timeout_ms > 0),
        deadline_(Clock::now() + std::chrono::milliseconds(options.timeout_ms)),
        drain_(std::max(0L, options.drain_after_exit_ms)),
        tick_(std::chrono::milliseconds(options.on_tick ? std::max(0L, options.tick_ms) : 0)),
        next_tick_(Clock::now() + tick_) {}

  // Until the tree is gone and the output has ended. Returns false when the keeper did not end
  // the tree in time.
  bool Run(SubprocessResult* result) {
    while (!(tree_gone_ && out_eof_ && err_eof_)) {
      const bool exited = keeper_->reports.status.has_value();
      SendOrders(exited, result);
      if (end_sent_ && !tree_gone_ && Clock::now() >= give_up_at_) return false;
      // Once the tree is gone every writer is too; the bound only guards against a descriptor
      // that escaped to a process outside it.
      if (tree_gone_ && Clock::now() >= tree_gone_at_ + drain_) break;
      if (!PollOnce(exited)) break;
      Tick();
    }
    return true;
  }

  // The output kept (its tail) and its size.
  void TakeOutput(SubprocessResult* result) {
    result->total_bytes = tail_.total();
    result->output = tail_.Take(&result->truncated);
    bool err_truncated = false;
    result->error_output = err_tail_.Take(&err_truncated);
    result->truncated = result->truncated || err_truncated;
  }

 private:
  void SendOrders(bool exited, SubprocessResult* result) {
    if (!result->cancelled && options_.cancel.cancelled()) {
      result->cancelled = true;
      if (!kill_sent_ && !tree_gone_) TellKeeper('K');
      kill_sent_ = true;
    }
    if (has_deadline_ && !exited && !end_sent_ && Clock::now() >= deadline_) {
      result->timed_out = true;
      TellKeeper('T');
    }
    // The command is done; what it left running (background jobs) goes once their output has
    // ended or the drain time is up.
    if (exited && !end_sent_ && !tree_gone_ &&
        ((out_eof_ && err_eof_) || Clock::now() >= drain_until_))
      TellKeeper('T');
  }

  void Tick() {
    // A poll may wake up to a millisecond early (its timeout is whole milliseconds).
    if (tick_.count() <= 0 || Clock::now() + std::chrono::milliseconds(1) < next_tick_) return;
    next_tick_ = Clock::now() + tick_;
    options_.on_tick();
  }

  void TellKeeper(char c) {
    ssize_t ignored = write(keeper_->ctl_w.get(), &c, 1);
    (void)ignored;
    if (!end_sent_) give_up_at_ = Clock::now() + std::chrono::milliseconds(grace_ + kKeeperSlackMs);
    end_sent_ = true;
  }

  // Until the next thing this watch waits for: the deadline, the end of the drain time, giving
  // up on the keeper; -1: none.
  long WaitMs(bool exited) const {
    long wait_ms = -1;
    auto bound = [&](Clock::time_point t) {
      long ms = MsUntil(t);
      wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
    };
    if (has_deadline_ && !exited && !end_sent_) bound(deadline_);
    if (exited && !end_sent_ && !tree_gone_) bound(drain_until_);
    if (end_sent_ && !tree_gone_) bound(give_up_at_);
    if (tree_gone_) bound(tree_gone_at_ + drain_);
    if (tick_.count() > 0) bound(next_tick_);
    return wait_ms;
  }

  // Waits for output, a keeper report or a cancel; false when poll fails.
  bool PollOnce(bool exited) {
    pollfd fds[4] = {{out_eof_ ? -1 : out_r_, POLLIN, 0},
                     {tree_gone_ ? -1 : keeper_->stat_r.get(), POLLIN, 0},
                     {wake_r_, POLLIN, 0},
                     {err_eof_ ? -1 : err_r_, POLLIN, 0}};
    int n = poll(fds, 4, static_cast<int>(WaitMs(exited)));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) return true;
    if (fds[2].revents) {
      while (read(wake_r_, buf_, sizeof buf_) > 0) {
      }
    }
    if (fds[1].revents) ReadReports(exited);
    if (fds[0].revents) ReadOutput(out_r_, tail_, out_eof_, true);
    if (fds[3].revents) ReadOutput(err_r_, err_tail_, err_eof_, false);
    return true;
  }

  void ReadReports(bool exited) {
    if (!keeper_->reports.Read(keeper_->stat_r.get())) {
      tree_gone_ = true;
      tree_gone_at_ = Clock::now();
    }
    if (!exited && keeper_->reports.status) drain_until_ = Clock::now() + drain_;
  }

  void ReadOutput(int fd, TailBuffer& tail, bool& eof, bool tell) {
    for (;;) {
      ssize_t r = read(fd, buf_, sizeof buf_);
      if (r > 0) {
        tail.Append(buf_, static_cast<size_t>(r));
        if (tell && options_.on_output)
          options_.on_output(std::string_view(buf_, static_cast<size_t>(r)));
        continue;
      }
      if (r == 0) eof = true;
      if (r < 0 && errno == EINTR) continue;
      return;
    }
  }

  const SubprocessOptions& options_;
  Keeper* keeper_;
  const int out_r_;
  const int err_r_;  // < 0: stderr is merged into out_r_
  const int wake_r_;
  TailBuffer tail_;
  TailBuffer err_tail_;
  bool err_eof_;
  const long grace_;
  const bool has_deadline_;
  const Clock::time_point deadline_;
  const std::chrono::milliseconds drain_;
  const std::chrono::milliseconds tick_;
  Clock::time_point next_tick_;
  bool end_sent_ = false;
  bool kill_sent_ = false;
  bool out_eof_ = false;
  bool tree_gone_ = false;
  Clock::time_point drain_until_{};
  Clock::time_point give_up_at_{};
  Clock::time_point tree_gone_at_{};
  char buf_[65536];
};

// A command's stdin: `input` in a temporary file that is unlinked at once (only the descriptor
// holds it), read from its start.
Status StageInput(const std::string& input, Fd* in_r) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/lousho-stdin-XXXXXX";
  int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0)
    return MakeError(ErrorCode::kSubprocess,
                     "cannot stage the command's input in " + path + ": " + std::strerror(errno));
  in_r->Reset(fd);
  unlink(path.c_str());
  size_t done = 0;
  while (done < input.size()) {
    ssize_t w = write(fd, input.data() + done, input.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return MakeError(ErrorCode::kSubprocess,
                       std::string("cannot stage the command's input: ") + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  lseek(fd, 0, SEEK_SET);
  return Status::Ok();
}

void SetExitStatus(const std::optional<int>& status, SubprocessResult* result) {
  if (!status) return;
  if (WIFEXITED(*status)) result->exit_code = WEXITSTATUS(*status);
  if (WIFSIGNALED(*status)) result->signal = WTERMSIG(*status);
}

}  // namespace

Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return MakeError(ErrorCode::kSubprocess, "empty command");
  ExecPrep prep;
  PrepareExec(SandboxedArgv(options.argv, options.sandbox.get()), options.env, &prep);
  PrepareSandbox(options.sandbox, &prep);

  Fd out_r, out_w, err_r, err_w, in_r;
  if (options.separate_stderr && !MakePipe(&err_r, &err_w))
    return MakeError(ErrorCode::kSubprocess, std::string("pipe: ") + std::strerror(errno));
  if (!options.input.empty()) {
    Status staged = StageInput(options.input, &in_r);
    if (!staged.ok()) return staged.error();
  }
  // Shared with the cancel callback, which may still be running on another thread when this
  // function returns.
  // (Both ends, so its write can never hit a pipe without a reader and raise SIGPIPE.)
  auto wake_r = std::make_shared<Fd>();
  auto wake_w = std::make_shared<Fd>();
  if (!MakePipe(&out_r, &out_w) || !MakePipe(wake_r.get(), wake_w.get()))
    return MakeError(ErrorCode::kSubprocess, std::string("pipe: ") + std::strerror(errno));
  for (int fd : {out_r.get(), wake_r->get(), wake_w->get(), err_r.get()})
    if (fd >= 0) fcntl(fd, F_SETFL, O_NONBLOCK);

  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  Keeper k;
  Status started = StartKeeper(options.argv, prep, cwd, options.kill_grace_ms, out_w.get(),
                               in_r.get(), err_w.get(), &k);
  out_w.Reset();
  err_w.Reset();
  in_r.Reset();
  if (!started.ok()) return started.error();

  SubprocessResult result;
  result.pid = *k.reports.pid;
  ScopedCancelCallback on_cancel(options.cancel, [wake_r, wake_w] {
    char b = 'c';
    ssize_t ignored = write(wake_w->get(), &b, 1);
    (void)ignored;
  });
  CommandWatch watch(options, &k, out_r.get(), err_r.get(), wake_r->get());
  if (!watch.Run(&result)) {
    // Only a keeper stopped from outside gets here. Killing it hands what is left of the tree
    // to init; say so rather than block the session.
    log::Warn("subprocess " + std::to_string(result.pid) +
              ": its keeper did not end the process tree in time; killing the keeper");
    kill(k.pid, SIGKILL);
  }
  WaitForKeeper(k.pid);
  watch.TakeOutput(&result);
  SetExitStatus(k.reports.status, &result);
  return result;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const ProcessOptions& options) {
  if (options.argv.empty()) return MakeError(ErrorCode::kSubprocess, "empty command");
  ExecPrep prep;
  PrepareExec(SandboxedArgv(options.argv, options.sandbox.get()), options.env, &prep);
  PrepareSandbox(options.sandbox, &prep);
  Fd in_r, in_w, out_r, out_w, err_r, err_w, wake_r, wake_w, stdin_wake_r, stdin_wake_w;
  if (!MakePipe(&in_r, &in_w) || !MakePipe(&out_r, &out_w) || !MakePipe(&err_r, &err_w) ||
      !MakePipe(&wake_r, &wake_w) || !MakePipe(&stdin_wake_r, &stdin_wake_w))
    return MakeError(ErrorCode::kSubprocess, std::string("pipe: ") + std::strerror(errno));
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  Keeper k;
  Status started = StartKeeper(options.argv, prep, cwd, options.kill_grace_ms, out_w.get(),
                               in_r.get(), err_w.get(), &k);
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  if (!started.ok()) return started.error();
  std::unique_ptr<ChildProcess> p(new ChildProcess());
  p->pid_ = *k.reports.pid;
  p->keeper_ = k.pid;
  p->grace_ms_ = std::max(0L, options.kill_grace_ms);
  p->tail_cap_ = options.stderr_tail_bytes;
  p->stdin_cap_ = options.stdin_queue_bytes;
  p->stdin_w_ = fcntl(in_w.get(), F_DUPFD_CLOEXEC, 0);
  p->stdout_r_ = fcntl(out_r.get(), F_DUPFD_CLOEXEC, 0);
  p->stderr_r_ = fcntl(err_r.get(), F_DUPFD_CLOEXEC, 0);
  p->stat_r_ = fcntl(k.stat_r.get(), F_DUPFD_CLOEXEC, 0);
  p->ctl_w_ = fcntl(k.ctl_w.get(), F_DUPFD_CLOEXEC, 0);
  p->ctl_r_ = fcntl(k.ctl_r.get(), F_DUPFD_CLOEXEC, 0);
  p->wake_r_ = fcntl(wake_r.get(), F_DUPFD_CLOEXEC, 0);
  p->wake_w_ = fcntl(wake_w.get(), F_DUPFD_CLOEXEC, 0);
  p->stdin_wake_r_ = fcntl(stdin_wake_r.get(), F_DUPFD_CLOEXEC, 0);
  p->stdin_wake_w_ = fcntl(stdin_wake_w.get(), F_DUPFD_CLOEXEC, 0);
  for (int fd : {p->stdin_w_, p->stdout_r_, p->stderr_r_, p->stat_r_, p->ctl_w_, p->ctl_r_,
                 p->wake_r_, p->wake_w_, p->stdin_wake_r_, p->stdin_wake_w_})
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
  // The stdin thread waits in poll, where Stop can wake it, never in a write.
  fcntl(p->stdin_w_, F_SETFL, O_NONBLOCK);
  fcntl(p->stdout_r_, F_SETFL, 0);  // the reader thread blocks on it
  fcntl(p->wake_w_, F_SETFL, O_NONBLOCK);
  fcntl(p->stdin_wake_w_, F_SETFL, O_NONBLOCK);
  ChildProcess* raw = p.get();
  try {
    p->stderr_thread_ = std::thread([raw] { raw->CollectStderr(); });
    p->stdin_thread_ = std::thread([raw] { raw->WriteStdinLoop(); });
  } catch (const std::system_error& e) {
    p->Stop();
    return MakeError(ErrorCode::kResourceExhausted, std::string("thread: ") + e.what());
  }
  return p;
}

void ChildProcess::CollectStderr() {
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{stderr_r_, POLLIN, 0}, {wake_r_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    // Woken by Stop: what is already in the pipe is still kept, without waiting for more.
    const bool last = fds[1].revents != 0;
    if (last && (fds[0].revents & (POLLIN | POLLHUP)) == 0) return;
    ssize_t n = read(stderr_r_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    tail_.append(buf, static_cast<size_t>(n));
    if (tail_cap_ > 0 && tail_.size() > 2 * tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
  }
}

std::string ChildProcess::StderrTail() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (tail_cap_ > 0 && tail_.size() > tail_cap_) return tail_.substr(tail_.size() - tail_cap_);
  return tail_;
}

bool ChildProcess::WriteStdin(std::string data) {
  std::lock_guard<std::mutex> lock(stdin_mu_);
  if (stdin_closed_) return false;
  if (stdin_cap_ > 0 && stdin_queued_ + data.size() > stdin_cap_) {
    stdin_full_ = true;
    return false;
  }
  stdin_queued_ += data.size();
  stdin_queue_.push_back(std::move(data));
  stdin_cv_.notify_all();
  return true;
}

bool ChildProcess::stdin_full() const {
  std::lock_guard<std::mutex> lock(stdin_mu_);
  return stdin_full_;
}

void ChildProcess::WriteStdinLoop() {
  // A command that has gone would raise SIGPIPE, which ends a process that does not ignore it
  // (the tests): it stays blocked on this thread, and a raised one is consumed.
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  std::unique_lock<std::mutex> lock(stdin_mu_);
  for (;;) {
    stdin_cv_.wait(lock, [&] { return !stdin_queue_.empty() || stdin_closed_; });
    if (stdin_closed_) return;
    std::string data = std::move(stdin_queue_.front());
    stdin_queue_.pop_front();
    lock.unlock();
    const bool ok = WriteToStdin(data);
    lock.lock();
    stdin_queued_ -= data.size();
    if (!ok) {
      // The command is gone (or Stop came): what waits is never read.
      stdin_closed_ = true;
      stdin_queue_.clear();
      stdin_queued_ = 0;
      return;
    }
  }
}

bool ChildProcess::WriteToStdin(const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = write(stdin_w_, p, left);
    if (n > 0) {
      p += n;
      left -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd fds[2] = {{stdin_w_, POLLOUT, 0}, {stdin_wake_r_, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) return false;
      if (fds[1].revents != 0) return false;  // Stop: leave the write
      continue;
    }
    if (n < 0 && errno == EPIPE) {
      sigset_t pipe_set;
      sigemptyset(&pipe_set);
      sigaddset(&pipe_set, SIGPIPE);
      timespec zero{0, 0};
      sigtimedwait(&pipe_set, nullptr, &zero);
    }
    return false;
  }
  return true;
}

void ChildProcess::Terminate() {
  std::lock_guard<std::mutex> lock(ctl_mu_);
  if (ctl_w_ < 0) return;
  char c = 'T';
  ssize_t ignored = write(ctl_w_, &c, 1);
  (void)ignored;
}

void ChildProcess::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  // The stdin thread leaves at once, even from a write the command does not read; what still
  // waits is dropped. A server reads its end of input as the request to leave; the signals
  // follow at once, as a session that closes must not wait on a server that ignores its stdin.
  {
    std::lock_guard<std::mutex> stdin_lock(stdin_mu_);
    stdin_closed_ = true;
    stdin_queue_.clear();
    stdin_cv_.notify_all();
  }
  char x = 'x';
  ssize_t ignored = write(stdin_wake_w_, &x, 1);
  (void)ignored;
  if (stdin_thread_.joinable()) stdin_thread_.join();
  if (stdin_w_ >= 0) close(stdin_w_);
  stdin_w_ = -1;
  Terminate();
  // The keeper closes its report pipe when the whole tree is gone.
  const auto give_up = Clock::now() + std::chrono::milliseconds(grace_ms_ + kKeeperSlackMs);
  KeeperReports reports;
  for (;;) {
    long left = MsUntil(give_up);
    pollfd fd{stat_r_, POLLIN, 0};
    int n = poll(&fd, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && !reports.Read(stat_r_)) break;
    if (n == 0 || left == 0) {
      log::Warn("process " + std::to_string(pid_) +
                ": its keeper did not end the process tree in time; killing the keeper");
      kill(keeper_, SIGKILL);
      break;
    }
  }
  WaitForKeeper(keeper_);
  char w = 'w';
  ignored = write(wake_w_, &w, 1);
  if (stderr_thread_.joinable()) stderr_thread_.join();
  {
    std::lock_guard<std::mutex> ctl_lock(ctl_mu_);
    if (ctl_w_ >= 0) close(ctl_w_);
    ctl_w_ = -1;
  }
  // stdout stays open until destruction: a reader thread may still be about to read its EOF.
  for (int* fd :
       {&stderr_r_, &stat_r_, &ctl_r_, &wake_r_, &wake_w_, &stdin_wake_r_, &stdin_wake_w_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

ChildProcess::~ChildProcess() {
  Stop();
  if (stdout_r_ >= 0) close(stdout_r_);
}

}  // namespace lousho

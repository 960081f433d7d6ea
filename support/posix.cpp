// Portable wrappers over pipe2 and sigabbrev_np (glibc/Linux) with POSIX fallbacks.
#include "support/posix.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

namespace lousho {

int PipeCloexec(int fds[2], bool nonblock) {
#if defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
  return pipe2(fds, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
#else
  // Not atomic: a fork in another thread between pipe and fcntl could inherit the ends; the
  // subprocess keeper closes every descriptor it does not need, so none reaches a command.
  if (pipe(fds) != 0) return -1;
  for (int i = 0; i < 2; ++i) {
    if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0 ||
        (nonblock && fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK) != 0)) {
      close(fds[0]);
      close(fds[1]);
      return -1;
    }
  }
  return 0;
#endif
}

std::string SignalName(int sig) {
#if defined(__GLIBC__)
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(sig);
#else
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGBUS:
      return "SIGBUS";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
  }
  return std::to_string(sig);
#endif
}

namespace {
// The soft RLIMIT_NOFILE found at start; set once before any thread, read after fork.
bool g_file_limit_raised = false;
rlim_t g_start_file_limit = 0;
}  // namespace

uint64_t RaiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  const rlim_t start = lim.rlim_cur;
  rlim_t want = lim.rlim_max;
#if defined(__APPLE__)
  // setrlimit refuses more than OPEN_MAX there, whatever the hard limit says.
  if (want == RLIM_INFINITY || want > OPEN_MAX) want = OPEN_MAX;
#endif
  if (want > start) {
    lim.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return static_cast<uint64_t>(start);
    g_start_file_limit = start;
    g_file_limit_raised = true;
  }
  return OpenFileLimit();
}

uint64_t OpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  return lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(lim.rlim_cur);
}

void RestoreChildFileLimit() {
  if (!g_file_limit_raised) return;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  lim.rlim_cur = g_start_file_limit;
  setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace lousho

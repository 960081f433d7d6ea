// Portable wrappers over pipe2 and sigabbrev_np (glibc/Linux) with POSIX fallbacks.
#include "support/posix.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
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

}  // namespace lousho

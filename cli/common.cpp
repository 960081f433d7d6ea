// The command line's shared pieces: errors, spec loading and the stop signals.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cli/command.h"
#include "core/tool.h"
#include "support/posix.h"

namespace lousho::cli {
namespace {

// Stop signals (SIGTERM, SIGINT, SIGHUP) end a server like the end of stdin: the handler only
// writes a byte to a self-pipe, which wakes the transport's read; the door then cancels every
// session, each cancelled bash command's process tree is ended, the workers are joined, and
// lousho exits 0, as it does on EOF. The handlers are one-shot (SA_RESETHAND): a second signal
// of the same kind ends lousho at once; the command keepers still end their trees then, as
// they do whenever lousho dies.
int g_stop_pipe_write = -1;  // globals because a signal handler needs them
volatile sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int sig) {
  int saved = errno;
  g_stop_signal = sig;
  char c = 1;
  ssize_t ignored = write(g_stop_pipe_write, &c, 1);
  (void)ignored;
  errno = saved;
}

}  // namespace

int InstallStopSignals() {
  int fds[2];
  if (PipeCloexec(fds, true) != 0) return -1;
  g_stop_pipe_write = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  return fds[0];
}

int StopSignal() { return g_stop_signal; }

void ReserveStdio() {
  for (int fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    // The lowest free number: `fd` itself, since every lower one is open by now.
    if (opened >= 0 && opened != fd) close(opened);
  }
}

int Fail(const Error& e) {
  std::fprintf(stderr, "%s: %s\n", ErrorCodeName(e.code), e.message.c_str());
  return 1;
}

Result<config::AgentSpec> LoadSpec(const std::string& path, const std::string& model) {
  config::LoadOptions opts;
  opts.model_override = model;
  opts.known_tools = agent::KnownToolNames();
  return config::LoadAgentSpec(path, opts);
}

}  // namespace lousho::cli

// The few system calls that differ between Linux and other POSIX systems, behind one name each,
// so the rest of the program stays portable. Linux-only behaviour that has no portable
// replacement is listed in docs/architecture.md ("Builds").
#pragma once

#include <cstdint>
#include <string>

namespace lousho {

// pipe() with O_CLOEXEC (and O_NONBLOCK when `nonblock`) on both ends; pipe2 where it exists,
// else pipe + fcntl. Returns 0, or -1 with errno set.
int PipeCloexec(int fds[2], bool nonblock);

// "SIGTERM", "SIGKILL", ...; the number as text for a signal without a known name.
std::string SignalName(int sig);

// Raises the soft open-file limit (RLIMIT_NOFILE) to the hard one (on macOS at most OPEN_MAX):
// every open session holds descriptors, and the usual soft limit of 1024 ran out long before the
// session cap. Call once at start, before any thread. Returns the soft limit now in force (the
// old one when it cannot be raised). The limit found at start is remembered for
// RestoreChildFileLimit.
uint64_t RaiseFileLimit();

// The soft open-file limit now in force.
uint64_t OpenFileLimit();

// In a forked child about to exec a command: puts back the soft open-file limit lousho started
// with, so commands see the limit their user set (programs that use select() or close every
// descriptor up to the limit expect it small). Async-signal-safe; nothing when
// RaiseFileLimit was not called.
void RestoreChildFileLimit();

}  // namespace lousho

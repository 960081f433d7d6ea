// The few system calls that differ between Linux and other POSIX systems, behind one name each,
// so the rest of the program stays portable. Linux-only behaviour that has no portable
// replacement is listed in docs/architecture.md ("Release and editors").
#pragma once

#include <string>

namespace lousho {

// pipe() with O_CLOEXEC (and O_NONBLOCK when `nonblock`) on both ends; pipe2 where it exists,
// else pipe + fcntl. Returns 0, or -1 with errno set.
int PipeCloexec(int fds[2], bool nonblock);

// "SIGTERM", "SIGKILL", ...; the number as text for a signal without a known name.
std::string SignalName(int sig);

}  // namespace lousho

#include "support/sandbox_net.h"

#ifdef __linux__
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace lousho::sandbox_net {

PrivateNetwork PreparePrivateNetwork() {
  PrivateNetwork n;
#ifdef __linux__
  n.uid_map = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1\n";
  n.gid_map = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1\n";
#endif
  return n;
}

#ifdef __linux__
namespace {
// Writes `text` to a /proc file of this process; 0 or the errno.
int WriteProcFile(const char* path, const char* text, size_t size) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text, size);
  const int err = n == static_cast<ssize_t>(size) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return err;
}

int LoopbackUp() {
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr;
  std::memset(&ifr, 0, sizeof ifr);
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = ioctl(s, SIOCGIFFLAGS, &ifr) == 0 ? 0 : errno;
  if (err == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  close(s);
  return err;
}
}  // namespace
#endif

int EnterPrivateNetwork(const PrivateNetwork& net) {
#ifdef __linux__
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return errno;
  // setgroups must be refused before an unprivileged process may map its group (absent on
  // kernels before 3.19, where the map alone is enough).
  if (int err = WriteProcFile("/proc/self/setgroups", "deny", 4); err != 0 && err != ENOENT)
    return err;
  if (int err = WriteProcFile("/proc/self/uid_map", net.uid_map.data(), net.uid_map.size()))
    return err;
  if (int err = WriteProcFile("/proc/self/gid_map", net.gid_map.data(), net.gid_map.size()))
    return err;
  return LoopbackUp();
#else
  (void)net;
  return ENOSYS;
#endif
}

}  // namespace lousho::sandbox_net

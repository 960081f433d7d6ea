// The network of `network: loopback` (support/sandbox.h): the command gets a network of its own
// with nothing but a loopback interface, so servers it starts answer it on 127.0.0.1 while
// nothing outside (the host's own loopback included) can be reached. A new user namespace owns
// the new network namespace, so not even a command running as root can enter the host's again.
#pragma once

#include <string>

namespace lousho::sandbox_net {

// What entering it needs, made before fork (the child may only make async-signal-safe calls).
struct PrivateNetwork {
  std::string uid_map;  // "<uid> <uid> 1": the same ids inside as outside
  std::string gid_map;
};
PrivateNetwork PreparePrivateNetwork();

// In the forked child, before the Landlock domain (which would refuse the /proc writes): a new
// user and network namespace, the id maps, the loopback interface up. Returns 0, or the errno
// of the step that failed. Async-signal-safe.
int EnterPrivateNetwork(const PrivateNetwork& net);

}  // namespace lousho::sandbox_net

// Linked into the portable Linux release build only (cmake/portable.cmake): GCC 12's static
// libstdc++ calls arc4random (std::random_device), which glibc added in 2.36; this definition,
// linked before libstdc++.a, keeps the binary within the glibc 2.34 the release promises.
// getentropy is glibc 2.25.
#include <unistd.h>

#include <cstdint>

extern "C" uint32_t arc4random() noexcept {
  uint32_t v = 0;
  // getentropy fails only for sizes over 256 bytes or a missing kernel getrandom (Linux < 3.17,
  // below glibc 2.34's own minimum); retry on EINTR-like transient failures.
  while (getentropy(&v, sizeof v) != 0) {
  }
  return v;
}

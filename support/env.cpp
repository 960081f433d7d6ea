// The process environment.
#include "support/env.h"

#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include <climits>
#include <cstdlib>

namespace lousho {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string ConfigHome(const EnvLookup& getenv) {
  if (auto xdg = getenv("XDG_CONFIG_HOME"); xdg && !xdg->empty() && (*xdg)[0] == '/') return *xdg;
  if (auto home = getenv("HOME"); home && !home->empty()) return *home + "/.config";
  return {};
}

std::string ExecutablePath() {
#ifdef __APPLE__
  char buf[PATH_MAX];
  uint32_t size = sizeof buf;
  if (_NSGetExecutablePath(buf, &size) != 0) return {};
  char real[PATH_MAX];
  return realpath(buf, real) ? std::string(real) : std::string(buf);
#else
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
#endif
}

}  // namespace lousho

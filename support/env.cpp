// The process environment.
#include "support/env.h"

#include <cstdlib>

namespace lousho {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace lousho

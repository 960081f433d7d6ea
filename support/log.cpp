// Logger implementation.
#include "support/log.h"

#include <cstdio>
#include <mutex>

namespace lousho::log {
namespace {
std::mutex g_mu;
Level g_level = Level::kWarn;
FILE* g_file = nullptr;

const char* Name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kOff:
      return "off";
  }
  return "?";
}
}  // namespace

void Configure(Level level, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_level = level;
  if (!file.empty()) {
    FILE* f = std::fopen(file.c_str(), "a");
    if (f) g_file = f;
  }
}

bool ParseLevel(const std::string& name, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError, Level::kOff}) {
    if (name == Name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

bool Enabled(Level level) { return level >= g_level && level != Level::kOff; }

void Write(Level level, const std::string& message) {
  if (!Enabled(level)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* out = g_file ? g_file : stderr;
  std::fprintf(out, "lousho %s: %s\n", Name(level), message.c_str());
  std::fflush(out);
}

}  // namespace lousho::log

// The logger: the only global. Writes to stderr or a log file, never to stdout.
#pragma once

#include <string>

namespace lousho::log {

enum class Level { kDebug, kInfo, kWarn, kError, kOff };

// Thread-safe. Configure once at start-up.
void Configure(Level level, const std::string& file);
bool ParseLevel(const std::string& name, Level* out);
bool Enabled(Level level);
void Write(Level level, const std::string& message);

inline void Debug(const std::string& m) { Write(Level::kDebug, m); }
inline void Info(const std::string& m) { Write(Level::kInfo, m); }
inline void Warn(const std::string& m) { Write(Level::kWarn, m); }
inline void Error(const std::string& m) { Write(Level::kError, m); }

}  // namespace lousho::log

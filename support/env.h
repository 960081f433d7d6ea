// The one way the program reads its environment: a lookup passed explicitly, so tests can give
// their own.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace lousho {

// Returns the variable's value, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the process environment.
std::optional<std::string> ProcessEnv(const std::string& name);

// The folder of per-user configuration: $XDG_CONFIG_HOME when set to an absolute path, else
// $HOME/.config; empty when neither is known.
std::string ConfigHome(const EnvLookup& getenv);

// The absolute path of the running program, or "" when the system does not say (Linux:
// /proc/self/exe; macOS: _NSGetExecutablePath).
std::string ExecutablePath();

}  // namespace lousho

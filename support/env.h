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

}  // namespace lousho

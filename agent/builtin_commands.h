// The slash commands every agent has, beside the spec's `commands:` (one table; a door lists them,
// the session runs them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/content.h"

namespace lousho::agent {

struct BuiltinCommand {
  const char* name;  // without '/'
  const char* description;
  const char* hint;  // input hint shown by editors; empty: takes no input
};

// One row per command. A spec command of the same name is shadowed by the built-in one.
inline constexpr BuiltinCommand kBuiltinCommands[] = {
    {"compact", "Summarize the older conversation to free context",
     "optional instructions for the summary"},
    {"model", "Switch the model (provider/model)", "provider/model"},
    {"name", "Name this session", "title"},
    {"export", "Save this session as an HTML page", "path (optional)"},
};

const BuiltinCommand* FindBuiltinCommand(const std::string& name);

// A prompt that calls a built-in command: a first text block "/name args...".
struct CommandCall {
  const BuiltinCommand* command = nullptr;
  std::string args;  // what follows the name, trimmed
};
std::optional<CommandCall> ParseBuiltinCall(const std::vector<ContentBlock>& content);

}  // namespace lousho::agent

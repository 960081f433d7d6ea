// The slash commands every agent has beside its spec's `commands:` (/name, /export, ...): one
// table, consulted before a prompt is expanded and when a door lists the commands.
#pragma once

#include <string>
#include <vector>

#include "support/status.h"

namespace lousho::agent {

class Session;

// One built-in command. `run` is called on the session's worker in place of a model turn; what
// it returns is shown to the user (never sent to the model), an error as well.
struct BuiltinCommand {
  const char* name;
  const char* description;
  const char* hint;  // what the input is; "" when it takes none
  Result<std::string> (*run)(Session& session, const std::string& args);
};

// Every built-in command, in the order a door lists them.
const std::vector<BuiltinCommand>& BuiltinCommands();
// The command named `name` (without the slash), or null.
const BuiltinCommand* FindBuiltinCommand(const std::string& name);

}  // namespace lousho::agent

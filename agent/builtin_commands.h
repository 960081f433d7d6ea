// The slash commands every agent has, beside the spec's `commands:`: one table of names and
// handlers (a door lists them, the session runs them through a CommandHost).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/rewind.h"
#include "core/content.h"
#include "support/status.h"

namespace lousho::agent {

// What a built-in command may do in the session it runs in (the turn runner provides it).
class CommandHost {
 public:
  virtual ~CommandHost() = default;
  // Shows an answer to the user (an assistant message kept out of the history).
  virtual void Note(const std::string& text) = 0;
  // A manual compaction within the prompt (its events show how it went); false when the prompt
  // was cancelled.
  virtual bool Compact(const std::string& instructions) = 0;
  virtual std::string CurrentModel() const = 0;                // "provider/model"
  virtual std::vector<std::string> OfferedModels() const = 0;  // "provider/model" each
  virtual Status SelectModel(const std::string& id) = 0;
  virtual std::string Name() const = 0;
  virtual Status SetName(const std::string& name) = 0;
  virtual Result<std::filesystem::path> Export(const std::string& path) = 0;
  // [rewind] Goes back to before the n-th last user message (1: the last), with its files.
  virtual Result<RewindOutcome> Rewind(size_t nth_last) {
    (void)nth_last;
    return MakeError(ErrorCode::kHistoryInvalid, "this session cannot rewind");
  }
};

// Runs a command with its arguments; true when the prompt was cancelled meanwhile.
using CommandHandler = bool (*)(CommandHost& host, const std::string& args);

struct BuiltinCommand {
  const char* name;  // without '/'
  const char* description;
  const char* hint;  // input hint shown by editors; empty: takes no input
  CommandHandler run;
};

namespace builtin {
bool Compact(CommandHost& host, const std::string& args);
bool Model(CommandHost& host, const std::string& args);
bool Name(CommandHost& host, const std::string& args);
bool Export(CommandHost& host, const std::string& args);
bool Rewind(CommandHost& host, const std::string& args);
}  // namespace builtin

// One row per command. A spec command of the same name is shadowed by the built-in one.
inline constexpr BuiltinCommand kBuiltinCommands[] = {
    {"compact", "Summarize the older conversation to free context",
     "optional instructions for the summary", &builtin::Compact},
    {"model", "Switch the model (provider/model)", "provider/model", &builtin::Model},
    {"name", "Name this session", "title", &builtin::Name},
    {"export", "Save this session as an HTML page", "path (optional)", &builtin::Export},
    {"rewind", "Go back to before your last message (or the N-th last), restoring the files",
     "N (optional)", &builtin::Rewind},
};

const BuiltinCommand* FindBuiltinCommand(const std::string& name);

// A prompt that calls a built-in command: a first text block "/name args...".
struct CommandCall {
  const BuiltinCommand* command = nullptr;
  std::string args;  // what follows the name, trimmed
};
std::optional<CommandCall> ParseBuiltinCall(const std::vector<ContentBlock>& content);

}  // namespace lousho::agent

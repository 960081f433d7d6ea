// The slash commands every agent has, beside the spec's `commands:`: one table of names and
// handlers (a door lists them, the session runs them through a CommandHost).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/rewind.h"
#include "config/agent_spec.h"
#include "core/command_source.h"
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

// One row per command. A spec or file command of the same name is shadowed by the built-in one
// (SessionCommands reports it).
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

// The prompt commands a session offers, each name once: the spec's `commands:`, then those read
// from markdown files (agent/skills/). A built-in command shadows both; a spec command shadows a
// file's; a file command shadows a later file's (already left out by discovery). Each command
// left out is reported in *shadowed, one line naming it, where it came from and what won.
std::vector<config::SlashCommand> SessionCommands(const std::vector<config::SlashCommand>& spec,
                                                  const std::vector<config::SlashCommand>& files,
                                                  std::vector<std::string>* shadowed);

// A prompt whose first text block is "/name args" for one of `commands`: that block becomes the
// command's text with the arguments put in (a spec command: `{{args}}`; a file command:
// `$ARGUMENTS` and `$@` for all of them, `$1`…`$9` for one each, split as a shell splits words);
// a command that names no place for them gets them after a blank line. Any other prompt comes
// back as it was.
std::vector<ContentBlock> ExpandPromptCommand(const std::vector<config::SlashCommand>& commands,
                                              std::vector<ContentBlock> content);
// A file command's text with `args` put in (see ExpandPromptCommand).
std::string SubstituteArguments(const std::string& text, const std::string& args);
// The words of a command's arguments as a shell splits them: blanks separate, quotes group.
std::vector<std::string> ArgumentWords(const std::string& args);

// The commands a door lists after the built-in ones: the session's (SessionCommands), then the
// tool sources' (MCP prompts, `/mcp:<server>:<prompt>`) whose names neither a built-in nor a
// session command took (those shadow a source's, as ExpandSourceCall finds them first).
std::vector<config::SlashCommand> OfferedCommands(const std::vector<config::SlashCommand>& session,
                                                  const std::vector<SourceCommand>& sources);

// A prompt whose first text block is "/name args" where `name` is no built-in and none of the
// session's `commands`: a call a tool source may answer (ToolSet::ExpandCommand).
struct SourceCall {
  std::string name;
  std::string args;  // what follows the name, trimmed
};
std::optional<SourceCall> ParseSourceCall(const std::vector<config::SlashCommand>& commands,
                                          const std::vector<ContentBlock>& content);

}  // namespace lousho::agent

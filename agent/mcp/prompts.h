// MCP prompts as slash commands: `/mcp:<server>:<prompt>`, their arguments taken from the
// command's words, the prompt's messages (prompts/get) becoming the user's turn.
#pragma once

#include <json/json.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/mcp/client.h"
#include "core/command_source.h"
#include "core/content.h"
#include "support/status.h"

namespace lousho::agent::mcp {

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct PromptInfo {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
};

// The entries of prompts/list with a name (others are skipped).
std::vector<PromptInfo> PromptsFrom(const Json::Value& list);

// "mcp:<server>:<prompt>", blanks in either name replaced by '-' (a command's name ends at the
// first blank).
std::string PromptCommandName(const std::string& server, const std::string& prompt);

// The editor's input hint: the arguments in order, optional ones in brackets ("city [state]");
// empty for a prompt without arguments.
std::string PromptHint(const PromptInfo& prompt);

// The arguments object of prompts/get from the command's words (split as a shell splits them):
// a word `key=value` whose key is one of the prompt's arguments sets that one; the other words
// fill the arguments not set by name, in their order, and words past the last one join it
// (separated by a space). An error names what is missing (a required argument) or extra (words
// for a prompt without arguments) and shows the usage.
Result<Json::Value> PromptArguments(const PromptInfo& prompt, const std::string& command,
                                    const std::vector<std::string>& words);

// A GetPromptResult's messages as the user's turn, in order: text, images, links as Markdown
// links, embedded resources as their text (ResourceContentsBlock); an assistant's message is
// marked as such. A result without messages gives a note saying so.
std::vector<ContentBlock> PromptContent(const Json::Value& result);

// The prompts of a session's servers, listed when each connects (a door lists commands without
// waiting on a server), and their use as commands. Thread-safe.
class PromptCatalog {
 public:
  // Lists the prompts of `client` when it announced prompts, replacing those of a server of the
  // same name (a login's new client). A list that fails is logged: the server offers none.
  // True when the commands changed.
  bool Load(const std::shared_ptr<Client>& client, const CancelToken& cancel);
  // Every prompt as a command, by name.
  std::vector<SourceCommand> Commands() const;
  // The user's turn for `/command words...` (prompts/get, within the call timeout and
  // `cancel`); nullopt when no prompt has that command name.
  std::optional<Result<std::vector<ContentBlock>>> Expand(const std::string& command,
                                                          const std::vector<std::string>& words,
                                                          const CancelToken& cancel) const;

 private:
  struct Entry {
    std::shared_ptr<Client> client;
    PromptInfo info;
    std::string command;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // by command name
};

}  // namespace lousho::agent::mcp

// What a session's model knows besides its history: the editor's system prompt (ACP
// `systemPrompt`, recorded in the session file), the per-session context (project files,
// always-apply rules, the environment: built once by the host, see host/context/), how the
// system prompt is composed of them, and the rules that join the history when a turn touches
// the files their globs name.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/history.h"
#include "agent/rules/rule.h"
#include "core/content.h"

namespace lousho::agent {

// The editor's system prompt. Value type.
struct ClientPrompt {
  enum class Mode { kAppend, kOverride };
  Mode mode = Mode::kAppend;
  std::string text;
  bool operator==(const ClientPrompt& o) const { return mode == o.mode && text == o.text; }
};
const char* ClientPromptModeId(ClientPrompt::Mode mode);

// The per-session context, built once (the first turn asks for it) and then fixed, so the
// system prompt stays byte for byte the same between turns (the providers' prompt caches).
struct SessionContext {
  std::string text;                     // the context block of the system prompt; may be empty
  std::vector<rules::Rule> file_rules;  // rules added when a turn touches their files
};
// Builds a session's context; called once, on the session's worker. May be empty: none.
using ContextSource = std::function<SessionContext()>;

// The system prompt: the spec's instructions (or, with an override, the editor's text), the
// editor's appended text, the context, the working directory and the tools' names.
std::string ComposeSystemPrompt(const std::string& instructions,
                                const std::optional<ClientPrompt>& client,
                                const std::string& context, const std::filesystem::path& cwd,
                                const std::vector<std::string>& tool_names);

// The custom entry that records the editor's prompt in the session file: customType
// "lousho.system_prompt", data {mode, text}.
inline constexpr const char* kClientPromptEntryType = "lousho.system_prompt";
Entry ClientPromptEntry(const ClientPrompt& prompt);
// The prompt a session opened on `seed` (stored entries) uses: `given` when the door sent one
// (then `*record` says whether it differs from the one stored last and is to be recorded),
// else the one stored last, else none.
std::optional<ClientPrompt> ChooseClientPrompt(const std::vector<Entry>& seed,
                                               const std::optional<ClientPrompt>& given,
                                               bool* record);

// Rules with `globs` and no condition: each joins the history as a hidden message the first
// time a tool call of a turn names a file its globs match (a `path` argument, or an item of a
// `paths` one; rules::CandidatePaths), once per session. Worker only.
class FileRules {
 public:
  FileRules(std::vector<rules::Rule> rules, std::filesystem::path cwd, std::string home);
  // Marks the rules the history already holds as added (a session opened from its file).
  void Restore(const MessageView& messages);
  // The messages of the rules the tool calls of `assistant` bring in.
  std::vector<Message> Due(const Message& assistant);
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<rules::Rule> rules_;
  std::filesystem::path cwd_;
  std::string home_;
  std::set<std::string> added_;  // rule names
};
inline constexpr const char* kFileRuleMessageType = "lousho.file-rule";

}  // namespace lousho::agent

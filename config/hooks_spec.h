// Hooks as users write them: the `hooks:` block of an agent spec and the project's hook files,
// all in Claude Code's shape ({Event: [{matcher, hooks: [{type: command, command, timeout}]}]}),
// read into one list of groups.
#pragma once

#include <json/json.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace lousho::config {

// The moments a hook may run at (Claude Code's event names).
enum class HookEvent {
  kPreToolUse,
  kPostToolUse,
  kUserPromptSubmit,
  kSessionStart,
  kStop,
  kSessionEnd,
  kPreCompact
};

const char* HookEventName(HookEvent event);
std::optional<HookEvent> ParseHookEvent(std::string_view name);

// One shell command.
struct HookCommand {
  std::string command;  // run with /bin/bash -c
  long timeout_ms = 0;  // 0: the spec's default
  std::string source;   // the file it was written in, for messages
};

// The commands of one event whose matcher fits.
struct HookGroup {
  HookEvent event = HookEvent::kPreToolUse;
  std::string matcher;  // "", "*": always; see docs/agent-spec.md, "Hooks"
  std::vector<HookCommand> hooks;
};

inline constexpr long kDefaultHookTimeoutMs = 60000;

// The spec's `hooks:`: its groups, whether the project's hook files are read, and the timeout
// of a hook that names none.
struct HooksSpec {
  std::vector<HookGroup> groups;
  bool project = true;
  long default_timeout_ms = kDefaultHookTimeoutMs;
};

// Groups read from one source, and what was left out of it (events or hook types lousho does
// not run), one line each.
struct ParsedHooks {
  std::vector<HookGroup> groups;
  std::vector<std::string> skipped;
};

// Reads the Claude Code shape: an object of event names, each a list of {matcher, hooks}. An
// unknown event name or a malformed entry is an error naming its place (`hooks.Stop[0]...`);
// Claude Code events lousho does not have, and hooks of a type other than "command", are
// skipped and listed.
Result<ParsedHooks> ParseHookGroups(const Json::Value& hooks, const std::string& source);

// The project's hook files in `dir`, in this order: .lousho/hooks.json, .claude/settings.json,
// .claude/settings.local.json, .codex/hooks.json (each the Claude Code shape under "hooks"; a
// settings file with "disableAllHooks": true gives none). A file that cannot be read or parsed
// gives nothing and a line in `skipped`.
ParsedHooks LoadProjectHooks(const std::filesystem::path& dir);

}  // namespace lousho::config

// Subagents as users write them: the spec's `agents:` map, and markdown files with front matter
// (the agent folder's `agents/`, the project's `.lousho/agents/`) in the shape Claude Code and
// opencode use: `name`, `description`, `model`, `thinking`, `tools`, `permissions`; the body is
// the instructions. This file reads the fields; finding the files is the host's.
#pragma once

#include <json/json.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/status.h"

namespace lousho::config {

// One subagent the `task` tool may start.
struct SubagentSpec {
  std::string name;  // lowercase letters, digits, '-', '_'
  std::string description;
  std::string instructions;  // empty: the parent agent's
  std::string model;         // "provider/model"; empty: the parent session's model
  std::string thinking;      // empty: the parent session's level
  std::vector<std::string> tools;
  bool tools_set = false;   // false: the parent agent's tools
  Json::Value permissions;  // the spec's permission rules (null: the parent agent's)
  std::string source;       // the file or "<spec>: agents.<name>", for messages
};

// `agents:`: the subagents and the `task` tool's settings.
struct SubagentsSpec {
  std::vector<SubagentSpec> agents;  // the spec's, then the agent folder's files, by name
  std::string tool_name = "task";
  int max_depth = 1;                            // how deep children may start children
  int max_parallel = 4;                         // task calls of one message run side by side
  size_t max_result_bytes = size_t{32} * 1024;  // of a child's answer, given to the parent
  bool general_purpose = true;                  // the built-in `general-purpose` agent
};

// The built-in agent every spec has unless `general_purpose: false`.
SubagentSpec GeneralPurposeAgent();

// One agent from already-parsed fields (an `agents:` entry, or a file's front matter) and its
// instructions. `known_tools` (empty: any) checks `tools`; Claude Code's tool names (Read, Grep,
// Glob, LS, Bash, Edit, MultiEdit, Write, TodoWrite) are taken as lousho's. Errors name `source`.
Result<SubagentSpec> SubagentFromFields(const std::string& name, const Json::Value& fields,
                                        std::string instructions, const std::string& source,
                                        const std::vector<std::string>& known_tools);

// The spec's `agents:` (a map: agent names to their fields, and the settings `tool_name`,
// `max_depth`, `max_parallel`, `max_result_bytes`, `general_purpose`). Errors name the key.
Result<SubagentsSpec> ParseSubagents(const Json::Value& agents, const std::string& source,
                                     const std::vector<std::string>& known_tools);

// Adds `more` to `into`, an agent of a name already there kept as it was (the first wins); the
// names left out are appended to `shadowed`.
void AddSubagents(std::vector<SubagentSpec>& into, std::vector<SubagentSpec> more,
                  std::vector<std::string>* shadowed);

}  // namespace lousho::config

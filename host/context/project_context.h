// A session's context, composed: the context files (context_files.h), the rules that always
// apply, and the environment (environment.h), under the spec's `context:` settings. The host
// hands sessions a ContextSource built here; `lousho context` and `lousho acp --print-agent`
// show the same report. docs/agent-spec.md, "Project context".
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "agent/rules/loader.h"
#include "agent/session_context.h"
#include "config/agent_spec.h"
#include "host/context/context_files.h"
#include "host/context/environment.h"
#include "support/env.h"

namespace lousho::host::context {

// Everything the context of one session depends on. Value type.
struct ContextInputs {
  config::ContextSpec settings;
  std::filesystem::path cwd;  // absolute
  std::vector<std::filesystem::path> additional_dirs;
  std::vector<std::filesystem::path> extra_roots;  // the spec's roots (tools may read them)
  std::string home;
  std::string config_home;
  std::string instructions_file;  // the spec folder's AGENTS.md (already in the instructions)
  std::shared_ptr<const agent::rules::AgentRules> rules;  // null: no rules
  std::string date;                                       // empty: today
};

// What went into a session's context and why.
struct ContextReport {
  ContextFiles files;
  std::vector<agent::rules::Rule> always_rules;  // in the system prompt
  std::vector<agent::rules::Rule> file_rules;    // added when a turn touches their files
  Environment environment;
  agent::SessionContext context;  // what the session is given
};

// Reads and runs what the settings ask for. Never fails.
ContextReport BuildContext(const ContextInputs& inputs);
// The inputs of a session of the agent `spec` (null: the built-in agent) in `cwd`.
ContextInputs InputsFor(const config::AgentSpec* spec,
                        std::shared_ptr<const agent::rules::AgentRules> rules,
                        const std::filesystem::path& cwd,
                        std::vector<std::filesystem::path> additional_dirs,
                        std::vector<std::filesystem::path> extra_roots, const EnvLookup& env);
// A source a session calls once, at its first model request.
agent::ContextSource ContextSourceFor(ContextInputs inputs);
// The report as text for people: each file with why it was read, its size, what was cut or
// refused; the rules; the environment; the total.
std::string DescribeReport(const ContextReport& report);

}  // namespace lousho::host::context

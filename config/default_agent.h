// Which agent `lousho acp` serves when no spec is named on the command line, and the built-in
// coding agent used when no spec file is found at all.
#pragma once

#include <string>

#include "config/agent_spec.h"
#include "config/credentials.h"
#include "support/env.h"

namespace lousho::config {

// Where the agent came from, in the order they are tried.
enum class AgentSource {
  kArgument,  // `lousho acp SPEC` or `--agent SPEC`
  kEnvVar,    // LOUSHO_AGENT
  kProject,   // <cwd>/.lousho/agent.yaml
  kUser,      // $XDG_CONFIG_HOME/lousho/agent.yaml (~/.config/lousho/agent.yaml)
  kBuiltin,   // none of them: the built-in coding agent
};

struct AgentChoice {
  AgentSource source = AgentSource::kBuiltin;
  std::string path;    // the spec file or folder; empty for kBuiltin
  std::string reason;  // one line: why this one ("LOUSHO_AGENT is set", ...)
};

// Takes the first of: `argument`, LOUSHO_AGENT, <cwd>/.lousho/agent.yaml, the user's
// agent.yaml, the built-in agent. Files are only checked for existence here; loading them
// reports their errors.
AgentChoice ChooseAgent(const std::string& argument, const EnvLookup& getenv,
                        const std::string& cwd);

// The built-in agent's model, from the credentials that exist. `missing` is set when none do:
// the sentence telling the user what to set or run.
struct DefaultModel {
  std::string model;  // "provider/model"
  std::string reason;
  std::string missing;
};

// LOUSHO_MODEL, else ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), else OPENAI_API_KEY, else
// OPENAI_BASE_URL (an OpenAI-compatible server; its model from LOUSHO_MODEL or setup), all
// read from the process environment first; then what `lousho setup` stored.
DefaultModel ChooseDefaultModel(const EnvLookup& process_env, const StoredCredentials& stored);

// The provider name of an OpenAI-compatible server given by OPENAI_BASE_URL.
inline constexpr char kCompatibleProvider[] = "openai-compatible";

// What to tell a user who has no credentials at all.
std::string NoCredentialsMessage();

// The built-in coding agent: every built-in tool, `default` mode, the given model. `getenv`
// (process over stored) supplies OPENAI_BASE_URL for the OpenAI-compatible provider.
AgentSpec BuiltinAgentSpec(const std::string& model, const EnvLookup& getenv);

const char* AgentSourceName(AgentSource source);

}  // namespace lousho::config

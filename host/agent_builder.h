// Builds an agent (the template of its sessions) from a loaded spec: provider, tools, rules. The
// only place that knows the concrete providers and tools, so the engine includes none.
#pragma once

#include <memory>

#include "agent/session.h"
#include "config/agent_spec.h"
#include "config/default_agent.h"
#include "support/env.h"
#include "support/status.h"

namespace lousho::agent {

// A missing provider key is not an error here: the agent carries it as provider_error.
Result<std::shared_ptr<const AgentConfig>> BuildAgent(const config::AgentSpec& spec,
                                                      const EnvLookup& getenv);

// The model named "provider/model" in a spec's terms, with the spec's providers and scripts.
Result<ModelChoice> ResolveModel(const config::AgentSpec& spec, const std::string& provider_name,
                                 const std::string& model_id, const EnvLookup& getenv);

// An agent as `lousho acp` serves it: chosen by config::ChooseAgent, its keys from the process
// environment over the stored credentials.
struct LoadedAgent {
  std::shared_ptr<const AgentConfig> agent;
  config::AgentChoice choice;
  std::string model;         // "provider/model" it uses
  std::string model_reason;  // why that model (the built-in agent), else ""
  std::string credentials_path;
  std::shared_ptr<const config::AgentSpec> spec;  // as loaded (its providers name the models)
};

// Loads the chosen agent. `model_override` is --model. A missing key is no error (the agent
// carries provider_error, whose message says what to set or run); a bad spec is.
Result<LoadedAgent> LoadAgent(const config::AgentChoice& choice, const std::string& model_override,
                              const EnvLookup& process_env);

}  // namespace lousho::agent

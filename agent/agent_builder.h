// Builds an agent (the template of its sessions) from a loaded spec: provider, tools, rules. The
// only place that knows the concrete providers and tools, so the engine includes none.
#pragma once

#include <memory>

#include "agent/session.h"
#include "config/agent_spec.h"
#include "support/env.h"
#include "support/status.h"

namespace lousho::agent {

// A missing provider key is not an error here: the agent carries it as provider_error.
Result<std::shared_ptr<const AgentConfig>> BuildAgent(const config::AgentSpec& spec,
                                                      const EnvLookup& getenv);

// The model named "provider/model" in a spec's terms, with the spec's providers and scripts.
Result<ModelChoice> ResolveModel(const config::AgentSpec& spec, const std::string& provider_name,
                                 const std::string& model_id, const EnvLookup& getenv);

}  // namespace lousho::agent

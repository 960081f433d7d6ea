// The agent's view for a door, and the thinking levels' ids.
#include "agent/agent_config.h"

namespace lousho::agent {

ThinkingLevel ParseThinkingLevel(const std::string& s) {
  if (s == "minimal") return ThinkingLevel::kMinimal;
  if (s == "low") return ThinkingLevel::kLow;
  if (s == "medium") return ThinkingLevel::kMedium;
  if (s == "high") return ThinkingLevel::kHigh;
  if (s == "xhigh") return ThinkingLevel::kXHigh;
  return ThinkingLevel::kOff;
}

const char* ThinkingLevelId(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return "off";
    case ThinkingLevel::kMinimal:
      return "minimal";
    case ThinkingLevel::kLow:
      return "low";
    case ThinkingLevel::kMedium:
      return "medium";
    case ThinkingLevel::kHigh:
      return "high";
    case ThinkingLevel::kXHigh:
      return "xhigh";
  }
  return "off";
}

AgentView ViewOf(const AgentConfig& agent) {
  AgentView v;
  v.name = agent.name;
  v.images = agent.model.provider && agent.model.provider->SupportsImages();
  v.commands = agent.commands;
  v.provider_error = agent.provider_error;
  v.models = agent.models;
  if (v.models.empty() && !agent.model.provider_name.empty())
    v.models.push_back({agent.model.provider_name, agent.model.model_id, agent.model.model_id});
  v.mcp_servers = agent.mcp_servers;
  v.mcp = agent.mcp;
  return v;
}

}  // namespace lousho::agent

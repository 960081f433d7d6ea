// What every session of one agent starts from: its model, tools, limits, permission rules and
// settings (AgentConfig), the model a session talks to (ModelChoice) and what a door may know of
// the agent (AgentView).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/compaction.h"
#include "agent/permissions.h"
#include "agent/rules/loader.h"
#include "config/agent_spec.h"
#include "core/provider.h"
#include "core/tool.h"
#include "support/status.h"

namespace lousho::agent {

// The model a session talks to. Value type.
struct ModelChoice {
  std::string provider_name;           // "script", "openai", ...
  std::string model_id;                // id at the provider
  std::shared_ptr<Provider> provider;  // null only when the agent's provider_error is set
  ThinkingLevel thinking = ThinkingLevel::kOff;
};

// A model a session may switch to. Value type.
struct ModelOption {
  std::string provider;
  std::string model_id;
  std::string name;  // display name
  std::string id() const { return provider + "/" + model_id; }
};

// Builds the ModelChoice for a provider and model id (the spec's providers, the catalogue, the
// environment's keys). Thread-safe.
using ModelResolver =
    std::function<Result<ModelChoice>(const std::string& provider, const std::string& model_id)>;

// The template every session of one agent starts from. Immutable once built; shared across
// threads. A session copies the model and the tools and may change its own copies.
struct AgentConfig {
  std::string name;
  std::string version;
  std::string instructions;
  ModelChoice model;
  // Set when the provider cannot be used yet (a missing key): the agent still starts, so the
  // editor can show this error when a session is opened.
  std::optional<Error> provider_error;
  std::vector<std::shared_ptr<Tool>> tools;
  int max_steps = 50;
  config::Limits limits;
  config::WebSearchSpec web_search;  // the provider's own web search (`webSearch:`)
  ProxySetting proxy;  // `proxy:` for its HTTP calls (MCP servers; providers and fetch have it)
  std::vector<PermissionRule> permission_rules;
  PermissionMode default_mode = PermissionMode::kDefault;
  std::vector<std::string> extra_roots;
  std::vector<config::SlashCommand> commands;
  // Skills and commands from files (agent/skills/), read by each session when it opens; nullopt:
  // none (an agent built without a spec).
  std::optional<config::SkillsSpec> skills;
  CompactionSettings compaction;
  // The models offered to switch to (the spec's `models:`, else the catalogue's models of every
  // provider with a key), the agent's own first; and how one is built. Null: only `model`.
  std::vector<ModelOption> models;
  ModelResolver resolve_model;
  std::string session_dir;  // the spec's sessionDir (absolute); empty: the door's default
  // Stream rules of the spec, the agent folder and the user, and the `ttsr:` settings; each
  // session adds its project's when it opens. Null: no stream rules at all.
  std::shared_ptr<const rules::AgentRules> rules;
  // The spec's MCP servers (each session starts its own) and their timeouts.
  std::vector<config::McpServerSpec> mcp_servers;
  config::McpSettings mcp;
  // The spec's hooks; each session adds its project's (agent/hooks.h).
  config::HooksSpec hooks;
  // The spec's `sandbox:` with `--sandbox` applied (agent/sandbox_guard.h).
  config::SandboxSpec sandbox;
};

// What a door may know of an agent: it never calls a provider or a tool itself.
struct AgentView {
  std::string name;
  bool images = false;  // the default model accepts images
  std::vector<config::SlashCommand> commands;
  std::optional<Error> provider_error;
  std::vector<ModelOption> models;                 // offered; the agent's own model first
  std::vector<config::McpServerSpec> mcp_servers;  // the spec's; a door starts them per session
  config::McpSettings mcp;
};
AgentView ViewOf(const AgentConfig& agent);

ThinkingLevel ParseThinkingLevel(const std::string& s);
const char* ThinkingLevelId(ThinkingLevel level);

}  // namespace lousho::agent

// Stream rules: where rules come from (the spec, the agent's folder, the project, the places
// other tools keep them, the user's) and the settings that govern them.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/rules/rule.h"
#include "config/agent_spec.h"

namespace lousho::agent::rules {

// A rule file that registers nothing, and why (disabled, shadowed, not a stream rule, …).
struct Skipped {
  std::string name;
  std::string path;
  std::string why;
};

// What a session registers. Immutable once loaded.
struct RuleSet {
  Settings settings;
  std::vector<std::string> settings_from;  // where the settings came from, in order
  std::vector<Rule> rules;                 // priority order; empty when settings.enabled is false
  std::vector<Skipped> skipped;
  std::vector<std::string> warnings;
  // Rules without a condition that go into the context (alwaysApply, globs), in the same
  // priority order; kept when stream rules are off.
  std::vector<Rule> context_rules;
};

// The agent's part, read once when the agent is built: the spec's `rules:` and `ttsr:`, the
// agent folder's rules/ and the user's ~/.lousho/rules/. Immutable; shared by its sessions.
struct AgentRules {
  Settings settings;
  std::vector<std::string> settings_from;
  std::vector<Rule> spec_rules;  // spec, then the agent folder
  std::vector<Rule> user_rules;  // ~/.lousho/rules
  std::vector<Skipped> skipped;
  std::vector<std::string> warnings;
  std::string home;             // for showing paths as ~/…; empty: unknown
  std::set<std::string> files;  // the rule files read, resolved: a session reads none twice
  std::vector<Rule> spec_context_rules, user_context_rules;  // no condition: the context's
};

// Reads the agent's rules. Nothing here fails: unreadable files and invalid regexes are warnings
// naming the file (and the offset in the pattern).
std::shared_ptr<const AgentRules> LoadAgentRules(const config::AgentSpec& spec,
                                                 const std::string& home);

// Adds what the session's working folder holds: the project's settings override
// (`.lousho/config.yml`, key `ttsr:`) and rules in `.lousho/rules/`, `.omp/rules/`,
// `.agents/rules/`, `.cursor/rules/`, between the agent's rules and the user's. A name already
// registered keeps its first rule. Reads a few small files; call when the session opens.
RuleSet LoadSessionRules(const AgentRules& agent, const std::filesystem::path& cwd);

// Reads every *.md / *.mdc of a folder (sorted by name), or one file, into rules. A file
// already in `*seen` (by its resolved path) is passed over: a folder named twice (the spec's
// `rules:` listing its own rules/, a project whose .lousho/ holds the spec) is read once. Files
// read are added to `*seen`; null: no such check. A file without a condition that is a context
// rule (ContextRuleFromText) goes to `*context` (null: it is skipped like any other).
void ReadRulePath(const std::filesystem::path& path, const std::string& origin,
                  std::vector<Rule>* rules, std::vector<Skipped>* skipped,
                  std::vector<std::string>* warnings, std::set<std::string>* seen = nullptr,
                  std::vector<Rule>* context = nullptr);

}  // namespace lousho::agent::rules

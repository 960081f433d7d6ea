// Agent specs: the YAML/JSON file (or folder) that describes one agent, loaded and validated.
#pragma once

#include <json/json.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/agents_spec.h"
#include "config/hooks_spec.h"
#include "config/provider_settings.h"
#include "config/sandbox_spec.h"
#include "support/http/proxy.h"
#include "support/status.h"

namespace lousho::config {

struct Limits {
  long long max_output_tokens = 0;  // per model reply; 0: model default
  long long max_total_tokens = 0;   // per prompt, summed over model replies; 0: none
};

// `webSearch:` the provider's own web search (Anthropic's, the Responses API's), offered to the
// model beside the tools when on.
struct WebSearchSpec {
  bool enabled = false;
  int max_uses = 0;  // per model request; 0: the provider's default
  std::vector<std::string> allowed_domains;
  std::vector<std::string> blocked_domains;
};

// Offline scripted model (`script/<name>`): what the model "says".
struct ScriptToolCall {
  std::string id;  // optional; generated when empty
  std::string name;
  Json::Value arguments{Json::objectValue};
};
struct ScriptStep {
  std::string thinking;
  std::string text;  // "{{input}}" is replaced by the last user message
  std::vector<ScriptToolCall> tool_calls;
  std::string stop_reason;              // "" (end_turn / tool_use), "max_tokens", "refusal"
  std::optional<ErrorCode> error_code;  // when set, the model call fails with this code
  std::string error_message;
  int delay_ms = 0;    // pause before each chunk
  int chunk_size = 0;  // characters per streamed chunk; 0: whole words
};
struct ScriptReply {
  std::string match;              // PCRE2 regex on the last user message; empty matches anything
  std::vector<ScriptStep> steps;  // one per model call of the turn
};
struct Script {
  std::string name;
  std::string source;  // file it came from (for messages)
  std::vector<ScriptReply> replies;
};

struct SlashCommand {
  std::string name;  // without '/'
  std::string description;
  std::string prompt;  // template; "{{args}}" is replaced by what follows the command
  std::string hint;    // input hint shown by editors
  // A command read from a markdown file (its path): `$ARGUMENTS`, `$@` and `$1`…`$9` are
  // replaced instead of `{{args}}`. Empty: the spec's own.
  std::string file;
};

// `skills:`: skills (SKILL.md folders) and slash commands from markdown files, found when a
// session opens (agent/skills/, docs/agent-spec.md "Skills and commands").
struct SkillsSpec {
  bool enabled = true;             // skills and the `skill` tool
  bool commands = true;            // slash commands from markdown files
  bool project = true;             // the project's folders (the working folder up to the repo root)
  bool user = true;                // the user's folders (~/.lousho/skills, ~/.claude/skills, ...)
  std::vector<std::string> paths;  // more skill folders (absolute), read before the others
};

// `compaction:` (see docs/agent-spec.md).
struct CompactionSpec {
  bool auto_compact = true;
  int threshold_percent = 85;
  long long keep_recent_tokens = 20000;
};

// One item of `rules:`: a rule file or a folder of them, or a rule written inline.
struct RuleSpec {
  std::string where;    // "<spec>:<line>:<col>" of the item, for messages
  std::string path;     // absolute file or folder; empty for an inline rule
  std::string name;     // inline: the rule's name
  std::string content;  // inline: the text injected
  Json::Value fields;   // inline: the other keys, as a rule file's front matter would hold them
};

// The `ttsr:` settings; unset ones keep the defaults (or the project's override).
struct TtsrSpec {
  std::optional<bool> enabled;
  std::optional<std::string> context_mode;    // discard | keep
  std::optional<std::string> interrupt_mode;  // always | prose-only | tool-only | never
  std::optional<std::string> repeat_mode;     // once | after-gap
  std::optional<int> repeat_gap;              // completed turns
};

// A client registered beforehand with an HTTP server's authorization server (`oauth:` of a
// server): used instead of registering lousho (dynamic registration, Client ID Metadata
// Document). The secret is never logged or shown.
struct McpOAuthClient {
  std::string client_id;            // empty: no pre-registered client
  std::string client_secret;        // empty: a public client, or see client_secret_env
  std::string client_secret_env;    // the variable holding the secret, read at each use
  std::vector<std::string> scopes;  // asked for instead of the servers' suggestions
};

// One MCP server, from the spec's `mcp_servers` or an editor's `mcpServers` (the same fields).
enum class McpTransport { kStdio, kHttp, kSse };
struct McpServerSpec {
  std::string name;
  McpTransport transport = McpTransport::kStdio;
  std::string command;  // stdio
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // stdio; empty: the session's folder
  std::string url;  // http, sse
  std::vector<std::pair<std::string, std::string>> headers;
  // stdio: the sandbox the server runs in (set by the host when `sandbox.mcp` is on); null: none.
  std::shared_ptr<const SandboxPolicy> sandbox;
  McpOAuthClient oauth;  // http, sse: a pre-registered OAuth client
};

// How long MCP servers may take, and how often a dead one is started again.
struct McpSettings {
  long start_timeout_ms = 10000;  // all of a session's servers together, at session start
  long call_timeout_ms = 300000;  // one tools/call (also tools/list: min(this, 30 s))
  int max_restarts = 3;           // per server and session
  // The Client ID Metadata Document lousho is known by (an https URL with a path), used as the
  // client id where an authorization server advertises client_id_metadata_document_supported.
  std::string client_metadata_url;
};

// `context:` (docs/agent-spec.md, "Project context"): what a session's system prompt holds
// besides the instructions. `context: false` turns every part off.
struct ContextSpec {
  bool files = true;  // context files from the working folder up to the repository root
  // The names looked for in each folder, in this order.
  std::vector<std::string> file_names = {"AGENTS.md", "CLAUDE.md", "GEMINI.md"};
  bool user_files = true;            // ~/.lousho/AGENTS.md and the other agents' user-level files
  bool rules = true;                 // rules with `alwaysApply: true` or `globs` and no condition
  bool environment = true;           // date, OS, shell, working folder
  bool git = true;                   // branch, short status, recent commits
  long long max_bytes = 65536;       // all context files together (imports included)
  long long max_file_bytes = 32768;  // one file (imports included)
  int import_depth = 5;              // `@path` imports inside imports
};

struct AgentSpec {
  std::string source;  // the spec file
  std::string dir;     // its folder (relative paths resolve here)
  std::string name;
  std::string description;
  std::string model;  // "provider/model"
  // `models:`: the models a session may switch to ("provider/model"); empty: the catalogue's
  // models of every provider with a key.
  std::vector<std::string> models;
  CompactionSpec compaction;
  std::string instructions;
  std::string thinking = "off";
  std::vector<std::string> tools;
  bool tools_set = false;  // false: every built-in tool
  int max_steps = 50;
  Limits limits;
  WebSearchSpec web_search;  // `webSearch:`
  Json::Value permissions;   // raw rules, interpreted by the engine
  std::string default_mode = "default";
  std::vector<std::string> roots;  // extra absolute roots tools may touch
  std::string session_dir;         // where session files go (absolute); empty: the default
  std::vector<RuleSpec> rules;     // stream rules of the spec, in order
  std::string rules_dir;           // folder rules/ beside the spec, if present
  TtsrSpec ttsr;
  std::map<std::string, ProviderSettings> providers;
  std::vector<SlashCommand> commands;
  SkillsSpec skills;
  std::map<std::string, Script> scripts;
  std::vector<McpServerSpec> mcp_servers;  // in the spec's order
  McpSettings mcp;
  HooksSpec hooks;  // `hooks:` (see docs/agent-spec.md, "Hooks")
  ContextSpec context;
  SandboxSpec sandbox;   // `sandbox:` (see docs/agent-spec.md, "Sandbox")
  SubagentsSpec agents;  // `agents:` and the files of agents/ beside the spec (docs/agent-spec.md)
  // `proxy:` (config/proxy_spec.h): the agent's HTTP calls' proxy; unset: the environment's.
  agent::ProxySetting proxy;
};

struct LoadOptions {
  std::string model_override;            // --model
  std::vector<std::string> known_tools;  // built-in tool names, for validation
  // `${VAR}` in mcp_servers strings; empty: the process environment.
  std::function<std::optional<std::string>(const std::string&)> env;
};

// Expands `${VAR}` and `${VAR:-default}` from `env`; `$$` is a literal `$`. A variable that is
// not set (and has no default) is an error naming it.
Result<std::string> ExpandVars(
    const std::string& text,
    const std::function<std::optional<std::string>(const std::string&)>& env);

// Loads a spec file (.yaml/.yml/.json) or a folder holding agent.yaml/agent.yml/agent.json.
// Errors: LOUSHO_CONFIG_NOT_FOUND, LOUSHO_CONFIG_INVALID with "<file>:<line>:<col>: what".
Result<AgentSpec> LoadAgentSpec(const std::string& path, const LoadOptions& options);

// Loads a script file (YAML/JSON list of replies, or {replies: [...]}).
Result<Script> LoadScriptFile(const std::string& path, const std::string& name);

// The scripts every spec has: "echo" (repeats the prompt) and "demo".
const std::map<std::string, Script>& BuiltinScripts();

}  // namespace lousho::config

// The session host: what both doors (ACP, `--mode rpc`) and any later one share. It loads the
// agent (its spec, the built-in defaults, the keys of the environment and of `lousho setup`),
// computes the models it offers and the thinking levels once, owns the session store, and opens,
// loads, resumes, forks and lists sessions. A door only translates its protocol to these calls
// and the engine's events to its frames.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/mcp/servers.h"
#include "agent/session.h"
#include "agent/session_store.h"
#include "config/default_agent.h"
#include "host/agent_builder.h"
#include "host/context/project_context.h"
#include "support/env.h"
#include "support/status.h"

namespace lousho::host {

// One model the agent offers, with what the catalogue knows of it. Value type.
struct ModelOffer {
  agent::ModelOption option;  // provider, model id, the name a model picker shows
  std::string catalog_name;   // the catalogue's display name; empty: none known
  std::string api;            // the provider's API as the spec names it ("script" for scripts)
  std::string base_url;
  bool reasoning = false;
  bool images = false;
  double input_price = 0, output_price = 0, cache_read_price = 0, cache_write_price = 0;
  long long context_window = 0;
  long long max_tokens = 0;
};

// A thinking level: its id (agent::ThinkingLevelId) and the name a picker shows.
struct ThinkingOffer {
  std::string id;
  std::string name;
};

struct HostOptions {
  config::AgentChoice choice;  // which agent (config::ChooseAgent, or the door's own lookup)
  std::string model_override;  // --model
  EnvLookup env;               // the process environment; stored credentials fill its gaps
  std::string session_dir;     // --session-dir; empty: the spec's sessionDir, then the default
  bool no_session = false;     // --no-session: nothing is saved, nothing listed
  bool test_ids = false;       // LOUSHO_TEST_MODE=1: session ids sess-1, sess-2, ...
  std::string sandbox_flag;    // --sandbox (config::ApplySandboxFlag); empty: the spec's
  // Permission rules checked before the spec's (`lousho run --deny`).
  std::vector<agent::PermissionRule> rules_first;
};

// A door's options for `choice`, with the environment `env` (test ids when it sets
// LOUSHO_TEST_MODE=1).
HostOptions MakeHostOptions(config::AgentChoice choice, std::string model_override,
                            std::string session_dir, bool no_session, EnvLookup env);

// Thread-safe. Load() may replace the agent while sessions run (each keeps the agent it began
// with); every other call reads the agent as loaded last.
class SessionHost {
 public:
  explicit SessionHost(HostOptions options);

  // Loads the agent (again: the spec and the stored credentials are read anew). On failure the
  // agent loaded before stays (at first: an empty stand-in that opens no session).
  Status Load();
  // The agent as loaded last, with where it came from (for --print-agent).
  agent::LoadedAgent loaded() const;
  std::shared_ptr<const agent::AgentConfig> agent() const;

  // The models offered, the agent's own first; the thinking levels, the same for every model.
  std::vector<ModelOffer> models() const;
  static const std::vector<ThinkingOffer>& ThinkingLevels();
  // Builds the model `provider`/`id` with the agent's providers and keys (the caller checks that
  // it is offered).
  Result<agent::ModelChoice> ResolveModel(const std::string& provider, const std::string& id) const;

  // A new session's id: a random UUID (v4), or sess-<n> with test_ids.
  std::string NewSessionId();
  // Whether session files are saved (nullopt root: --no-session, or no home to put them in).
  bool saves_sessions() const;
  // The context a session in `cwd` is given (its source, when options.context is empty, is
  // added by New and Open): context files, rules, environment under the spec's `context:`.
  context::ContextInputs ContextInputsFor(const std::filesystem::path& cwd,
                                          std::vector<std::filesystem::path> additional) const;

  // A new session: recorded in the store when sessions are saved (its file appears with the first
  // message), else in memory. `parent` names the file it continues. `options.seed`, when set, is
  // written to the new file first.
  Result<std::shared_ptr<agent::Session>> New(agent::SessionOptions options,
                                              const std::string& parent = {}) const;
  // A session continuing the file at `path` (load, resume, switch), with the file's id. With
  // `create` (`--session FILE`), a path that does not exist yet becomes a new session's file
  // (with options.id).
  Result<std::shared_ptr<agent::Session>> Open(agent::SessionOptions options,
                                               const std::filesystem::path& path,
                                               bool create = false) const;
  // A new session holding `from`'s history up to and including `leaf` (empty: none), recorded
  // as a file naming `from`'s as its parent.
  Result<std::shared_ptr<agent::Session>> Fork(const agent::Session& from, const std::string& leaf,
                                               agent::SessionOptions options) const;
  // The file of session `id` (cwd's folder first); kSessionNotFound when none (or none saved).
  Result<std::filesystem::path> Find(const std::string& id, const std::string& cwd) const;
  // The saved sessions of `cwd` (resolved; empty: all), most recently updated first.
  std::vector<agent::SessionSummary> List(const std::string& cwd) const;
  // Deletes the file of session `id` (agent::DeleteSessionFile): refused while a session holds it.
  Status Delete(const std::string& id, const std::string& cwd) const;
  // Forgets the credentials `lousho setup` stored (config::ForgetCredentials) and loads the agent
  // again without them; true when there were some. Sessions already open keep the agent (and
  // the key) they began with.
  Result<bool> ForgetStoredCredentials();

 private:
  std::shared_ptr<const agent::SessionStore> store() const;
  void AddContext(agent::SessionOptions& options) const;

  const HostOptions options_;
  mutable std::mutex mu_;
  agent::LoadedAgent loaded_;
  std::vector<ModelOffer> models_;
  std::shared_ptr<const agent::SessionStore> store_;  // null: sessions are not saved
  long long ids_ = 0;                                 // session ids given
};

// The whole MCP start for a door: starts the servers, adds their tools to the session, and
// returns how each went (failed ones are also logged with their stderr tail).
std::vector<agent::mcp::ServerStatus> AttachMcpServers(
    agent::Session& session, const std::vector<config::McpServerSpec>& specs,
    const agent::mcp::StartOptions& options);

// Session files: the engine's Session over a SessionWriter (used by SessionHost; tests call them
// with a store of their own).
// A new session recorded in `store` (its file appears with the first message); `parent_session`
// names the file it continues, if any. Sets options.recorder and options.session_file. A seed
// (a fork: the history before the point it branched at) is written to the new file first.
Result<std::shared_ptr<agent::Session>> CreateRecordedSession(
    std::shared_ptr<const agent::AgentConfig> agent, agent::SessionOptions options,
    const agent::SessionStore& store, const std::string& parent_session = {});
// A session continuing the file at `path`: the file is locked (LOUSHO_SESSION_LOCKED when
// another process holds it) and read; the session takes its id from the header unless
// options.id is set.
Result<std::shared_ptr<agent::Session>> OpenSessionFile(
    std::shared_ptr<const agent::AgentConfig> agent, agent::SessionOptions options,
    const std::filesystem::path& path);

}  // namespace lousho::host

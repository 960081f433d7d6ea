// `lousho --mode rpc`: serves one agent over the legacy RPC dialect (xcsh / omp / pi hosts) on
// stdin/stdout. A top-level mode rather than a subcommand, because hosts spawn their agent as
// `<command> --mode rpc [flags]`.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/session_store.h"
#include "cli/command.h"
#include "config/model_catalog.h"
#include "host/agent_builder.h"
#include "rpc_compat/server.h"
#include "support/env.h"
#include "support/log.h"
#include "support/transport.h"

namespace lousho::cli {
namespace {
namespace fs = std::filesystem;

struct RpcOptions {
  std::string mode;
  std::string agent;
  std::string model;
  std::string session;
  bool continue_session = false;
  bool no_session = false;
  std::string session_dir;
  std::string log_level = "warn";
  std::string log_file;
  long ui_timeout_ms = 0;
  long eof_grace_ms = -1;  // -1: LOUSHO_RPC_EOF_GRACE_MS, else the default
  size_t max_line = 64u << 20;
  std::vector<std::string> positional;
};

// Flags the known hosts pass that mean nothing here (pi-acp always adds --no-themes).
constexpr const char* kIgnoredFlags[] = {"--no-themes",       "--offline", "--no-extensions",
                                         "--no-skills",       "--verbose", "--no-prompt-templates",
                                         "--no-context-files"};

// Any --mode selects a top-level mode (an unknown one is then refused by name).
bool IsModeSelected(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--mode") == 0 || std::strncmp(argv[i], "--mode=", 7) == 0)
      return true;
  return false;
}

// The agent spec: --agent, else the user's default (XDG config, then ~/.config).
Result<std::string> AgentPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::vector<fs::path> candidates;
  if (auto xdg = ProcessEnv("XDG_CONFIG_HOME"); xdg && !xdg->empty())
    candidates.push_back(fs::path(*xdg) / "lousho" / "agent.yaml");
  if (auto home = ProcessEnv("HOME"); home && !home->empty())
    candidates.push_back(fs::path(*home) / ".config" / "lousho" / "agent.yaml");
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.string();
  std::string looked;
  for (const auto& c : candidates) looked += (looked.empty() ? "" : ", ") + c.string();
  return MakeError(
      ErrorCode::kConfigNotFound,
      "--mode rpc needs an agent: pass --agent PATH or create a default agent (" +
          (looked.empty() ? std::string("$XDG_CONFIG_HOME/lousho/agent.yaml") : looked) + ")");
}

rpc_compat::ModelOption OptionFor(const config::AgentSpec& spec, const std::string& provider,
                                  const std::string& id) {
  rpc_compat::ModelOption m;
  m.provider = provider;
  m.id = id;
  m.name = id;
  if (provider == "script") {
    m.api = "script";
    return m;
  }
  auto it = spec.providers.find(provider);
  const config::ProviderSettings* settings =
      it != spec.providers.end() ? &it->second : config::FindBuiltinProvider(provider);
  if (!settings) return m;
  m.api = settings->api == "openai-chat" ? "openai-completions" : settings->api;
  m.base_url = settings->base_url;
  const config::ModelInfo* info = config::FindModel(*settings, id);
  config::ModelInfo unknown = config::UnknownModelInfo(id);
  if (!info) info = &unknown;
  if (!info->name.empty()) m.name = info->name;
  m.reasoning = info->reasoning;
  m.images = info->images;
  m.input_price = info->input_price;
  m.output_price = info->output_price;
  m.cache_read_price = info->cache_read_price;
  m.cache_write_price = info->cache_write_price;
  m.context_window = info->context_window;
  m.max_tokens = info->max_output;
  return m;
}

// The models a host may pick: the agent's own, the models its providers list, its scripts.
std::vector<rpc_compat::ModelOption> Catalog(const config::AgentSpec& spec) {
  std::vector<rpc_compat::ModelOption> out;
  auto add = [&](const std::string& provider, const std::string& id) {
    for (const auto& m : out)
      if (m.provider == provider && m.id == id) return;
    out.push_back(OptionFor(spec, provider, id));
  };
  const size_t slash = spec.model.find('/');
  add(spec.model.substr(0, slash), slash == std::string::npos ? "" : spec.model.substr(slash + 1));
  for (const auto& [name, settings] : spec.providers)
    for (const auto& m : settings.models) add(name, m.id);
  for (const auto& [name, script] : spec.scripts) add("script", name);
  return out;
}

// Where session files go: --session-dir, the spec's sessionDir, $LOUSHO_HOME/sessions,
// ~/.lousho/sessions; none with --no-session. Only a path: nothing is touched here.
std::optional<fs::path> SessionRoot(const RpcOptions& o, const config::AgentSpec& spec) {
  if (o.no_session) return std::nullopt;
  if (!o.session_dir.empty()) return fs::absolute(o.session_dir);
  if (!spec.session_dir.empty()) return fs::path(spec.session_dir);
  auto root = agent::SessionStore::DefaultRoot(ProcessEnv);
  if (!root) log::Warn("neither LOUSHO_HOME nor HOME is set; sessions are not saved");
  return root;
}

// The door's session files and compaction: the engine's own operations.
void WireEngineOps(const RpcOptions& o, const config::AgentSpec& spec, const fs::path& cwd,
                   rpc_compat::EngineOps* ops) {
  std::shared_ptr<const agent::SessionStore> store;
  if (auto root = SessionRoot(o, spec)) store = std::make_shared<agent::SessionStore>(*root);
  ops->open = [store, cwd](
                  std::shared_ptr<const agent::AgentConfig> agent, agent::SessionOptions so,
                  const rpc_compat::OpenRequest& r) -> Result<std::shared_ptr<agent::Session>> {
    using Why = rpc_compat::OpenRequest::Why;
    auto open_file = [&](const fs::path& file) -> Result<std::shared_ptr<agent::Session>> {
      const fs::path path = cwd / file;
      std::error_code ec;
      if (r.why == Why::kStart && !fs::exists(path, ec)) {
        // --session names a file not written yet: the new session is recorded there.
        agent::SessionHeader header;
        header.id = so.id;
        header.timestamp_ms = agent::NowMs();
        header.cwd = so.cwd.string();
        header.agent = agent->name;
        so.session_file = path.string();
        so.recorder = agent::SessionWriter::ForNew(path, std::move(header));
        return agent::Session::Create(std::move(agent), std::move(so));
      }
      so.id.clear();  // the file's own id
      return agent::OpenSessionFile(std::move(agent), std::move(so), path);
    };
    switch (r.why) {
      case Why::kSwitch:
        return open_file(r.path);
      case Why::kStart:
        if (!r.path.empty()) return open_file(r.path);
        if (r.continue_newest && store) {
          auto listed = store->List(cwd.string());
          if (!listed.empty()) return open_file(listed.front().path);
        }
        break;
      case Why::kNew:
      case Why::kFork:  // a new file too, beginning with the history before the branch point
        if (store)
          return agent::CreateRecordedSession(agent, std::move(so), *store, r.parent_session);
        break;
    }
    if (store && r.why == Why::kStart)
      return agent::CreateRecordedSession(std::move(agent), std::move(so), *store);
    return agent::Session::Create(std::move(agent), std::move(so));
  };
  ops->session_file = [](const agent::Session& s) { return s.info().session_file; };
  ops->export_html = [](const agent::Session& s, const std::string& out) -> Result<std::string> {
    auto path = s.transcript().ExportHtml(out);
    if (!path.ok()) return path.error();
    return path->string();
  };
  ops->compact = [](agent::Session& s, const std::string& instructions,
                    std::function<void(Result<rpc_compat::CompactionOutcome>)> done) {
    return s.compaction().Compact(
        instructions, [done = std::move(done)](Result<agent::CompactionResult> r) {
          if (!r.ok()) return done(r.error());
          done(rpc_compat::CompactionOutcome{r->summary, r->first_kept_id, r->tokens_before});
        });
  };
}

// How long work may run on after stdin ends: --eof-grace-ms, else LOUSHO_RPC_EOF_GRACE_MS (a
// whole number of milliseconds), else rpc_compat::kDefaultEofGraceMs.
Result<long> EofGraceMs(const RpcOptions& o) {
  if (o.eof_grace_ms >= 0) return o.eof_grace_ms;
  const std::string env = ProcessEnv("LOUSHO_RPC_EOF_GRACE_MS").value_or("");
  if (env.empty()) return rpc_compat::kDefaultEofGraceMs;
  char* end = nullptr;
  errno = 0;
  const long ms = std::strtol(env.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || ms < 0)
    return MakeError(ErrorCode::kUsage, "LOUSHO_RPC_EOF_GRACE_MS=" + env +
                                            ": expected a whole number of milliseconds");
  return ms;
}

int RunRpc(const RpcOptions& o) {
  if (o.mode != "rpc")
    return Fail(MakeError(ErrorCode::kUsage, "unknown mode '" + o.mode + "' (known: rpc)"));
  for (const auto& p : o.positional) {
    if (!p.empty() && p[0] == '@')
      return Fail(
          MakeError(ErrorCode::kUsage, "@file arguments are not accepted in RPC mode (" + p +
                                           "); send the file's content in a prompt instead"));
    return Fail(MakeError(ErrorCode::kUsage, "RPC mode takes no messages on the command line (" +
                                                 p + "); send them as prompt commands"));
  }
  if (o.no_session && (!o.session.empty() || o.continue_session))
    return Fail(MakeError(ErrorCode::kUsage,
                          "--no-session cannot be combined with --session or --continue"));

  auto eof_grace_ms = EofGraceMs(o);
  if (!eof_grace_ms.ok()) return Fail(eof_grace_ms.error());

  auto path = AgentPath(o.agent);
  if (!path.ok()) return Fail(path.error());
  auto spec = LoadSpec(*path, o.model);
  if (!spec.ok()) return Fail(spec.error());
  auto agent = agent::BuildAgent(*spec, ProcessEnv);
  if (!agent.ok()) return Fail(agent.error());
  if ((*agent)->provider_error)
    log::Warn((*agent)->provider_error->ToString() + "; prompts will fail until it is set");

  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) return Fail(MakeError(ErrorCode::kUsage, "cannot read the working directory"));

  int stop_fd = InstallStopSignals();
  if (stop_fd < 0) log::Warn("cannot install signal handlers; signals end lousho at once");
  FdTransport transport(STDIN_FILENO, STDOUT_FILENO, o.max_line, stop_fd);
  rpc_compat::ServerOptions options;
  options.version = LOUSHO_VERSION;
  options.cwd = cwd;
  options.test_mode = ProcessEnv("LOUSHO_TEST_MODE").value_or("") == "1";
  options.ui_timeout_ms = o.ui_timeout_ms;
  options.eof_grace_ms = *eof_grace_ms;
  options.emit_title = ProcessEnv("PI_RPC_EMIT_TITLE").value_or("") == "1" ||
                       ProcessEnv("LOUSHO_RPC_EMIT_TITLE").value_or("") == "1";
  options.catalog.models = Catalog(*spec);
  auto shared_spec = std::make_shared<config::AgentSpec>(*spec);
  options.catalog.resolve = [shared_spec](const std::string& provider, const std::string& id) {
    return agent::ResolveModel(*shared_spec, provider, id, ProcessEnv);
  };
  options.stopped = [] { return StopSignal() != 0; };
  WireEngineOps(o, *spec, cwd, &options.ops);
  // Compaction runs in the engine; its switch is the session's own.
  options.ops.set_auto_compaction = [](agent::Session& session, bool enabled) {
    session.compaction().SetAuto(enabled);
    return Status::Ok();
  };
  options.ops.auto_compaction = [](const agent::Session& session) {
    return session.compaction().auto_enabled();
  };
  options.start.path = o.session;
  options.start.continue_newest = o.continue_session;
  options.start.no_session = o.no_session;
  options.start.session_dir = o.session_dir;
  log::Info("serving agent '" + spec->name + "' (" + spec->model + ") over RPC");
  rpc_compat::Server server(&transport, *agent, options);
  server.Run();
  return 0;
}

}  // namespace

int RunRpcModeIfSelected(int argc, char** argv) {
  if (!IsModeSelected(argc, argv)) return -1;
  auto o = std::make_shared<RpcOptions>();
  CLI::App app{"lousho --mode rpc: serve an agent over the legacy RPC dialect (xcsh/omp/pi)",
               "lousho"};
  app.add_option("--mode", o->mode, "rpc")->required();
  app.add_option("--agent", o->agent,
                 "agent spec (default: $XDG_CONFIG_HOME/lousho/agent.yaml, then "
                 "~/.config/lousho/agent.yaml)");
  app.add_option("--model", o->model, "override the spec's model (provider/model)");
  app.add_option("--session", o->session, "continue this session file");
  app.add_flag("-c,--continue", o->continue_session,
               "continue the newest session of the working directory");
  app.add_flag("--no-session", o->no_session, "keep sessions in memory only (no session files)");
  app.add_option("--session-dir", o->session_dir,
                 "where session files go (default: the spec's sessionDir, $LOUSHO_HOME/sessions, "
                 "~/.lousho/sessions)");
  app.add_option("--ui-timeout-ms", o->ui_timeout_ms,
                 "how long a dialog waits for the host before it resolves to its default "
                 "(default 0: no limit)");
  app.add_option("--eof-grace-ms", o->eof_grace_ms,
                 "when stdin ends, how long a running prompt or command may take to finish "
                 "before it is cancelled (its processes killed) and lousho exits (default: "
                 "$LOUSHO_RPC_EOF_GRACE_MS, else " +
                     std::to_string(rpc_compat::kDefaultEofGraceMs) + ")")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-line-bytes", o->max_line, "longest accepted input line (default 64 MiB)")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", o->log_level, "debug, info, warn, error or off (stderr)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error", "off"}));
  app.add_option("--log-file", o->log_file, "write logs to this file instead of stderr");
  for (const char* flag : kIgnoredFlags)
    app.add_flag(std::string(flag))->description("accepted for hosts; ignored");
  app.add_option("args", o->positional, "refused: RPC mode reads its prompts from stdin");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "%s: %s\nRun 'lousho --mode rpc --help' for usage.\n",
                 ErrorCodeName(ErrorCode::kUsage), e.what());
    return 1;
  }
  log::Level level = log::Level::kWarn;
  log::ParseLevel(o->log_level, &level);
  log::Configure(level, o->log_file);
  return RunRpc(*o);
}

}  // namespace lousho::cli

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

#include "cli/command.h"
#include "host/session_choice.h"
#include "host/session_host.h"
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
  std::string sandbox;  // --sandbox
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
  if (Status st = host::CheckSessionChoice({o.session, o.continue_session}, o.no_session); !st.ok())
    return Fail(st.error());

  auto eof_grace_ms = EofGraceMs(o);
  if (!eof_grace_ms.ok()) return Fail(eof_grace_ms.error());

  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) return Fail(MakeError(ErrorCode::kUsage, "cannot read the working directory"));
  // The same agent `lousho acp` would serve here: --agent, else LOUSHO_AGENT, the project's
  // .lousho/agent.yaml, the user's agent.yaml, the built-in coding agent.
  const config::AgentChoice choice = config::ChooseAgent(o.agent, ProcessEnv, cwd.string());
  host::HostOptions host_options =
      host::MakeHostOptions(choice, o.model, o.session_dir, o.no_session, ProcessEnv);
  host_options.sandbox_flag = o.sandbox;
  host::SessionHost host(std::move(host_options));
  if (Status loaded = host.Load(); !loaded.ok()) return Fail(loaded.error());
  const agent::LoadedAgent agent = host.loaded();
  if (agent.agent->provider_error)
    log::Warn(agent.agent->provider_error->ToString() + "; prompts will fail until it is set");

  int stop_fd = InstallStopSignals();
  if (stop_fd < 0) log::Warn("cannot install signal handlers; signals end lousho at once");
  FdTransport transport(STDIN_FILENO, STDOUT_FILENO, o.max_line, stop_fd);
  rpc_compat::ServerOptions options;
  options.version = LOUSHO_VERSION;
  options.cwd = cwd;
  options.ui_timeout_ms = o.ui_timeout_ms;
  options.eof_grace_ms = *eof_grace_ms;
  options.emit_title = ProcessEnv("PI_RPC_EMIT_TITLE").value_or("") == "1" ||
                       ProcessEnv("LOUSHO_RPC_EMIT_TITLE").value_or("") == "1";
  options.stopped = [] { return StopSignal() != 0; };
  options.start.path = o.session;
  options.start.continue_newest = o.continue_session;
  log::Info("serving agent '" + agent.agent->name + "' (" + agent.model + ") over RPC");
  rpc_compat::Server server(&transport, &host, options);
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
                 "agent spec (default, as `lousho acp`: LOUSHO_AGENT, .lousho/agent.yaml, "
                 "~/.config/lousho/agent.yaml, else the built-in coding agent)");
  app.add_option("--model", o->model, "override the spec's model (provider/model)");
  app.add_option("--sandbox", o->sandbox,
                 "commands' kernel sandbox: workspace-write, read-only or off, optionally with "
                 ",network=off (overrides the spec's `sandbox:`)");
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

// `lousho acp [SPEC]`: serves an agent over ACP on stdin/stdout; without SPEC it takes the first
// of LOUSHO_AGENT, .lousho/agent.yaml, the user's agent.yaml and the built-in coding agent.
// A spec named on the command line that does not load ends lousho (exit 1); one that was found
// does not: the editor's connection stays up, and each new session tells the user the error
// until the spec is fixed (acp::ServerOptions::load_error).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "acp/server.h"
#include "cli/command.h"
#include "host/session_host.h"
#include "support/env.h"
#include "support/log.h"
#include "support/posix.h"
#include "support/transport.h"

namespace lousho::cli {
namespace {

struct AcpOptions {
  std::string spec_path;
  std::string agent_option;
  bool print_agent = false;
  bool setup = false;
  std::string model;
  std::string sandbox;  // --sandbox
  std::string record;
  size_t max_line = 64u << 20;
  size_t max_sessions = 0;  // 0: the default, from the open-file limit
  long cleanup_timeout_ms = 5000;
  std::string session_dir;
  bool no_session = false;
};

std::string CurrentDir() {
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? std::string() : cwd.string();
}

// The session cap: --max-sessions, else kDefaultMaxSessions, and never more than the open-file
// limit (raised to its hard limit at start) leaves room for; sets options->max_sessions_note
// when that limit is what caps it.
void SetSessionCap(size_t asked, acp::ServerOptions* options) {
  const uint64_t files = OpenFileLimit();
  const size_t room = acp::SessionsForFileLimit(files);
  const size_t wanted = asked == 0 ? acp::kDefaultMaxSessions : asked;
  options->max_sessions = std::min(wanted, room);
  if (wanted <= room) return;
  const std::string why = "the open-file limit of " + std::to_string(files) + " allows " +
                          std::to_string(room) + " sessions (" +
                          std::to_string(acp::kFdsPerSession) + " descriptors each)";
  const std::string raise = "raise the limit (ulimit -n) before starting lousho";
  options->max_sessions_note = " (" + why + "; to allow more, " + raise + ")";
  if (asked != 0)
    log::Warn("--max-sessions " + std::to_string(asked) + ": " + why + "; using " +
              std::to_string(room) + ". To allow " + std::to_string(asked) + ", " + raise);
}

}  // namespace

void PrintReadiness(const agent::LoadedAgent& a) {
  if (a.agent->provider_error)
    std::printf("status: not ready: %s\n", a.agent->provider_error->message.c_str());
  else
    std::printf("status: ready\n");
}

namespace {

// `--print-agent`: which agent and model `lousho acp` would serve here, and why.
int PrintAgent(const agent::LoadedAgent& a) {
  const config::AgentChoice& c = a.choice;
  std::printf("agent: %s (%s: %s)\n",
              c.source == config::AgentSource::kBuiltin ? "built-in coding agent" : c.path.c_str(),
              config::AgentSourceName(c.source), c.reason.c_str());
  std::printf("model: %s%s%s%s\n", a.model.c_str(), a.model_reason.empty() ? "" : " (",
              a.model_reason.c_str(), a.model_reason.empty() ? "" : ")");
  std::error_code ec;
  const bool stored =
      !a.credentials_path.empty() && std::filesystem::exists(a.credentials_path, ec);
  std::printf("stored credentials: %s%s\n",
              a.credentials_path.empty() ? "(no HOME)" : a.credentials_path.c_str(),
              stored ? "" : " (none)");
  PrintReadiness(a);
  return 0;
}

// What the editor is told when the agent found at start does not load: the error, where the
// agent came from, and what to do.
Error ExplainLoadError(Error e, const config::AgentChoice& choice) {
  if (choice.source == config::AgentSource::kBuiltin) {
    e.message +=
        "; the built-in agent did not load: fix that setting in the agent's environment (in Zed: "
        "the `env` of its agent_servers entry) and restart the agent";
  } else {
    e.message += "; the agent spec " + choice.path + " (" + choice.reason +
                 ") did not load: fix it (`lousho validate " + choice.path +
                 "` checks it), then start a new session (lousho reads it again)";
  }
  return e;
}

// Started by hand in a terminal: ACP is for editors, so say what lousho waits for and how a
// person tries it. Only a terminal on stdin gets this (editors give a pipe), and only stderr.
void GreetTerminalUser() {
  if (isatty(STDIN_FILENO) != 1) return;
  std::fprintf(
      stderr,
      "lousho acp speaks the Agent Client Protocol: JSON-RPC messages, one a line, on "
      "stdin and stdout. An editor (Zed, JetBrains, Neovim...) starts it and talks to it.\n"
      "To try the agent yourself: `lousho chat SPEC` (a conversation in this terminal), "
      "`lousho run SPEC \"a prompt\"` (one prompt), or `scripts/demo` in lousho's source "
      "tree.\n"
      "Waiting for ACP messages on stdin (Ctrl-D ends lousho).\n");
}

int RunAcp(const AcpOptions& o) {
  if (o.setup) return RunSetup(SetupOptions{});
  if (!o.spec_path.empty() && !o.agent_option.empty() && o.spec_path != o.agent_option)
    return Fail(MakeError(ErrorCode::kUsage, "give the agent spec once (positional or --agent)"));
  const std::string cwd = CurrentDir();
  const config::AgentChoice choice =
      config::ChooseAgent(o.spec_path.empty() ? o.agent_option : o.spec_path, ProcessEnv, cwd);
  host::HostOptions host_options =
      host::MakeHostOptions(choice, o.model, o.session_dir, o.no_session, ProcessEnv);
  host_options.sandbox_flag = o.sandbox;
  host::SessionHost host(std::move(host_options));
  Status loaded = host.Load();
  // Named: the caller sees the exit and stderr. Found: an editor started lousho and shows only
  // what comes over the protocol, so the server starts and each new session says what is wrong.
  const bool named = choice.source == config::AgentSource::kArgument;
  if (!loaded.ok() && (named || o.print_agent)) return Fail(loaded.error());
  if (o.print_agent) {
    PrintAgent(host.loaded());
    std::printf("%s\n", config::DescribeSandbox(host.agent()->sandbox).c_str());  // [sandbox]
    PrintContextReport(host, cwd, false);
    return 0;
  }
  std::optional<Error> load_error;
  std::shared_ptr<const agent::AgentConfig> agent = host.agent();
  if (!loaded.ok()) {
    load_error = ExplainLoadError(loaded.error(), choice);
    log::Warn(load_error->ToString());
  } else if (agent->provider_error) {
    log::Warn(agent->provider_error->ToString() + "; sessions will fail until it is set");
  }

  if (!o.record.empty()) {
    FILE* f = std::fopen(o.record.c_str(), "w");
    if (f == nullptr)
      return Fail(MakeError(ErrorCode::kUsage, "--record: cannot write " + o.record));
    std::fclose(f);
  }
  if (loaded.ok())
    log::Info("serving agent '" + agent->name + "' (" + host.loaded().model + ") over ACP");
  GreetTerminalUser();
  int stop_fd = InstallStopSignals();
  if (stop_fd < 0) log::Warn("cannot install signal handlers; signals end lousho at once");
  FdTransport transport(STDIN_FILENO, STDOUT_FILENO, o.max_line, stop_fd);
  acp::ServerOptions options;
  options.record_file = o.record;
  options.version = LOUSHO_VERSION;
  SetSessionCap(o.max_sessions, &options);
  options.executable = ExecutablePath();
  // `authenticate`, and session/new while credentials are missing, load the agent again: the
  // user may have run `lousho setup` since.
  options.explain_load_error = [choice](Error e) { return ExplainLoadError(std::move(e), choice); };
  options.cleanup_timeout_ms = o.cleanup_timeout_ms;
  options.load_error = load_error;
  acp::Server server(&transport, &host, options);
  server.Run();
  if (int sig = StopSignal(); sig != 0) {
    log::Info("stopped by " + SignalName(sig) + "; sessions ended");
  }
  return 0;
}

}  // namespace

Subcommand AddAcpCommand(CLI::App& app) {
  auto o = std::make_shared<AcpOptions>();
  CLI::App* acp = app.add_subcommand("acp", "serve an agent over ACP on stdin/stdout");
  acp->add_option("agent", o->spec_path,
                  "agent spec (.yaml, .yml, .json) or a folder holding one; default: "
                  "LOUSHO_AGENT, .lousho/agent.yaml, ~/.config/lousho/agent.yaml, else the "
                  "built-in coding agent");
  acp->add_option("--agent", o->agent_option, "the agent spec, as the positional argument");
  acp->add_flag("--print-agent", o->print_agent,
                "print which agent and model would be served, and why, then exit");
  acp->add_flag("--setup", o->setup,
                "run the interactive model-access setup (as `lousho setup`), then exit");
  acp->add_option("--model", o->model, "override the spec's model (provider/model)");
  acp->add_option("--sandbox", o->sandbox,
                  "commands' kernel sandbox: workspace-write, read-only or off, optionally "
                  "with ,network=off (overrides the spec's `sandbox:`)");
  acp->add_option("--record", o->record, "mirror every protocol line in (>) and out (<) to FILE");
  acp->add_option("--cleanup-timeout-ms", o->cleanup_timeout_ms,
                  "how long a clean-up call to the editor (terminal/kill, output, release) may "
                  "wait for its answer (default 5000)");
  acp->add_option("--max-sessions", o->max_sessions,
                  "open sessions at most; session/new past it is refused (default " +
                      std::to_string(acp::kDefaultMaxSessions) +
                      ", and never more than the open-file limit allows: lousho raises its soft "
                      "limit to the hard one and counts " +
                      std::to_string(acp::kFdsPerSession) + " descriptors per session, " +
                      std::to_string(acp::kReservedFds) + " for itself)");
  acp->add_option("--session-dir", o->session_dir,
                  "save session files under DIR (default: the spec's sessionDir, "
                  "$LOUSHO_HOME/sessions, ~/.lousho/sessions)");
  acp->add_flag("--no-session", o->no_session,
                "save no session files (session/load, list and resume are not offered)");
  acp->add_option("--max-line-bytes", o->max_line, "longest accepted input line (default 64 MiB)")
      ->check(CLI::PositiveNumber);
  return {acp, [o] { return RunAcp(*o); }};
}

}  // namespace lousho::cli

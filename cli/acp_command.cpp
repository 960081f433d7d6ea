// `lousho acp SPEC`: serves an agent over ACP on stdin/stdout.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "acp/server.h"
#include "agent/agent_builder.h"
#include "agent/session_store.h"
#include "cli/command.h"
#include "support/env.h"
#include "support/log.h"
#include "support/transport.h"

namespace lousho::cli {
namespace {

struct AcpOptions {
  std::string spec_path;
  std::string model;
  std::string record;
  size_t max_line = 64u << 20;
  size_t max_sessions = 1024;
  long cleanup_timeout_ms = 5000;
  std::string session_dir;
  bool no_session = false;
};

// Where session files go: --session-dir, the spec's sessionDir, $LOUSHO_HOME/sessions,
// ~/.lousho/sessions; none with --no-session. Only a path: nothing is touched here.
std::optional<std::filesystem::path> SessionRoot(const AcpOptions& o,
                                                 const config::AgentSpec& spec) {
  if (o.no_session) return std::nullopt;
  if (!o.session_dir.empty()) return std::filesystem::absolute(o.session_dir);
  if (!spec.session_dir.empty()) return spec.session_dir;
  auto root = agent::SessionStore::DefaultRoot(ProcessEnv);
  if (!root) log::Warn("neither LOUSHO_HOME nor HOME is set; sessions are not saved");
  return root;
}

int RunAcp(const AcpOptions& o) {
  auto spec = LoadSpec(o.spec_path, o.model);
  if (!spec.ok()) return Fail(spec.error());
  auto agent = agent::BuildAgent(*spec, ProcessEnv);
  if (!agent.ok()) return Fail(agent.error());
  if ((*agent)->provider_error) {
    const Error& e = *(*agent)->provider_error;
    log::Warn(e.ToString() + "; sessions will fail until it is set");
  }

  if (!o.record.empty()) {
    FILE* f = std::fopen(o.record.c_str(), "w");
    if (f == nullptr)
      return Fail(MakeError(ErrorCode::kUsage, "--record: cannot write " + o.record));
    std::fclose(f);
  }
  log::Info("serving agent '" + spec->name + "' (" + spec->model + ") over ACP");
  int stop_fd = InstallStopSignals();
  if (stop_fd < 0) log::Warn("cannot install signal handlers; signals end lousho at once");
  FdTransport transport(STDIN_FILENO, STDOUT_FILENO, o.max_line, stop_fd);
  acp::ServerOptions options;
  options.record_file = o.record;
  options.test_mode = ProcessEnv("LOUSHO_TEST_MODE").value_or("") == "1";
  options.version = LOUSHO_VERSION;
  options.max_sessions = o.max_sessions;
  options.cleanup_timeout_ms = o.cleanup_timeout_ms;
  options.session_root = SessionRoot(o, *spec);
  acp::Server server(&transport, *agent, options);
  server.Run();
  if (int sig = StopSignal(); sig != 0) {
    const char* name = sigabbrev_np(sig);
    log::Info(std::string("stopped by SIG") + (name ? name : "?") + "; sessions ended");
  }
  return 0;
}

}  // namespace

Subcommand AddAcpCommand(CLI::App& app) {
  auto o = std::make_shared<AcpOptions>();
  CLI::App* acp = app.add_subcommand("acp", "serve an agent over ACP on stdin/stdout");
  acp->add_option("agent", o->spec_path, "agent spec (.yaml, .yml, .json) or a folder holding one")
      ->required();
  acp->add_option("--model", o->model, "override the spec's model (provider/model)");
  acp->add_option("--record", o->record, "mirror every protocol line in (>) and out (<) to FILE");
  acp->add_option("--cleanup-timeout-ms", o->cleanup_timeout_ms,
                  "how long a clean-up call to the editor (terminal/kill, output, release) may "
                  "wait for its answer (default 5000)");
  acp->add_option("--max-sessions", o->max_sessions,
                  "open sessions at most; session/new past it is refused (default 1024)");
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

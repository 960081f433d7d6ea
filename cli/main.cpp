// lousho's entry point: command line, subcommands, and wiring of the ACP door to the engine.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "acp/server.h"
#include "agent/agent_builder.h"
#include "agent/session.h"
#include "agent/tool.h"
#include "config/agent_spec.h"
#include "support/env.h"
#include "support/log.h"
#include "support/transport.h"

namespace {

using lousho::Error;

using lousho::ProcessEnv;

// Stop signals (SIGTERM, SIGINT, SIGHUP) end the server like the end of stdin: the handler only
// writes a byte to a self-pipe, which wakes the transport's read; Server::Run then cancels every
// session, each cancelled bash command's process tree is ended, the workers are joined, and
// lousho exits 0, as it does on EOF. The handlers are one-shot (SA_RESETHAND): a second signal
// of the same kind ends lousho at once; the command keepers still end their trees then, as
// they do whenever lousho dies.
int g_stop_pipe_write = -1;  // globals because a signal handler needs them
volatile sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int sig) {
  int saved = errno;
  g_stop_signal = sig;
  char c = 1;
  ssize_t ignored = write(g_stop_pipe_write, &c, 1);
  (void)ignored;
  errno = saved;
}

// Installs the stop handlers; returns the read end of their self-pipe, or -1.
int InstallStopSignals() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  g_stop_pipe_write = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  return fds[0];
}

int Fail(const Error& e) {
  std::fprintf(stderr, "%s: %s\n", lousho::ErrorCodeName(e.code), e.message.c_str());
  return 1;
}

lousho::Result<lousho::config::AgentSpec> Load(const std::string& path, const std::string& model) {
  lousho::config::LoadOptions opts;
  opts.model_override = model;
  opts.known_tools = lousho::agent::BuiltinToolNames();
  return lousho::config::LoadAgentSpec(path, opts);
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout must not kill us mid-turn; writes just fail.
  signal(SIGPIPE, SIG_IGN);

  CLI::App app{"lousho: coding agents for editors, over the Agent Client Protocol", "lousho"};
  app.set_version_flag("--version", std::string("lousho ") + LOUSHO_VERSION);
  app.require_subcommand(1);
  std::string log_level = "warn";
  std::string log_file;
  app.add_option("--log-level", log_level, "debug, info, warn, error or off (logs go to stderr)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error", "off"}));
  app.add_option("--log-file", log_file, "write logs to this file instead of stderr");

  std::string spec_path;
  std::string model;
  std::string record;
  size_t max_line = 64u << 20;
  CLI::App* acp = app.add_subcommand("acp", "serve an agent over ACP on stdin/stdout");
  acp->add_option("agent", spec_path, "agent spec (.yaml, .yml, .json) or a folder holding one")
      ->required();
  acp->add_option("--model", model, "override the spec's model (provider/model)");
  acp->add_option("--record", record, "mirror every protocol line in (>) and out (<) to FILE");
  size_t max_sessions = 1024;
  long cleanup_timeout_ms = 5000;
  acp->add_option("--cleanup-timeout-ms", cleanup_timeout_ms,
                  "how long a clean-up call to the editor (terminal/kill, output, release) may "
                  "wait for its answer (default 5000)");
  acp->add_option("--max-sessions", max_sessions,
                  "open sessions at most; session/new past it is refused (default 1024)");
  acp->add_option("--max-line-bytes", max_line, "longest accepted input line (default 64 MiB)")
      ->check(CLI::PositiveNumber);

  std::string validate_path;
  std::string validate_model;
  CLI::App* validate = app.add_subcommand("validate", "check an agent spec and exit");
  validate->add_option("agent", validate_path, "agent spec or folder")->required();
  validate->add_option("--model", validate_model, "override the spec's model");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "%s: %s\nRun 'lousho --help' for usage.\n",
                 lousho::ErrorCodeName(lousho::ErrorCode::kUsage), e.what());
    return 1;
  }
  lousho::log::Level level = lousho::log::Level::kWarn;
  lousho::log::ParseLevel(log_level, &level);
  lousho::log::Configure(level, log_file);

  if (validate->parsed()) {
    auto spec = Load(validate_path, validate_model);
    if (!spec.ok()) return Fail(spec.error());
    auto agent = lousho::agent::BuildAgent(*spec, ProcessEnv);
    if (!agent.ok()) return Fail(agent.error());
    std::printf("%s: ok (agent '%s', model %s, %zu tools)\n", spec->source.c_str(),
                spec->name.c_str(), spec->model.c_str(), (*agent)->tools.size());
    if ((*agent)->provider_error)
      std::printf("note: %s\n", (*agent)->provider_error->message.c_str());
    return 0;
  }

  auto spec = Load(spec_path, model);
  if (!spec.ok()) return Fail(spec.error());
  auto agent = lousho::agent::BuildAgent(*spec, ProcessEnv);
  if (!agent.ok()) return Fail(agent.error());
  if ((*agent)->provider_error) {
    const Error& e = *(*agent)->provider_error;
    lousho::log::Warn(e.ToString() + "; sessions will fail until it is set");
  }

  if (!record.empty()) {
    FILE* f = std::fopen(record.c_str(), "w");
    if (f == nullptr)
      return Fail(lousho::MakeError(lousho::ErrorCode::kUsage, "--record: cannot write " + record));
    std::fclose(f);
  }
  lousho::log::Info("serving agent '" + spec->name + "' (" + spec->model + ") over ACP");
  int stop_fd = InstallStopSignals();
  if (stop_fd < 0) lousho::log::Warn("cannot install signal handlers; signals end lousho at once");
  lousho::FdTransport transport(STDIN_FILENO, STDOUT_FILENO, max_line, stop_fd);
  lousho::acp::ServerOptions options;
  options.record_file = record;
  options.test_mode = ProcessEnv("LOUSHO_TEST_MODE").value_or("") == "1";
  options.version = LOUSHO_VERSION;
  options.max_sessions = max_sessions;
  options.cleanup_timeout_ms = cleanup_timeout_ms;
  lousho::acp::Server server(&transport, *agent, options);
  server.Run();
  if (g_stop_signal != 0) {
    const char* name = sigabbrev_np(g_stop_signal);
    lousho::log::Info(std::string("stopped by SIG") + (name ? name : "?") + "; sessions ended");
  }
  return 0;
}

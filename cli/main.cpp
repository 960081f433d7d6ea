// lousho's entry point: command line, subcommands, and wiring of the ACP door to the engine.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
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

int Fail(const Error& e) {
  std::fprintf(stderr, "%s: %s\n", e.code.c_str(), e.message.c_str());
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
    std::fprintf(stderr, "LOUSHO_USAGE: %s\nRun 'lousho --help' for usage.\n", e.what());
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
    lousho::log::Warn(e.code + ": " + e.message + "; sessions will fail until it is set");
  }

  if (!record.empty()) {
    FILE* f = std::fopen(record.c_str(), "w");
    if (f == nullptr)
      return Fail(lousho::MakeError("LOUSHO_USAGE", "--record: cannot write " + record));
    std::fclose(f);
  }
  lousho::log::Info("serving agent '" + spec->name + "' (" + spec->model + ") over ACP");
  lousho::FdTransport transport(STDIN_FILENO, STDOUT_FILENO, max_line);
  lousho::acp::ServerOptions options;
  options.record_file = record;
  options.test_mode = ProcessEnv("LOUSHO_TEST_MODE").value_or("") == "1";
  options.version = LOUSHO_VERSION;
  options.max_sessions = max_sessions;
  options.cleanup_timeout_ms = cleanup_timeout_ms;
  lousho::acp::Server server(&transport, *agent, options);
  server.Run();
  return 0;
}

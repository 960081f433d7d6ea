// lousho's entry point: the command line. Each subcommand lives in its own file (command.h).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/usage_error.h"
#include "support/log.h"
#include "support/posix.h"
#include "support/sandbox.h"

int main(int argc, char** argv) {
  // [sandbox] The launcher of confined commands in an editor's terminal (support/sandbox.h):
  // first, so the command inherits none of lousho's own settings (SIGPIPE ignored, the raised
  // open-file limit).
  if (argc > 1 && std::string_view(argv[1]) == "sandbox-exec")
    return lousho::RunSandboxLauncher(argc - 1, argv + 1);
  // A closed stdout must not kill us mid-turn; writes just fail.
  signal(SIGPIPE, SIG_IGN);
  // Before any thread: every open session holds descriptors (both doors; commands get the
  // limit back, support/posix.h).
  lousho::RaiseFileLimit();
  if (int rc = lousho::cli::RunRpcModeIfSelected(argc, argv); rc >= 0) return rc;
  lousho::cli::ReserveStdio();

  CLI::App app{"lousho: coding agents for editors, over the Agent Client Protocol", "lousho"};
  app.set_version_flag("--version", std::string("lousho ") + LOUSHO_VERSION);
  app.require_subcommand(1);
  std::string log_level = "warn";
  std::string log_file;
  app.add_option("--log-level", log_level, "debug, info, warn, error or off (logs go to stderr)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error", "off"}));
  app.add_option("--log-file", log_file, "write logs to this file instead of stderr");
  // Taken by RunRpcModeIfSelected before this parser runs; listed here so --help shows it.
  std::string mode;
  app.add_option("--mode", mode,
                 "rpc: serve an agent over the legacy RPC dialect (xcsh, omp, pi hosts) instead "
                 "of a subcommand; `lousho --mode rpc --help` lists its flags");

  std::vector<lousho::cli::Subcommand> commands;
  commands.push_back(lousho::cli::AddAcpCommand(app));
  commands.push_back(lousho::cli::AddValidateCommand(app));
  commands.push_back(lousho::cli::AddRulesCommand(app));
  commands.push_back(lousho::cli::AddMcpCommand(app));
  commands.push_back(lousho::cli::AddSkillsCommand(app));
  commands.push_back(lousho::cli::AddContextCommand(app));
  commands.push_back(lousho::cli::AddSetupCommand(app));
  commands.push_back(lousho::cli::AddRunCommand(app));  // issue 26: run and chat
  commands.push_back(lousho::cli::AddChatCommand(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "%s: %s\nRun 'lousho --help' for usage.\n",
                 lousho::ErrorCodeName(lousho::ErrorCode::kUsage),
                 lousho::cli::UsageErrorMessage(app, e).c_str());
    for (const auto& c : commands)  // issue 26: `lousho run` refuses a command line with 2
      if (c.app->parsed()) return c.usage_exit;
    return 1;
  }
  lousho::log::Level level = lousho::log::Level::kWarn;
  lousho::log::ParseLevel(log_level, &level);
  lousho::log::Configure(level, log_file);

  for (const auto& c : commands)
    if (c.app->parsed()) return c.run();
  return 1;
}

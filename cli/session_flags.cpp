#include "cli/session_flags.h"

#include "config/default_agent.h"
#include "support/env.h"

namespace lousho::cli {

void AddSessionFlags(CLI::App* app, SessionFlags& flags) {
  app->add_option("--model", flags.model, "override the spec's model (provider/model)");
  app->add_option("--mode", flags.mode, "permission mode: default, accept-edits, plan or bypass");
  app->add_option("--sandbox", flags.sandbox,
                  "commands' kernel sandbox: workspace-write, read-only or off, optionally with "
                  ",network=off (overrides the spec's `sandbox:`)");
  app->add_option("--session", flags.session, "continue this session (a file, or a saved id)");
  app->add_flag("-c,--continue", flags.continue_session,
                "continue the newest session of the working directory");
  app->add_flag("--no-session", flags.no_session, "save no session file");
  app->add_option("--session-dir", flags.session_dir,
                  "save session files under DIR (default: the spec's sessionDir, "
                  "$LOUSHO_HOME/sessions, ~/.lousho/sessions)");
}

Result<std::optional<agent::PermissionMode>> ModeFlag(const SessionFlags& flags) {
  if (flags.mode.empty()) return std::optional<agent::PermissionMode>();
  std::optional<agent::PermissionMode> mode = agent::ParsePermissionMode(flags.mode);
  if (!mode)
    return MakeError(ErrorCode::kUsage,
                     "--mode " + flags.mode + ": expected default, accept-edits, plan or bypass");
  return mode;
}

host::HostOptions HostOptionsFor(const SessionFlags& flags, const std::string& spec,
                                 const std::filesystem::path& cwd) {
  const config::AgentChoice choice = config::ChooseAgent(spec, ProcessEnv, cwd);
  host::HostOptions options =
      host::MakeHostOptions(choice, flags.model, flags.session_dir, flags.no_session, ProcessEnv);
  options.sandbox_flag = flags.sandbox;
  return options;
}

}  // namespace lousho::cli

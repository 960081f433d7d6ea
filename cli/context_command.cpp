// `lousho context [--cwd DIR] [--text] [AGENT]`: what a session opened in DIR would be given
// besides its history: each context file with why it was read, its size and what was cut or
// refused; the rules that always apply or apply to files; the environment; and, with --text,
// the context block itself. `lousho acp --print-agent` shows the same report.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.h"
#include "host/context/project_context.h"
#include "host/session_host.h"
#include "support/env.h"

namespace lousho::cli {
namespace fs = std::filesystem;

namespace {

struct ContextOptions {
  std::string spec_path;
  std::string cwd;
  bool text = false;
};

int RunContext(const ContextOptions& o) {
  std::error_code ec;
  const fs::path cwd =
      fs::weakly_canonical(o.cwd.empty() ? fs::current_path(ec) : fs::path(o.cwd), ec);
  if (ec || !fs::is_directory(cwd, ec))
    return Fail(MakeError(ErrorCode::kUsage, "--cwd: no such directory: " + o.cwd));
  const config::AgentChoice choice = config::ChooseAgent(o.spec_path, ProcessEnv, cwd.string());
  host::SessionHost host(host::MakeHostOptions(choice, "", "", true, ProcessEnv));
  Status loaded = host.Load();
  if (!loaded.ok()) return Fail(loaded.error());
  std::printf("agent: %s (%s)\n",
              choice.source == config::AgentSource::kBuiltin ? "built-in coding agent"
                                                             : choice.path.c_str(),
              choice.reason.c_str());
  PrintContextReport(host, cwd, o.text);
  return 0;
}

}  // namespace

void PrintContextReport(const host::SessionHost& host, const fs::path& cwd, bool text) {
  const host::context::ContextReport report =
      host::context::BuildContext(host.ContextInputsFor(cwd, {}));
  std::printf("context of a session in %s:\n%s", cwd.string().c_str(),
              host::context::DescribeReport(report).c_str());
  if (text) std::printf("\n%s", report.context.text.c_str());
}

Subcommand AddContextCommand(CLI::App& app) {
  auto o = std::make_shared<ContextOptions>();
  CLI::App* cmd = app.add_subcommand(
      "context", "show which context files, rules and environment a session's prompt would hold");
  cmd->add_option("agent", o->spec_path,
                  "agent spec or folder; default: as `lousho acp` chooses (LOUSHO_AGENT, "
                  ".lousho/agent.yaml, the user's agent.yaml, the built-in agent)");
  cmd->add_option("--cwd", o->cwd, "the session's working folder (default: the current one)");
  cmd->add_flag("--text", o->text, "also print the context block as the model would get it");
  return {cmd, [o] { return RunContext(*o); }};
}

}  // namespace lousho::cli

// The command line's shared pieces: every subcommand lives in its own file, registers its options
// on the app (Add*Command) and returns what runs it once the line is parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/agent_spec.h"
#include "support/status.h"

namespace lousho::host {
class SessionHost;
}
namespace lousho::agent {
struct LoadedAgent;
}

namespace lousho::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // called when `app` was the parsed subcommand
  int usage_exit = 1;        // the exit code of a command line it refuses (`run`: 2)
};

// Prints "CODE: message" on stderr and returns the exit code 1.
int Fail(const Error& e);

// Loads a spec with the built-in tool names known and an optional model override.
Result<config::AgentSpec> LoadSpec(const std::string& path, const std::string& model);

// Opens /dev/null on whichever of descriptors 0, 1 and 2 is closed, so that no file or pipe
// lousho opens later takes their number (a closed stdin would otherwise become, say, the stop
// signals' pipe, and the server would wait on it forever instead of seeing end of input).
void ReserveStdio();

// Installs the stop handlers (SIGTERM, SIGINT, SIGHUP); returns the read end of their self-pipe,
// or -1. StopSignal() is the signal that arrived, 0 if none.
int InstallStopSignals();
int StopSignal();

// Top-level modes, chosen by a flag rather than a subcommand: runs the mode and returns its exit
// code when argv selects it (`--mode rpc`), else -1.
int RunRpcModeIfSelected(int argc, char** argv);
// `lousho setup`: the interactive terminal setup of model access (setup_command.cpp).
struct SetupOptions {
  std::string provider;   // anthropic | openai | gemini | openai-compatible; empty: ask
  std::string base_url;   // openai-compatible; empty: ask
  std::string model;      // empty: the provider's default (openai-compatible: ask)
  bool no_check = false;  // store the key without the check request (offline, behind a proxy)
};
int RunSetup(const SetupOptions& options);

Subcommand AddAcpCommand(CLI::App& app);
Subcommand AddSetupCommand(CLI::App& app);
Subcommand AddValidateCommand(CLI::App& app);
Subcommand AddRulesCommand(CLI::App& app);
Subcommand AddMcpCommand(CLI::App& app);
// `lousho mcp login|logout <server>` (mcp_login_command.cpp), added to `mcp`.
void AddMcpLoginCommands(CLI::App* mcp, std::function<int()>* run);
Subcommand AddSkillsCommand(CLI::App& app);
Subcommand AddContextCommand(CLI::App& app);
// `lousho run` (run_command.cpp, local/).
Subcommand AddRunCommand(CLI::App& app);
// `lousho chat` (chat_command.cpp, cli/chat/).
Subcommand AddChatCommand(CLI::App& app);

// Prints "status: ready" or "status: not ready: <what to set or run>" for `a` (acp_command.cpp):
// `lousho acp --print-agent` and `lousho validate` say the same.
void PrintReadiness(const agent::LoadedAgent& a);

// Prints what a session of `host`'s agent in `cwd` would be given as context (context_command.cpp);
// with `text`, the context block itself too.
void PrintContextReport(const host::SessionHost& host, const std::filesystem::path& cwd, bool text);

}  // namespace lousho::cli

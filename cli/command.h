// The command line's shared pieces: every subcommand lives in its own file, registers its options
// on the app (Add*Command) and returns what runs it once the line is parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "config/agent_spec.h"
#include "support/status.h"

namespace lousho::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // called when `app` was the parsed subcommand
};

// Prints "CODE: message" on stderr and returns the exit code 1.
int Fail(const Error& e);

// Loads a spec with the built-in tool names known and an optional model override.
Result<config::AgentSpec> LoadSpec(const std::string& path, const std::string& model);

// Installs the stop handlers (SIGTERM, SIGINT, SIGHUP); returns the read end of their self-pipe,
// or -1. StopSignal() is the signal that arrived, 0 if none.
int InstallStopSignals();
int StopSignal();

// Top-level modes, chosen by a flag rather than a subcommand: runs the mode and returns its exit
// code when argv selects it (`--mode rpc`), else -1.
int RunRpcModeIfSelected(int argc, char** argv);

Subcommand AddAcpCommand(CLI::App& app);
Subcommand AddValidateCommand(CLI::App& app);
Subcommand AddRulesCommand(CLI::App& app);
Subcommand AddMcpCommand(CLI::App& app);

}  // namespace lousho::cli

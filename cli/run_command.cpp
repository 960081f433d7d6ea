// `lousho run [SPEC] "prompt"`: runs one prompt in the current folder and exits, for scripts and
// CI. The answer on stdout (or JSON lines with --json), progress on stderr, the exit code saying
// how it ended (local/run_prompt.h, docs/run.md). SPEC is looked up as `lousho acp` does.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/session_flags.h"
#include "host/session_choice.h"
#include "host/session_host.h"
#include "local/run_prompt.h"
#include "support/env.h"
#include "support/files.h"

namespace lousho::cli {
namespace {
namespace fs = std::filesystem;

struct RunOptions : SessionFlags {
  std::vector<std::string> args;  // [SPEC] [PROMPT]
  std::string agent_option;
  std::string file;  // -f
  bool json = false;
  std::vector<std::string> allow, deny;
  bool yes = false;
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "%s: %s\nRun 'lousho run --help' for usage.\n",
               ErrorCodeName(ErrorCode::kUsage), message.c_str());
  return local::kExitUsage;
}

// Whether `arg` names an agent spec: a folder, or a .yaml/.yml/.json file.
bool NamesSpec(const std::string& arg) {
  std::error_code ec;
  const fs::path p(arg);
  if (fs::is_directory(p, ec)) return true;
  const std::string ext = p.extension().string();
  return fs::is_regular_file(p, ec) && (ext == ".yaml" || ext == ".yml" || ext == ".json");
}

struct SpecAndPrompt {
  std::string spec;
  std::optional<std::string> prompt;  // none: from -f or stdin
};

// [SPEC] [PROMPT]: two arguments are both; one is the prompt, unless the prompt comes from -f or
// stdin (not a terminal) and it names a spec.
Result<SpecAndPrompt> SplitArgs(const RunOptions& o) {
  SpecAndPrompt out;
  out.spec = o.agent_option;
  std::vector<std::string> args = o.args;
  if (args.size() > 2) return MakeError(ErrorCode::kUsage, "expected [SPEC] [PROMPT]");
  const bool prompt_elsewhere = !o.file.empty() || isatty(STDIN_FILENO) == 0;
  if (args.size() == 2 || (args.size() == 1 && prompt_elsewhere && NamesSpec(args[0]))) {
    if (!out.spec.empty() && out.spec != args[0])
      return MakeError(ErrorCode::kUsage, "give the agent spec once (positional or --agent)");
    out.spec = args[0];
    args.erase(args.begin());
  }
  if (!args.empty() && args[0] != "-") out.prompt = args[0];
  if (out.prompt && !o.file.empty())
    return MakeError(ErrorCode::kUsage, "give the prompt once (argument or -f)");
  return out;
}

// The prompt: the argument, else -f's file ("-": stdin), else stdin when it is not a terminal.
Result<std::string> ReadPrompt(const RunOptions& o, const std::optional<std::string>& given) {
  std::string text;
  if (given) {
    text = *given;
  } else if (!o.file.empty() && o.file != "-") {
    auto read = ReadDiskFile(o.file);
    if (!read.ok())
      return MakeError(ErrorCode::kUsage, "-f " + o.file + ": " + read.error().message);
    text = std::move(*read);
  } else if (!o.file.empty() || isatty(STDIN_FILENO) == 0) {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return MakeError(ErrorCode::kUsage,
                     "no prompt: pass it as an argument, with -f FILE, or on stdin");
  return text;
}

// --allow / --deny into the gate's rules and the host's.
Status AddRules(const RunOptions& o, local::GateOptions* gate, host::HostOptions* host) {
  for (const auto& a : o.allow) {
    auto rule = local::ParseRuleFlag(a, agent::PermissionAction::kAllow);
    if (!rule.ok()) return MakeError(ErrorCode::kUsage, "--allow " + rule.error().message);
    gate->allow.push_back(*rule);
  }
  for (const auto& d : o.deny) {
    auto rule = local::ParseRuleFlag(d, agent::PermissionAction::kDeny);
    if (!rule.ok()) return MakeError(ErrorCode::kUsage, "--deny " + rule.error().message);
    host->rules_first.push_back(*rule);
  }
  return Status::Ok();
}

int RunRun(const RunOptions& o) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return Fail(MakeError(ErrorCode::kUsage, "cannot read the working directory"));
  auto split = SplitArgs(o);
  if (!split.ok()) return Usage(split.error().message);
  const host::SessionChoice choice{o.session, o.continue_session};
  if (Status st = host::CheckSessionChoice(choice, o.no_session); !st.ok())
    return Usage(st.error().message);
  local::RunRequest request;
  request.cwd = cwd;
  request.choice = choice;
  request.json = o.json;
  request.spinner = !o.json && isatty(STDERR_FILENO) != 0;
  request.gate.yes = o.yes;
  request.gate.cwd = cwd;
  auto mode = ModeFlag(o);
  if (!mode.ok()) return Usage(mode.error().message);
  request.mode = *mode;
  host::HostOptions host_options = HostOptionsFor(o, split->spec, cwd);
  if (Status st = AddRules(o, &request.gate, &host_options); !st.ok())
    return Usage(st.error().message);
  auto prompt = ReadPrompt(o, split->prompt);
  if (!prompt.ok()) return Usage(prompt.error().message);
  request.prompt = std::move(*prompt);

  host::SessionHost host(std::move(host_options));
  if (Status loaded = host.Load(); !loaded.ok()) return Fail(loaded.error());
  request.stop_fd = InstallStopSignals();
  return local::RunPrompt(host, request, stdout, stderr);
}

}  // namespace

Subcommand AddRunCommand(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand(
      "run", "run one prompt in the current folder and exit (for scripts and CI; docs/run.md)");
  run->add_option("args", o->args,
                  "[SPEC] [PROMPT]: the agent spec (as `lousho acp` takes it; default: the same "
                  "lookup) and the prompt (default: -f, else stdin)");
  run->add_option("--agent", o->agent_option, "the agent spec, as the positional argument");
  run->add_option("-f,--file", o->file, "read the prompt from FILE ('-': stdin)");
  run->add_flag("--json", o->json,
                "one JSON object per line on stdout: the events, then the result (docs/run.md)");
  run->add_option("--allow", o->allow,
                  "let calls that would ask run: TOOL or TOOL:PATTERN as in the spec's permission "
                  "rules (e.g. 'bash:git status*', 'write:docs/**'); repeatable")
      ->allow_extra_args(false);
  run->add_option("--deny", o->deny,
                  "refuse calls matching TOOL or TOOL:PATTERN, before the spec's rules; repeatable")
      ->allow_extra_args(false);
  run->add_flag("-y,--yes", o->yes,
                "allow every call that would ask (deny rules and the sandbox still apply)");
  AddSessionFlags(run, *o);
  return {run, [o] { return RunRun(*o); }, local::kExitUsage};
}

}  // namespace lousho::cli

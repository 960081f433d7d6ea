// The user's shell commands outside a turn, on the one subprocess runner.
#include "agent/shell_command.h"

#include <algorithm>

#include "support/subprocess.h"

namespace lousho::agent {
namespace {
// Lines as the hosts count them: the text split on newlines ("hi\n" is 2).
size_t CountLines(std::string_view s) {
  return s.empty() ? 0 : static_cast<size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
}
}  // namespace

Result<ShellCommandResult> RunShellCommand(const std::string& command,
                                           const std::filesystem::path& cwd,
                                           const std::function<void(std::string_view)>& on_output,
                                           const CancelToken& cancel) {
  SubprocessOptions so;
  so.argv = {"/bin/bash", "-c", command};
  so.cwd = cwd.string();
  so.max_output_bytes = kShellCommandMaxOutputBytes;
  so.cancel = cancel;
  size_t newlines = 0;  // over the whole output, not only the kept tail
  so.on_output = [&](std::string_view chunk) {
    newlines += static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    if (on_output) on_output(chunk);
  };
  auto r = RunSubprocess(so);
  if (!r.ok()) return r.error();
  ShellCommandResult out;
  out.output = std::move(r->output);
  out.exit_code = r->exit_code;
  out.cancelled = r->cancelled;
  out.truncated = r->truncated;
  out.total_bytes = r->total_bytes;
  out.total_lines = r->total_bytes == 0 ? 0 : newlines + 1;
  out.output_bytes = out.output.size();
  out.output_lines = CountLines(out.output);
  out.working_dir = cwd.string();
  return out;
}

Message ShellCommandMessage(const std::string& command, const ShellCommandResult& result) {
  std::string text = "The user ran a shell command:\n$ " + command + "\n";
  text += result.output;
  if (!result.output.empty() && result.output.back() != '\n') text += "\n";
  if (result.truncated) text += "[output truncated: only its end is shown]\n";
  if (result.cancelled)
    text += "[the command was cancelled]\n";
  else if (result.exit_code)
    text += "[exit code " + std::to_string(*result.exit_code) + "]\n";
  return Message::Custom("bashExecution", std::move(text), true);
}

}  // namespace lousho::agent

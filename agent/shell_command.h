// A shell command the user runs outside a turn (the RPC door's `bash`): its output streamed as it
// arrives, its result, and the context message the next prompt gives the model.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/content.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

struct ShellCommandResult {
  std::string output;            // merged stdout+stderr; the tail when truncated
  std::optional<int> exit_code;  // absent when a signal ended it
  bool cancelled = false;
  bool truncated = false;
  size_t total_bytes = 0;
  size_t total_lines = 0;
  size_t output_bytes = 0;
  size_t output_lines = 0;
  std::string working_dir;
};

inline constexpr size_t kShellCommandMaxOutputBytes = size_t{50} * 1024;

// Runs `command` with /bin/bash in `cwd` until it ends or `cancel` fires (then its process tree
// is killed). `on_output` (may be empty) gets each piece of output as it arrives. Blocks.
Result<ShellCommandResult> RunShellCommand(const std::string& command,
                                           const std::filesystem::path& cwd,
                                           const std::function<void(std::string_view)>& on_output,
                                           const CancelToken& cancel);

// The message that tells the model what the user ran and saw (a custom "bashExecution" message).
Message ShellCommandMessage(const std::string& command, const ShellCommandResult& result);

}  // namespace lousho::agent

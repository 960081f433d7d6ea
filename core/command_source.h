// Prompt commands from outside the agent (an MCP server's prompts): a tool source that also
// offers commands implements this too (ToolSet finds it when the source is added).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/content.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

// A prompt command a source offers, beside the session's own.
struct SourceCommand {
  std::string name;  // without '/'
  std::string description;
  std::string hint;  // input hint shown by editors; empty: takes no input
};

// Thread-safe: the doors list commands while the session's worker expands them.
class CommandSource {
 public:
  virtual ~CommandSource() = default;
  // The commands now, without waiting on anything outside.
  virtual std::vector<SourceCommand> Commands() const = 0;
  // The user's turn that `/name words...` stands for (on the session's worker, bounded by the
  // source's timeouts and `cancel`); nullopt when `name` is none of this source's commands.
  virtual std::optional<Result<std::vector<ContentBlock>>> ExpandCommand(
      const std::string& name, const std::vector<std::string>& words,
      const CancelToken& cancel) = 0;
  // Reads into a prompt the resources its links name, where they are this source's: a text
  // block that is exactly a Markdown link "[name](uri)" (as an editor's resource link arrives).
  virtual void ResolveLinks(std::vector<ContentBlock>& content, const CancelToken& cancel) = 0;
};

}  // namespace lousho::agent

// The tools a session offers: the agent's, the session's own (MCP, host tools) and those of tool
// sources whose set may change (MCP servers, refreshed before each model request).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/command_source.h"
#include "core/tool.h"
#include "support/cancel.h"

namespace lousho::agent {

// Thread-safe (the session's mutex).
class ToolSet {
 public:
  ToolSet(std::mutex& mu, std::vector<std::shared_ptr<Tool>> tools);
  ToolSet(const ToolSet&) = delete;
  ToolSet& operator=(const ToolSet&) = delete;

  // Adds a tool to this session only; a tool of the same name is replaced.
  void Add(std::shared_ptr<Tool> tool);
  // Removes this session's tool of that name; false when it has none.
  bool Remove(const std::string& name);
  // Adds tools that may change: their current set is taken before each model request, and the
  // source is closed when the session closes (or is destroyed). A source that is also a
  // CommandSource offers its commands through the three calls below.
  void AddSource(std::shared_ptr<ToolSource> source);
  std::vector<std::shared_ptr<Tool>> List() const;
  std::shared_ptr<Tool> Find(const std::string& name) const;

  // Takes the sources' current tools (the worker, before a model request).
  void Refresh(const CancelToken& cancel);
  // The sources' prompt commands (MCP prompts), in the sources' order.
  std::vector<SourceCommand> Commands() const;
  // The first source's expansion of `/name words...` (ToolSource::ExpandCommand); nullopt when
  // no source has that command.
  std::optional<Result<std::vector<ContentBlock>>> ExpandCommand(
      const std::string& name, const std::vector<std::string>& words, const CancelToken& cancel);
  // Every source resolves the links of a prompt to its resources (ToolSource::ResolveLinks).
  void ResolveLinks(std::vector<ContentBlock>& content, const CancelToken& cancel);
  void CloseSources();

 private:
  std::mutex& mu_;
  std::vector<std::shared_ptr<Tool>> tools_;
  std::vector<std::shared_ptr<ToolSource>> sources_;
  std::vector<std::shared_ptr<CommandSource>> command_sources_;  // the sources_ that are ones
  std::vector<std::string> source_tool_names_;  // the names in tools_ that came from sources_
};

}  // namespace lousho::agent

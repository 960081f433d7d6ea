// A session's tools and tool sources.
#include "agent/toolset.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace lousho::agent {

ToolSet::ToolSet(std::mutex& mu, std::vector<std::shared_ptr<Tool>> tools)
    : mu_(mu), tools_(std::move(tools)) {}

void ToolSet::Add(std::shared_ptr<Tool> tool) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : tools_)
    if (t->name() == tool->name()) {
      t = std::move(tool);
      return;
    }
  tools_.push_back(std::move(tool));
}

bool ToolSet::Remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tools_.begin(); it != tools_.end(); ++it)
    if ((*it)->name() == name) {
      tools_.erase(it);
      return true;
    }
  return false;
}

void ToolSet::AddSource(std::shared_ptr<ToolSource> source) {
  std::vector<std::shared_ptr<Tool>> now = source->CurrentTools(CancelToken());
  std::lock_guard<std::mutex> lock(mu_);
  // A source may bring tens of thousands of tools: each name is looked up in an index, not in
  // the whole list. A tool replaces every tool of its name; the others join at the end.
  std::unordered_map<std::string, std::vector<size_t>> at;
  at.reserve(tools_.size() + now.size());
  for (size_t i = 0; i < tools_.size(); ++i) at[tools_[i]->name()].push_back(i);
  for (auto& tool : now) {
    std::string name = tool->name();
    source_tool_names_.push_back(name);
    std::vector<size_t>& same = at[std::move(name)];
    for (size_t i : same) tools_[i] = tool;
    if (same.empty()) {
      same.push_back(tools_.size());
      tools_.push_back(std::move(tool));
    }
  }
  if (auto commands = std::dynamic_pointer_cast<CommandSource>(source))
    command_sources_.push_back(std::move(commands));
  sources_.push_back(std::move(source));
}

std::vector<std::shared_ptr<Tool>> ToolSet::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tools_;
}

std::shared_ptr<Tool> ToolSet::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& t : tools_)
    if (t->name() == name) return t;
  return nullptr;
}

void ToolSet::Refresh(const CancelToken& cancel) {
  std::vector<std::shared_ptr<ToolSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = sources_;
  }
  if (sources.empty()) return;
  std::vector<std::shared_ptr<Tool>> now;
  for (auto& s : sources) {
    auto tools = s->CurrentTools(cancel);
    now.insert(now.end(), tools.begin(), tools.end());
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Looked up in a set: the sources' tools may be tens of thousands.
  const std::unordered_set<std::string> from_source(source_tool_names_.begin(),
                                                    source_tool_names_.end());
  std::erase_if(tools_,
                [&](const std::shared_ptr<Tool>& t) { return from_source.count(t->name()); });
  source_tool_names_.clear();
  for (auto& t : now) {
    source_tool_names_.push_back(t->name());
    tools_.push_back(std::move(t));
  }
}

std::vector<SourceCommand> ToolSet::Commands() const {
  std::vector<std::shared_ptr<CommandSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = command_sources_;
  }
  std::vector<SourceCommand> out;
  for (const auto& s : sources) {
    auto more = s->Commands();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

std::optional<Result<std::vector<ContentBlock>>> ToolSet::ExpandCommand(
    const std::string& name, const std::vector<std::string>& words, const CancelToken& cancel) {
  std::vector<std::shared_ptr<CommandSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = command_sources_;
  }
  for (auto& s : sources)
    if (auto expanded = s->ExpandCommand(name, words, cancel)) return expanded;
  return std::nullopt;
}

void ToolSet::ResolveLinks(std::vector<ContentBlock>& content, const CancelToken& cancel) {
  std::vector<std::shared_ptr<CommandSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = command_sources_;
  }
  for (auto& s : sources) s->ResolveLinks(content, cancel);
}

void ToolSet::CloseSources() {
  std::vector<std::shared_ptr<ToolSource>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources.swap(sources_);
    command_sources_.clear();
  }
  for (auto& s : sources) s->Close();
}

}  // namespace lousho::agent

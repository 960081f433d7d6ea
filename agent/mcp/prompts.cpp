// MCP prompts as slash commands.
#include "agent/mcp/prompts.h"

#include <algorithm>

#include "agent/mcp/resources.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent::mcp {
namespace {

std::string NoBlanks(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; },
      '-');
  return s;
}

std::string Usage(const PromptInfo& prompt, const std::string& command) {
  const std::string hint = PromptHint(prompt);
  return "usage: /" + command + (hint.empty() ? "" : " " + hint);
}

// The argument named by `word` ("key=value" with a declared key), or nullptr.
const PromptArgument* NamedArgument(const PromptInfo& prompt, const std::string& word,
                                    std::string* value) {
  const size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return nullptr;
  const std::string key = word.substr(0, eq);
  for (const auto& a : prompt.arguments) {
    if (a.name != key) continue;
    *value = word.substr(eq + 1);
    return &a;
  }
  return nullptr;
}

}  // namespace

std::vector<PromptInfo> PromptsFrom(const Json::Value& list) {
  std::vector<PromptInfo> out;
  for (Json::ArrayIndex i = 0; list.isArray() && i < list.size(); ++i) {
    const Json::Value& p = ElementOrNull(list, i);
    PromptInfo info;
    info.name = StringOr(p, "name");
    if (info.name.empty()) continue;
    info.title = StringOr(p, "title");
    info.description = StringOr(p, "description");
    const Json::Value& args = MemberOrNull(p, "arguments");
    for (Json::ArrayIndex j = 0; args.isArray() && j < args.size(); ++j) {
      const Json::Value& a = ElementOrNull(args, j);
      PromptArgument arg;
      arg.name = StringOr(a, "name");
      if (arg.name.empty()) continue;
      arg.description = StringOr(a, "description");
      arg.required = BoolOr(a, "required", false);
      info.arguments.push_back(std::move(arg));
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string PromptCommandName(const std::string& server, const std::string& prompt) {
  return "mcp:" + NoBlanks(server) + ":" + NoBlanks(prompt);
}

std::string PromptHint(const PromptInfo& prompt) {
  std::string hint;
  for (const auto& a : prompt.arguments) {
    if (!hint.empty()) hint += ' ';
    hint += a.required ? a.name : "[" + a.name + "]";
  }
  return hint;
}

Result<Json::Value> PromptArguments(const PromptInfo& prompt, const std::string& command,
                                    const std::vector<std::string>& words) {
  Json::Value args(Json::objectValue);
  if (prompt.arguments.empty()) {
    if (words.empty()) return args;
    return MakeError(ErrorCode::kInvalidParams,
                     "/" + command + " takes no arguments; " + Usage(prompt, command));
  }
  std::vector<const std::string*> positional;
  for (const auto& w : words) {
    std::string value;
    if (const PromptArgument* named = NamedArgument(prompt, w, &value)) {
      args[named->name] = value;
    } else {
      positional.push_back(&w);
    }
  }
  // The words left fill the arguments not named, in order; the last one takes the rest.
  std::vector<const PromptArgument*> free;
  for (const auto& a : prompt.arguments)
    if (FindMember(args, a.name) == nullptr) free.push_back(&a);
  for (size_t i = 0; i < positional.size() && !free.empty(); ++i) {
    const size_t slot = std::min(i, free.size() - 1);
    const std::string& name = free[slot]->name;
    args[name] = FindMember(args, name) != nullptr ? StringOr(args, name) + " " + *positional[i]
                                                   : *positional[i];
  }
  if (free.empty() && !positional.empty())
    return MakeError(ErrorCode::kInvalidParams, "/" + command +
                                                    ": every argument was given by name, and "
                                                    "more words followed (" +
                                                    Usage(prompt, command) + ")");
  std::string missing;
  for (const auto& a : prompt.arguments) {
    if (!a.required || FindMember(args, a.name) != nullptr) continue;
    missing += (missing.empty() ? "" : ", ") + a.name +
               (a.description.empty() ? "" : " (" + a.description + ")");
  }
  if (!missing.empty())
    return MakeError(ErrorCode::kInvalidParams,
                     "/" + command + " needs " + missing + "; " + Usage(prompt, command));
  return args;
}

std::vector<ContentBlock> PromptContent(const Json::Value& result) {
  std::vector<ContentBlock> out;
  const Json::Value& messages = MemberOrNull(result, "messages");
  for (Json::ArrayIndex i = 0; messages.isArray() && i < messages.size(); ++i) {
    const Json::Value& m = ElementOrNull(messages, i);
    ContentBlock block = McpContentBlock(MemberOrNull(m, "content"));
    if (StringOr(m, "role") == "assistant" && block.type == BlockType::kText)
      block.text = "[The assistant said:] " + block.text;
    out.push_back(std::move(block));
  }
  if (out.empty()) out.push_back(ContentBlock::Text("[the MCP prompt has no messages]"));
  return out;
}

namespace {
bool SameCommands(const std::vector<SourceCommand>& a, const std::vector<SourceCommand>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && x.description == y.description && x.hint == y.hint;
  });
}
}  // namespace

bool PromptCatalog::Load(const std::shared_ptr<Client>& client, const CancelToken& cancel) {
  const std::vector<SourceCommand> before = Commands();
  std::vector<PromptInfo> prompts;
  if (MemberOrNull(client->capabilities(), "prompts").isObject()) {
    auto listed = client->ListPrompts(cancel);
    if (listed.ok()) {
      prompts = PromptsFrom(*listed);
    } else {
      log::Warn("MCP server '" + client->name() +
                "': its prompts are not offered: " + listed.error().message);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(entries_, [&](const Entry& e) { return e.client->name() == client->name(); });
    for (auto& p : prompts) {
      std::string command = PromptCommandName(client->name(), p.name);
      entries_.push_back(Entry{client, std::move(p), std::move(command)});
    }
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.command < b.command; });
  }
  return !SameCommands(before, Commands());
}

std::vector<SourceCommand> PromptCatalog::Commands() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SourceCommand> out;
  for (const auto& e : entries_) {
    SourceCommand c;
    c.name = e.command;
    c.description = e.info.description.empty() ? e.info.title : e.info.description;
    if (c.description.empty()) c.description = "Prompt " + e.info.name + " of " + e.client->name();
    c.hint = PromptHint(e.info);
    // Two prompts whose names differ only in blanks: the first keeps the name.
    if (!out.empty() && out.back().name == c.name) continue;
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<Result<std::vector<ContentBlock>>> PromptCatalog::Expand(
    const std::string& command, const std::vector<std::string>& words,
    const CancelToken& cancel) const {
  Entry entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry& e) { return e.command == command; });
    if (it == entries_.end()) return std::nullopt;
    entry = *it;
  }
  auto args = PromptArguments(entry.info, command, words);
  if (!args.ok()) return Result<std::vector<ContentBlock>>(args.error());
  auto got = entry.client->GetPrompt(entry.info.name, *args, cancel);
  if (!got.ok()) return Result<std::vector<ContentBlock>>(got.error());
  return Result<std::vector<ContentBlock>>(PromptContent(*got));
}

}  // namespace lousho::agent::mcp

// Built-in slash commands: lookup and parsing of a prompt that calls one.
#include "agent/builtin_commands.h"

namespace lousho::agent {

const BuiltinCommand* FindBuiltinCommand(const std::string& name) {
  for (const auto& c : kBuiltinCommands)
    if (name == c.name) return &c;
  return nullptr;
}

std::optional<CommandCall> ParseBuiltinCall(const std::vector<ContentBlock>& content) {
  if (content.empty() || content[0].type != BlockType::kText) return std::nullopt;
  const std::string& text = content[0].text;
  if (text.size() < 2 || text[0] != '/') return std::nullopt;
  const size_t end = text.find_first_of(" \t\r\n", 1);
  const BuiltinCommand* cmd =
      FindBuiltinCommand(text.substr(1, end == std::string::npos ? std::string::npos : end - 1));
  if (cmd == nullptr) return std::nullopt;
  CommandCall call;
  call.command = cmd;
  if (end != std::string::npos) {
    const size_t b = text.find_first_not_of(" \t\r\n", end);
    const size_t e = text.find_last_not_of(" \t\r\n");
    if (b != std::string::npos) call.args = text.substr(b, e - b + 1);
  }
  return call;
}

}  // namespace lousho::agent

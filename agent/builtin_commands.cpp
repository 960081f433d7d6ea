// Built-in slash commands: their handlers, lookup and parsing of a prompt that calls one.
#include "agent/builtin_commands.h"

namespace lousho::agent {

namespace builtin {

bool Compact(CommandHost& host, const std::string& args) {
  // A failure is shown by the compaction's end event; the prompt itself went as asked.
  return !host.Compact(args);
}

bool Model(CommandHost& host, const std::string& args) {
  std::string offered;
  for (const std::string& id : host.OfferedModels()) offered += "\n- " + id;
  const std::string available = offered.empty() ? "" : "\nAvailable:" + offered;
  if (args.empty()) {
    host.Note("Current model: " + host.CurrentModel() + available);
  } else if (Status st = host.SelectModel(args); !st.ok()) {
    host.Note(st.error().message + available);
  } else {
    host.Note("Model: " + args);
  }
  return false;
}

bool Name(CommandHost& host, const std::string& args) {
  if (args.empty()) {
    const std::string current = host.Name();
    host.Note(current.empty() ? "This session has no name yet; /name <title> gives it one."
                              : "This session is named \"" + current + "\".");
  } else if (Status st = host.SetName(args); !st.ok()) {
    host.Note("/name: " + st.error().message);
  } else {
    host.Note("Session named \"" + args + "\".");
  }
  return false;
}

bool Export(CommandHost& host, const std::string& args) {
  auto path = host.Export(args);
  host.Note(path.ok() ? "Exported this session to " + path->string()
                      : "/export: " + path.error().message);
  return false;
}

bool Rewind(CommandHost& host, const std::string& args) {
  size_t n = 1;
  if (!args.empty()) {
    n = 0;
    for (char c : args) {
      if (c < '0' || c > '9' || n > 100000) {
        host.Note("/rewind: give a number of messages to go back, e.g. /rewind 2");
        return false;
      }
      n = n * 10 + static_cast<size_t>(c - '0');
    }
  }
  auto done = host.Rewind(n);
  host.Note(done.ok()
                ? DescribeRewind(*done) + "\nYour message, to edit and send again:\n" + done->text
                : "/rewind: " + done.error().message);
  return false;
}

}  // namespace builtin

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

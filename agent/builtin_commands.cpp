// Built-in slash commands: the table and what each one does through the Session API.
#include "agent/builtin_commands.h"

#include "agent/session.h"

namespace lousho::agent {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

Result<std::string> RunName(Session& session, const std::string& args) {
  const std::string name = Trim(args);
  if (name.empty()) {
    const std::string current = session.Name();
    return current.empty() ? "This session has no name yet; /name <title> gives it one."
                           : "This session is named \"" + current + "\".";
  }
  if (Status st = session.SetName(name); !st.ok()) return st.error();
  return "Session named \"" + name + "\".";
}

Result<std::string> RunExport(Session& session, const std::string& args) {
  auto path = session.ExportHtml(Trim(args));
  if (!path.ok()) return path.error();
  return "Exported this session to " + path->string();
}

}  // namespace

const std::vector<BuiltinCommand>& BuiltinCommands() {
  static const std::vector<BuiltinCommand> kCommands = {
      {"name", "Name this session", "title", &RunName},
      {"export", "Save this session as an HTML page", "path (optional)", &RunExport},
  };
  return kCommands;
}

const BuiltinCommand* FindBuiltinCommand(const std::string& name) {
  for (const auto& c : BuiltinCommands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace lousho::agent

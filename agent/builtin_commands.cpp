// Built-in slash commands: their handlers, lookup and parsing of a prompt that calls one.
#include "agent/builtin_commands.h"

#include <algorithm>

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

std::vector<config::SlashCommand> SessionCommands(const std::vector<config::SlashCommand>& spec,
                                                  const std::vector<config::SlashCommand>& files,
                                                  std::vector<std::string>* shadowed) {
  std::vector<config::SlashCommand> out;
  auto from = [](const config::SlashCommand& c) {
    return c.file.empty() ? std::string("the spec") : c.file;
  };
  for (const auto* list : {&spec, &files}) {
    for (const auto& c : *list) {
      if (FindBuiltinCommand(c.name)) {
        shadowed->push_back("/" + c.name + " (" + from(c) +
                            ") is shadowed by the built-in command of that name");
        continue;
      }
      auto same = std::find_if(out.begin(), out.end(),
                               [&](const config::SlashCommand& o) { return o.name == c.name; });
      if (same != out.end()) {
        shadowed->push_back("/" + c.name + " (" + from(c) + ") is shadowed by /" + same->name +
                            " (" + from(*same) + ")");
        continue;
      }
      out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> ArgumentWords(const std::string& args) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : args) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

std::string TrimBlanks(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

std::string SubstituteArguments(const std::string& text, const std::string& args) {
  const std::vector<std::string> words = ArgumentWords(args);
  std::string out;
  bool used = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
    } else if (text.compare(i + 1, 9, "ARGUMENTS") == 0) {
      out += args;
      used = true;
      i += 9;
    } else if (text[i + 1] == '@') {
      out += args;
      used = true;
      ++i;
    } else if (text[i + 1] >= '1' && text[i + 1] <= '9') {
      const size_t n = static_cast<size_t>(text[i + 1] - '1');
      if (n < words.size()) out += words[n];
      used = true;
      ++i;
    } else {
      out += text[i];
    }
  }
  if (!used && !args.empty()) out += "\n\n" + args;
  return out;
}

std::vector<ContentBlock> ExpandPromptCommand(const std::vector<config::SlashCommand>& commands,
                                              std::vector<ContentBlock> content) {
  if (content.empty() || content[0].type != BlockType::kText) return content;
  const std::string& text = content[0].text;
  if (text.size() < 2 || text[0] != '/') return content;
  const size_t end = text.find_first_of(" \t\n", 1);
  const std::string name = text.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  for (const auto& cmd : commands) {
    if (cmd.name != name) continue;
    const std::string args = end == std::string::npos ? "" : text.substr(end + 1);
    if (!cmd.file.empty()) {
      content[0].text = SubstituteArguments(cmd.prompt, TrimBlanks(args));
      break;
    }
    std::string prompt = cmd.prompt;
    const std::string key = "{{args}}";
    const size_t pos = prompt.find(key);
    if (pos != std::string::npos) {
      prompt.replace(pos, key.size(), args);
    } else if (!args.empty()) {
      prompt += "\n\n" + args;
    }
    content[0].text = prompt;
    break;
  }
  return content;
}

std::vector<config::SlashCommand> OfferedCommands(const std::vector<config::SlashCommand>& session,
                                                  const std::vector<SourceCommand>& sources) {
  std::vector<config::SlashCommand> out = session;
  for (const auto& c : sources) {
    const bool taken = FindBuiltinCommand(c.name) != nullptr ||
                       std::any_of(out.begin(), out.end(),
                                   [&](const config::SlashCommand& o) { return o.name == c.name; });
    if (taken) continue;
    config::SlashCommand cmd;
    cmd.name = c.name;
    cmd.description = c.description;
    cmd.hint = c.hint;
    out.push_back(std::move(cmd));
  }
  return out;
}

std::optional<SourceCall> ParseSourceCall(const std::vector<config::SlashCommand>& commands,
                                          const std::vector<ContentBlock>& content) {
  if (content.empty() || content[0].type != BlockType::kText) return std::nullopt;
  const std::string& text = content[0].text;
  if (text.size() < 2 || text[0] != '/') return std::nullopt;
  const size_t end = text.find_first_of(" \t\r\n", 1);
  SourceCall call;
  call.name = text.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  if (FindBuiltinCommand(call.name) != nullptr) return std::nullopt;
  for (const auto& c : commands)
    if (c.name == call.name) return std::nullopt;
  if (end != std::string::npos) call.args = TrimBlanks(text.substr(end));
  return call;
}

}  // namespace lousho::agent

// The system prompt's parts: the editor's prompt, the session's context, file rules.
#include "agent/session_context.h"

#include "support/json_util.h"

namespace lousho::agent {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kRuleTagStart = "<rule name=\"";

std::optional<ClientPrompt> PromptOfEntry(const Entry& e) {
  if (e.kind != EntryKind::kCustom || e.more->custom_type != kClientPromptEntryType)
    return std::nullopt;
  auto text = AsString(MemberOrNull(e.more->data, "text"));
  auto mode = AsString(MemberOrNull(e.more->data, "mode"));
  if (!text || !mode || (*mode != "append" && *mode != "override")) return std::nullopt;
  return ClientPrompt{
      *mode == "override" ? ClientPrompt::Mode::kOverride : ClientPrompt::Mode::kAppend, *text};
}

std::string Attribute(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\n') c = '\'';
  return s;
}

// The first of `paths` one of the rule's globs matches; null: none.
const std::string* FirstMatch(const rules::Rule& r, const std::vector<std::string>& paths) {
  for (const std::string& p : paths)
    for (const Glob& g : r.glob_matchers)
      if (g.Match(p)) return &p;
  return nullptr;
}

}  // namespace

const char* ClientPromptModeId(ClientPrompt::Mode mode) {
  return mode == ClientPrompt::Mode::kOverride ? "override" : "append";
}

std::string ComposeSystemPrompt(const std::string& instructions,
                                const std::optional<ClientPrompt>& client,
                                const std::string& context, const fs::path& cwd,
                                const std::vector<std::string>& tool_names) {
  const bool override = client && client->mode == ClientPrompt::Mode::kOverride;
  std::string s = override ? client->text : instructions;
  auto part = [&s](const std::string& text) {
    if (text.empty()) return;
    if (!s.empty() && s.back() != '\n') s += "\n";
    if (!s.empty()) s += "\n";
    s += text;
  };
  if (client && !override) part(client->text);
  part(context);
  if (!s.empty() && s.back() != '\n') s += "\n";
  s += "\nWorking directory: " + cwd.string() + "\n";
  if (!tool_names.empty()) {
    s += "Tools available: ";
    for (size_t i = 0; i < tool_names.size(); ++i) s += (i ? ", " : "") + tool_names[i];
    s += "\n";
  }
  return s;
}

Entry ClientPromptEntry(const ClientPrompt& prompt) {
  Entry e;
  e.kind = EntryKind::kCustom;
  e.more.Edit().custom_type = kClientPromptEntryType;
  e.more.Edit().data = Json::Value(Json::objectValue);
  e.more.Edit().data["mode"] = ClientPromptModeId(prompt.mode);
  e.more.Edit().data["text"] = prompt.text;
  return e;
}

std::optional<ClientPrompt> ChooseClientPrompt(const std::vector<Entry>& seed,
                                               const std::optional<ClientPrompt>& given,
                                               bool* record) {
  std::optional<ClientPrompt> stored;
  for (const Entry& e : seed)
    if (auto p = PromptOfEntry(e)) stored = std::move(p);
  *record = given && !(stored && *stored == *given);
  return given ? given : stored;
}

FileRules::FileRules(std::vector<rules::Rule> rules, fs::path cwd, std::string home)
    : rules_(std::move(rules)), cwd_(std::move(cwd)), home_(std::move(home)) {}

void FileRules::Restore(const MessageView& messages) {
  for (const Message& m : messages) {
    if (m.custom_type != kFileRuleMessageType) continue;
    const std::string text = m.TextContent();
    if (text.rfind(kRuleTagStart, 0) != 0) continue;
    const size_t end = text.find('"', kRuleTagStart.size());
    if (end != std::string::npos)
      added_.insert(text.substr(kRuleTagStart.size(), end - kRuleTagStart.size()));
  }
}

std::vector<Message> FileRules::Due(const Message& assistant) {
  std::vector<Message> out;
  if (rules_.empty()) return out;
  for (const ContentBlock& b : assistant.content) {
    if (b.type != BlockType::kToolCall) continue;
    const std::vector<std::string> paths = rules::CandidatePaths(b.arguments(), cwd_);
    for (const rules::Rule& r : rules_) {
      const std::string name = Attribute(r.name);
      if (added_.count(name)) continue;
      const std::string* hit = FirstMatch(r, paths);
      if (!hit) continue;
      added_.insert(name);
      out.push_back(Message::Custom(kFileRuleMessageType,
                                    std::string(kRuleTagStart) + name + "\" file=\"" +
                                        Attribute(rules::ShownPath(r.path, cwd_, home_)) +
                                        "\" applies-to=\"" + Attribute(*hit) + "\">\n" + r.content +
                                        "\n</rule>",
                                    false));
    }
  }
  return out;
}

}  // namespace lousho::agent

// Reading subagents: the spec's `agents:` and the fields of agent files.
#include "config/agents_spec.h"

#include <algorithm>
#include <array>
#include <utility>

#include "support/json_util.h"
#include "support/text.h"

namespace lousho::config {

namespace {

// Claude Code's tool names, as lousho's.
constexpr std::array<std::pair<const char*, const char*>, 9> kForeignToolNames{
    {{"Read", "read"},
     {"Grep", "grep"},
     {"Glob", "find"},
     {"LS", "ls"},
     {"Bash", "bash"},
     {"Edit", "edit"},
     {"MultiEdit", "edit"},
     {"Write", "write"},
     {"TodoWrite", "todo"}}};

bool ValidAgentName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::string ToolNameOf(const std::string& written) {
  for (const auto& [theirs, ours] : kForeignToolNames)
    if (written == theirs) return ours;
  return written;
}

// `tools`: a list of names, or one string of names separated by commas (Claude Code's files).
Result<std::vector<std::string>> ToolList(const Json::Value& v, const std::string& where,
                                          const std::vector<std::string>& known_tools) {
  std::vector<std::string> written;
  if (std::optional<std::string> s = AsString(v)) {
    std::string cur;
    for (char c : *s + ",") {
      if (c != ',') {
        cur += c;
        continue;
      }
      std::string name = TrimSpace(cur);
      if (!name.empty()) written.push_back(name);
      cur.clear();
    }
  } else if (v.isArray()) {
    for (const auto& item : v) {
      std::optional<std::string> name = AsString(item);
      if (!name) return MakeError(ErrorCode::kConfigInvalid, where + ": expected tool names");
      written.push_back(*name);
    }
  } else {
    return MakeError(ErrorCode::kConfigInvalid, where + ": expected a list of tool names");
  }
  std::vector<std::string> out;
  for (const std::string& w : written) {
    std::string name = ToolNameOf(w);
    if (!known_tools.empty() &&
        std::find(known_tools.begin(), known_tools.end(), name) == known_tools.end())
      return MakeError(ErrorCode::kConfigInvalid, where + ": unknown tool '" + w + "'");
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

// `model`: "provider/model"; "inherit" (Claude Code) or nothing: the parent's.
Result<std::string> ModelOf(const Json::Value& v, const std::string& where) {
  if (v.isNull()) return std::string();
  std::optional<std::string> s = AsString(v);
  if (!s) return MakeError(ErrorCode::kConfigInvalid, where + ": expected \"provider/model\"");
  if (*s == "inherit" || s->empty()) return std::string();
  const size_t slash = s->find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s->size())
    return MakeError(ErrorCode::kConfigInvalid,
                     where + ": expected \"provider/model\" or \"inherit\", got '" + *s + "'");
  return *s;
}

Status CheckAgentKeys(const Json::Value& fields, const std::string& where) {
  static const std::vector<std::string> kKeys = {
      "name",     "description", "instructions", "prompt",     "model",
      "thinking", "tools",       "permissions",  "permission", "color"};
  for (const std::string& key : MemberNames(fields))
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      return MakeError(
          ErrorCode::kConfigInvalid,
          where + ": unknown key '" + key + "' (known keys: " + JoinStrings(kKeys, ", ") + ")");
  return {};
}

Status ReadSetting(const std::string& key, const Json::Value& v, const std::string& where,
                   SubagentsSpec& out) {
  if (key == "tool_name") {
    std::optional<std::string> s = AsString(v);
    if (!s || !ValidAgentName(*s))
      return MakeError(ErrorCode::kConfigInvalid, where + ": expected a tool name");
    out.tool_name = *s;
    return {};
  }
  if (key == "general_purpose") {
    std::optional<bool> b = AsBool(v);
    if (!b) return MakeError(ErrorCode::kConfigInvalid, where + ": expected true or false");
    out.general_purpose = *b;
    return {};
  }
  if (key != "max_depth" && key != "max_parallel" && key != "max_result_bytes")
    return MakeError(ErrorCode::kConfigInvalid,
                     where +
                         ": an agent is a map of its settings; the other keys are tool_name, "
                         "max_depth, max_parallel, max_result_bytes and general_purpose");
  std::optional<long long> n = AsInt64(v);
  if (key == "max_depth" && n && *n >= 0 && *n <= 8) {
    out.max_depth = static_cast<int>(*n);
  } else if (key == "max_parallel" && n && *n >= 1 && *n <= 32) {
    out.max_parallel = static_cast<int>(*n);
  } else if (key == "max_result_bytes" && n && *n >= 1024 && *n <= (1LL << 24)) {
    out.max_result_bytes = static_cast<size_t>(*n);
  } else {
    return MakeError(ErrorCode::kConfigInvalid, where + ": expected " +
                                                    (key == "max_depth"      ? "0 to 8"
                                                     : key == "max_parallel" ? "1 to 32"
                                                                             : "1024 to 16777216"));
  }
  return {};
}

}  // namespace

SubagentSpec GeneralPurposeAgent() {
  SubagentSpec a;
  a.name = "general-purpose";
  a.description =
      "A general-purpose agent for researching questions, searching code and carrying out "
      "tasks of several steps; it has the same tools as you.";
  a.instructions =
      "You are a subagent: another agent gave you a task. Do it with the tools you have, then "
      "answer with what you found or did, concisely and completely: your last message is all "
      "the other agent sees.";
  a.source = "built-in";
  return a;
}

Result<SubagentSpec> SubagentFromFields(const std::string& name, const Json::Value& fields,
                                        std::string instructions, const std::string& source,
                                        const std::vector<std::string>& known_tools) {
  if (!fields.isObject())
    return MakeError(ErrorCode::kConfigInvalid, source + ": expected a map of agent settings");
  if (Status keys = CheckAgentKeys(fields, source); !keys.ok()) return keys.error();
  SubagentSpec a;
  a.name = StringOr(fields, "name", name);
  if (!ValidAgentName(a.name))
    return MakeError(ErrorCode::kConfigInvalid,
                     source + ": agent name '" + a.name +
                         "': lowercase letters, digits, '-' and '_' (at most 64)");
  a.source = source;
  a.description = StringOr(fields, "description");
  if (a.description.empty())
    return MakeError(ErrorCode::kConfigInvalid,
                     source + ": a description is needed (the model chooses by it)");
  a.instructions = std::move(instructions);
  if (a.instructions.empty())
    a.instructions = StringOr(fields, "instructions", StringOr(fields, "prompt"));
  Result<std::string> model = ModelOf(MemberOrNull(fields, "model"), source + ": model");
  if (!model.ok()) return model.error();
  a.model = *model;
  a.thinking = StringOr(fields, "thinking");
  if (const Json::Value* tools = FindMember(fields, "tools"); tools && !tools->isNull()) {
    Result<std::vector<std::string>> list = ToolList(*tools, source + ": tools", known_tools);
    if (!list.ok()) return list.error();
    a.tools = std::move(*list);
    a.tools_set = true;
  }
  a.permissions = MemberOrNull(fields, "permissions");
  if (a.permissions.isNull()) a.permissions = MemberOrNull(fields, "permission");
  return a;
}

Result<SubagentsSpec> ParseSubagents(const Json::Value& agents, const std::string& source,
                                     const std::vector<std::string>& known_tools) {
  if (!agents.isObject())
    return MakeError(ErrorCode::kConfigInvalid,
                     (source.empty() ? "" : source + ": ") +
                         "agents: expected a map of agent names to their settings");
  SubagentsSpec out;
  for (const std::string& key : MemberNames(agents)) {
    const Json::Value& v = MemberOrNull(agents, key);
    const std::string where = (source.empty() ? "" : source + ": ") + "agents." + key;
    if (!v.isObject()) {
      if (Status s = ReadSetting(key, v, where, out); !s.ok()) return s.error();
      continue;
    }
    Result<SubagentSpec> a = SubagentFromFields(key, v, "", where, known_tools);
    if (!a.ok()) return a.error();
    out.agents.push_back(std::move(*a));
  }
  return out;
}

void AddSubagents(std::vector<SubagentSpec>& into, std::vector<SubagentSpec> more,
                  std::vector<std::string>* shadowed) {
  for (SubagentSpec& a : more) {
    const bool taken = std::any_of(into.begin(), into.end(),
                                   [&](const SubagentSpec& have) { return have.name == a.name; });
    if (!taken) {
      into.push_back(std::move(a));
    } else if (shadowed) {
      shadowed->push_back(a.name + " (" + a.source + ")");
    }
  }
}

}  // namespace lousho::config

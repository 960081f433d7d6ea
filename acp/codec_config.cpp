// ACP wire codec: stop reasons, modes, models and the session's config options.
#include "acp/codec.h"

namespace lousho::acp {

const char* ToolKindName(agent::ToolKind kind) { return agent::ToolKindId(kind); }

const char* StopReasonName(agent::TurnStop stop) { return agent::TurnStopName(stop); }

namespace {
struct ModeInfo {
  agent::PermissionMode mode;
  const char* name;
  const char* description;
};
const ModeInfo kModes[] = {
    {agent::PermissionMode::kDefault, "Default", "Ask before edits and commands"},
    {agent::PermissionMode::kAcceptEdits, "Accept edits", "Apply file edits without asking"},
    {agent::PermissionMode::kPlan, "Plan", "Read-only: look and plan, change nothing"},
    {agent::PermissionMode::kBypass, "Bypass permissions", "Run every tool without asking"},
};
}  // namespace

const char* ModeName(agent::PermissionMode mode) { return agent::PermissionModeId(mode); }

Json::Value ModesToJson(agent::PermissionMode current) {
  Json::Value modes(Json::objectValue);
  modes["currentModeId"] = ModeName(current);
  Json::Value list(Json::arrayValue);
  for (const auto& m : kModes) {
    Json::Value item(Json::objectValue);
    item["id"] = ModeName(m.mode);
    item["name"] = m.name;
    item["description"] = m.description;
    list.append(item);
  }
  modes["availableModes"] = list;
  return modes;
}

namespace {
Json::Value SelectOption(const std::string& value, const std::string& name,
                         const std::string& description = {}) {
  Json::Value o(Json::objectValue);
  o["value"] = value;
  o["name"] = name;
  if (!description.empty()) o["description"] = description;
  return o;
}

Json::Value Select(const char* id, const char* name, const char* category,
                   const std::string& current, Json::Value options) {
  Json::Value s(Json::objectValue);
  s["id"] = id;
  s["name"] = name;
  s["category"] = category;
  s["type"] = "select";
  s["currentValue"] = current;
  s["options"] = std::move(options);
  return s;
}

// The offered models, with the current one added when it is not among them.
std::vector<agent::ModelOption> WithCurrent(const std::string& current,
                                            std::vector<agent::ModelOption> models) {
  for (const auto& m : models)
    if (m.id() == current) return models;
  const size_t slash = current.find('/');
  agent::ModelOption m;
  m.provider = current.substr(0, slash);
  m.model_id = slash == std::string::npos ? "" : current.substr(slash + 1);
  m.name = current;
  models.insert(models.begin(), m);
  return models;
}
}  // namespace

Json::Value ConfigOptionsToJson(const SessionConfigValues& current,
                                const std::vector<agent::ModelOption>& models,
                                const ThinkingLevelNames& levels) {
  Json::Value out(Json::arrayValue);
  Json::Value modes(Json::arrayValue);
  for (const auto& m : kModes) modes.append(SelectOption(ModeName(m.mode), m.name, m.description));
  out.append(Select(kConfigMode, "Mode", "mode", ModeName(current.mode), modes));
  Json::Value list(Json::arrayValue);
  for (const auto& m : WithCurrent(current.model, models)) {
    const std::string name = m.name.empty() ? m.id() : m.name;
    list.append(SelectOption(m.id(), name, name == m.id() ? "" : m.id()));
  }
  out.append(Select(kConfigModel, "Model", "model", current.model, list));
  Json::Value thinking(Json::arrayValue);
  for (const auto& [id, name] : levels) thinking.append(SelectOption(id, name));
  out.append(Select(kConfigThoughtLevel, "Thinking", "thought_level", current.thinking, thinking));
  return out;
}

Json::Value ModelsToJson(const std::string& current,
                         const std::vector<agent::ModelOption>& models) {
  Json::Value out(Json::objectValue);
  out["currentModelId"] = current;
  Json::Value list(Json::arrayValue);
  for (const auto& m : WithCurrent(current, models)) {
    Json::Value item(Json::objectValue);
    item["modelId"] = m.id();
    item["name"] = m.name.empty() ? m.id() : m.name;
    list.append(item);
  }
  out["availableModels"] = list;
  return out;
}

Json::Value ConfigOptionUpdate(const SessionConfigValues& current,
                               const std::vector<agent::ModelOption>& models,
                               const ThinkingLevelNames& levels) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "config_option_update";
  u["configOptions"] = ConfigOptionsToJson(current, models, levels);
  return u;
}

}  // namespace lousho::acp

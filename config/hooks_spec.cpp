// Reading hook settings in Claude Code's shape, from the spec or the project's files.
#include "config/hooks_spec.h"

#include <array>
#include <cmath>
#include <utility>

#include "support/files.h"
#include "support/json_util.h"

namespace lousho::config {
namespace fs = std::filesystem;

namespace {

struct HookEventRow {
  HookEvent event;
  const char* name;
};

constexpr std::array<HookEventRow, 7> kHookEvents{
    {{HookEvent::kPreToolUse, "PreToolUse"},
     {HookEvent::kPostToolUse, "PostToolUse"},
     {HookEvent::kUserPromptSubmit, "UserPromptSubmit"},
     {HookEvent::kSessionStart, "SessionStart"},
     {HookEvent::kStop, "Stop"},
     {HookEvent::kSessionEnd, "SessionEnd"},
     {HookEvent::kPreCompact, "PreCompact"}}};

// Events of Claude Code (and Codex) that lousho has no moment for: accepted, skipped, told.
constexpr std::array<const char*, 9> kForeignEvents{
    "Notification",       "SubagentStart",    "SubagentStop",
    "PermissionRequest",  "PostCompact",      "PreToolBatch",
    "PostToolUseFailure", "PermissionDenied", "Setup"};

// The largest hook file read (a settings file is a few KiB).
constexpr uint64_t kMaxHookFileBytes = uint64_t{1} << 20;

bool IsForeignEvent(const std::string& name) {
  for (const char* e : kForeignEvents)
    if (name == e) return true;
  return false;
}

// A parse failure inside this file, with the place it names.
struct HookSpecError {
  std::string message;
};

long HookTimeoutMs(const Json::Value& v, const std::string& where) {
  std::optional<double> seconds = AsDouble(v);
  if (!seconds || !std::isfinite(*seconds) || *seconds <= 0 || *seconds > 86400)
    throw HookSpecError{where + ".timeout: expected a number of seconds (0 < n <= 86400)"};
  return static_cast<long>(std::llround(*seconds * 1000));
}

// One entry of a group's `hooks` list; false when it is of a type lousho does not run.
bool ParseHookCommand(const Json::Value& h, const std::string& where, const std::string& source,
                      HookCommand* out) {
  if (!h.isObject()) throw HookSpecError{where + ": expected an object"};
  const std::string type = StringOr(h, "type", "command");
  if (type != "command") return false;
  const Json::Value& command = MemberOrNull(h, "command");
  std::optional<std::string> text = AsString(command);
  if (!text || text->empty())
    throw HookSpecError{where + ": missing 'command' (the shell command to run)"};
  out->command = std::move(*text);
  out->source = source;
  if (const Json::Value* t = FindMember(h, "timeout")) out->timeout_ms = HookTimeoutMs(*t, where);
  return true;
}

HookGroup ParseHookGroup(HookEvent event, const Json::Value& g, const std::string& where,
                         const std::string& source, std::vector<std::string>* skipped) {
  if (!g.isObject()) throw HookSpecError{where + ": expected an object with 'hooks'"};
  HookGroup group;
  group.event = event;
  if (const Json::Value* m = FindMember(g, "matcher")) {
    std::optional<std::string> matcher = AsString(*m);
    if (!matcher) throw HookSpecError{where + ".matcher: expected a string"};
    group.matcher = std::move(*matcher);
  }
  const Json::Value& list = MemberOrNull(g, "hooks");
  if (!list.isArray()) throw HookSpecError{where + ".hooks: expected a list of commands"};
  for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
    const std::string at = where + ".hooks[" + std::to_string(i) + "]";
    HookCommand cmd;
    if (ParseHookCommand(ElementOrNull(list, i), at, source, &cmd)) {
      group.hooks.push_back(std::move(cmd));
    } else {
      skipped->push_back(source + ": " + at + ": only hooks of type 'command' run; skipped");
    }
  }
  return group;
}

ParsedHooks ParseAllHooks(const Json::Value& hooks, const std::string& source) {
  if (!hooks.isObject()) throw HookSpecError{"hooks: expected an object of event names"};
  ParsedHooks out;
  for (const std::string& name : MemberNames(hooks)) {
    const std::string where = "hooks." + name;
    std::optional<HookEvent> event = ParseHookEvent(name);
    if (!event) {
      if (!IsForeignEvent(name)) {
        std::string known;
        for (const HookEventRow& e : kHookEvents)
          known += (known.empty() ? "" : ", ") + std::string(e.name);
        throw HookSpecError{where + ": unknown hook event (known: " + known + ")"};
      }
      out.skipped.push_back(source + ": " + name + " hooks are not run by lousho; skipped");
      continue;
    }
    const Json::Value& groups = MemberOrNull(hooks, name);
    if (!groups.isArray()) throw HookSpecError{where + ": expected a list of {matcher, hooks}"};
    for (Json::ArrayIndex i = 0; i < groups.size(); ++i)
      out.groups.push_back(ParseHookGroup(*event, ElementOrNull(groups, i),
                                          where + "[" + std::to_string(i) + "]", source,
                                          &out.skipped));
  }
  return out;
}

// One project file: its "hooks" member, unless it turns them off.
void LoadHookFile(const fs::path& dir, const char* name, ParsedHooks* out) {
  std::error_code ec;
  const fs::path path = dir / name;
  if (!fs::is_regular_file(path, ec)) return;
  Result<std::string> text = ReadDiskFile(path, kMaxHookFileBytes);
  if (!text.ok()) {
    out->skipped.push_back(std::string(name) + ": " + text.error().message + "; its hooks skipped");
    return;
  }
  Result<Json::Value> json = ParseJson(*text);
  if (!json.ok() || !json->isObject()) {
    out->skipped.push_back(std::string(name) + ": not a JSON object (" +
                           (json.ok() ? std::string("wrong type") : json.error().message) +
                           "); its hooks skipped");
    return;
  }
  if (BoolOr(*json, "disableAllHooks", false)) return;
  const Json::Value* hooks = FindMember(*json, "hooks");
  if (!hooks) return;
  Result<ParsedHooks> parsed = ParseHookGroups(*hooks, name);
  if (!parsed.ok()) {
    out->skipped.push_back(std::string(name) + ": " + parsed.error().message +
                           "; its hooks skipped");
    return;
  }
  for (HookGroup& g : parsed->groups) out->groups.push_back(std::move(g));
  for (std::string& s : parsed->skipped) out->skipped.push_back(std::move(s));
}

}  // namespace

const char* HookEventName(HookEvent event) {
  for (const HookEventRow& e : kHookEvents)
    if (e.event == event) return e.name;
  return "?";
}

std::optional<HookEvent> ParseHookEvent(std::string_view name) {
  for (const HookEventRow& e : kHookEvents)
    if (name == e.name) return e.event;
  return std::nullopt;
}

Result<ParsedHooks> ParseHookGroups(const Json::Value& hooks, const std::string& source) {
  try {
    return ParseAllHooks(hooks, source);
  } catch (const HookSpecError& e) {
    return MakeError(ErrorCode::kConfigInvalid, e.message);
  }
}

ParsedHooks LoadProjectHooks(const fs::path& dir) {
  ParsedHooks out;
  for (const char* name : {".lousho/hooks.json", ".claude/settings.json",
                           ".claude/settings.local.json", ".codex/hooks.json"})
    LoadHookFile(dir, name, &out);
  return out;
}

}  // namespace lousho::config

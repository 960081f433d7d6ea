// `lousho rules list|test AGENT`: which stream rules a session would register, and which of them
// a piece of text would trigger (no model is called).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "agent/rules/controller.h"
#include "agent/rules/loader.h"
#include "cli/command.h"
#include "support/env.h"
#include "support/json_util.h"

namespace lousho::cli {
namespace fs = std::filesystem;
namespace rules = agent::rules;

namespace {

Json::Value Strings(const std::vector<std::string>& v) {
  Json::Value a(Json::arrayValue);
  for (const auto& s : v) a.append(s);
  return a;
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The rules a session opened in `cwd` would register.
Result<rules::RuleSet> Load(const std::string& agent, const std::string& cwd_arg, std::string* home,
                            fs::path* cwd) {
  auto spec = LoadSpec(agent, "");
  if (!spec.ok()) return spec.error();
  *home = ProcessEnv("HOME").value_or("");
  std::error_code ec;
  *cwd = fs::weakly_canonical(cwd_arg.empty() ? fs::current_path(ec) : fs::path(cwd_arg), ec);
  if (ec || !fs::is_directory(*cwd, ec))
    return MakeError(ErrorCode::kUsage, "--cwd: no such directory: " + cwd_arg);
  return rules::LoadSessionRules(*rules::LoadAgentRules(*spec, *home), *cwd);
}

int List(const rules::RuleSet& set, const fs::path& cwd, const std::string& home, bool json) {
  const rules::Settings& s = set.settings;
  if (json) {
    Json::Value out(Json::objectValue);
    Json::Value st(Json::objectValue);
    st["enabled"] = s.enabled;
    st["contextMode"] = rules::ContextModeId(s.context_mode);
    st["interruptMode"] = rules::InterruptModeId(s.interrupt_mode);
    st["repeatMode"] = rules::RepeatModeId(s.repeat_mode);
    st["repeatGap"] = s.repeat_gap;
    st["from"] = Strings(set.settings_from);
    out["settings"] = st;
    Json::Value list(Json::arrayValue);
    for (const auto& r : set.rules) {
      Json::Value j(Json::objectValue);
      j["name"] = r.name;
      j["origin"] = r.origin;
      j["path"] = rules::ShownPath(r.path, cwd, home);
      std::vector<std::string> conds;
      for (const auto& c : r.conditions) conds.push_back(c.pattern);
      j["conditions"] = Strings(conds);
      j["scope"] = Strings(r.scope);
      j["globs"] = Strings(r.globs);
      j["interruptMode"] = rules::InterruptModeId(r.interrupt_mode.value_or(s.interrupt_mode));
      j["description"] = r.description;
      j["content"] = r.content;
      list.append(j);
    }
    out["rules"] = list;
    Json::Value skipped(Json::arrayValue);
    for (const auto& k : set.skipped) {
      Json::Value j(Json::objectValue);
      j["name"] = k.name;
      j["path"] = rules::ShownPath(k.path, cwd, home);
      j["why"] = k.why;
      skipped.append(j);
    }
    out["skipped"] = skipped;
    out["warnings"] = Strings(set.warnings);
    std::printf("%s\n", WriteJsonPretty(out).c_str());
    return 0;
  }
  std::printf("settings: enabled=%s contextMode=%s interruptMode=%s repeatMode=%s repeatGap=%d\n",
              s.enabled ? "true" : "false", rules::ContextModeId(s.context_mode),
              rules::InterruptModeId(s.interrupt_mode), rules::RepeatModeId(s.repeat_mode),
              s.repeat_gap);
  std::printf("  from: %s\n", Join(set.settings_from).c_str());
  std::printf("%zu rule(s) registered\n", set.rules.size());
  for (const auto& r : set.rules) {
    std::vector<std::string> conds;
    for (const auto& c : r.conditions) conds.push_back(c.pattern);
    std::printf("  %s  [%s] %s\n", r.name.c_str(), r.origin.c_str(),
                rules::ShownPath(r.path, cwd, home).c_str());
    std::printf("    condition: %s\n", Join(conds, " | ").c_str());
    std::printf("    scope: %s  interruptMode: %s%s\n", Join(r.scope).c_str(),
                rules::InterruptModeId(r.interrupt_mode.value_or(s.interrupt_mode)),
                r.globs.empty() ? "" : ("  globs: " + Join(r.globs)).c_str());
  }
  for (const auto& k : set.skipped)
    std::printf("skipped: %s (%s): %s\n", k.name.c_str(),
                rules::ShownPath(k.path, cwd, home).c_str(), k.why.c_str());
  for (const auto& w : set.warnings) std::printf("warning: %s\n", w.c_str());
  return 0;
}

int Test(const rules::RuleSet& set, const fs::path& cwd, rules::Source source,
         const std::string& tool, const std::string& path, const std::string& text, bool json) {
  std::vector<std::string> paths;
  if (!path.empty()) {
    Json::Value args(Json::objectValue);
    args["path"] = path;
    paths = rules::CandidatePaths(args, cwd);
  }
  Json::Value hit(Json::arrayValue), miss(Json::arrayValue);
  for (const auto& r : set.rules) {
    rules::Verdict v = rules::Evaluate(r, source, tool, paths, text);
    Json::Value j(Json::objectValue);
    j["name"] = r.name;
    if (v.triggered) {
      j["condition"] = v.condition;
      j["interrupts"] = rules::Interrupts(r, source, set.settings);
      hit.append(j);
      if (!json)
        std::printf(
            "triggered: %s (condition %s; %s)\n", r.name.c_str(), v.condition.c_str(),
            rules::Interrupts(r, source, set.settings) ? "interrupts" : "does not interrupt");
    } else {
      j["why"] = v.why;
      miss.append(j);
      if (!json) std::printf("not triggered: %s (%s)\n", r.name.c_str(), v.why.c_str());
    }
  }
  if (json) {
    Json::Value out(Json::objectValue);
    out["source"] = rules::SourceId(source);
    if (!tool.empty()) out["tool"] = tool;
    out["triggered"] = hit;
    out["notTriggered"] = miss;
    std::printf("%s\n", WriteJsonPretty(out).c_str());
  } else if (set.rules.empty()) {
    std::printf("no rule registered\n");
  }
  return hit.empty() ? 2 : 0;
}

}  // namespace

Subcommand AddRulesCommand(CLI::App& app) {
  struct Options {
    std::string agent, cwd, source = "text", tool, path, text;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("rules", "show and try an agent's stream rules");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "the rules a session would register, and why not");
  list->add_option("agent", o->agent, "agent spec or folder")->required();
  list->add_option("--cwd", o->cwd, "the session's working folder (default: here)");
  list->add_flag("--json", o->json, "print JSON");
  CLI::App* test = cmd->add_subcommand(
      "test", "which rules a text would trigger (exit 0: some, 2: none); no model is called");
  test->add_option("agent", o->agent, "agent spec or folder")->required();
  test->add_option("text", o->text, "the text (for tool: the arguments' JSON)")->required();
  test->add_option("--source", o->source, "text, thinking or tool")
      ->check(CLI::IsMember({"text", "thinking", "tool"}));
  test->add_option("--tool", o->tool, "the tool's name (source tool)");
  test->add_option("--path", o->path, "a file path the tool call names");
  test->add_option("--cwd", o->cwd, "the session's working folder (default: here)");
  test->add_flag("--json", o->json, "print JSON");
  return {cmd, [o, list] {
            std::string home;
            fs::path cwd;
            auto set = Load(o->agent, o->cwd, &home, &cwd);
            if (!set.ok()) return Fail(set.error());
            if (list->parsed()) return List(*set, cwd, home, o->json);
            return Test(*set, cwd, *rules::ParseSource(o->source), o->tool, o->path, o->text,
                        o->json);
          }};
}

}  // namespace lousho::cli

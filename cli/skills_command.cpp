// `lousho skills list [AGENT] [--cwd DIR]`: the skills and the slash commands from files a
// session opened in DIR would find, where each came from, and what was left out and why.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "agent/builtin_commands.h"
#include "agent/skills/discovery.h"
#include "cli/command.h"
#include "support/json_util.h"

namespace lousho::cli {
namespace fs = std::filesystem;
namespace skills = agent::skills;

namespace {

struct Listing {
  skills::Found found;
  std::vector<config::SlashCommand> commands;  // the session's prompt commands
  std::vector<std::string> notices;            // skipped files, shadowed commands
};

Result<Listing> LoadListing(const std::string& agent, const std::string& cwd_arg) {
  config::SkillsSpec settings;
  std::vector<config::SlashCommand> spec_commands;
  if (!agent.empty()) {
    auto spec = LoadSpec(agent, "");
    if (!spec.ok()) return spec.error();
    settings = spec->skills;
    spec_commands = spec->commands;
  }
  std::error_code ec;
  const fs::path cwd =
      fs::weakly_canonical(cwd_arg.empty() ? fs::current_path(ec) : fs::path(cwd_arg), ec);
  if (ec || !fs::is_directory(cwd, ec))
    return MakeError(ErrorCode::kUsage, "--cwd: no such directory: " + cwd_arg);
  Listing l;
  l.found = skills::Discover(settings, skills::ProcessPlaces(cwd));
  for (const auto& k : l.found.skipped) l.notices.push_back("skipped " + k.path + ": " + k.why);
  l.commands = agent::SessionCommands(spec_commands, l.found.commands, &l.notices);
  return l;
}

int PrintListingJson(const Listing& l) {
  Json::Value out(Json::objectValue);
  Json::Value list(Json::arrayValue);
  for (const auto& s : l.found.skills) {
    Json::Value j(Json::objectValue);
    j["name"] = s.name;
    j["description"] = s.description;
    j["origin"] = s.origin;
    j["path"] = s.file.string();
    list.append(j);
  }
  out["skills"] = list;
  Json::Value cmds(Json::arrayValue);
  for (const auto& c : l.commands) {
    Json::Value j(Json::objectValue);
    j["name"] = c.name;
    j["description"] = c.description;
    j["hint"] = c.hint;
    j["path"] = c.file.empty() ? std::string("(spec)") : c.file;
    cmds.append(j);
  }
  out["commands"] = cmds;
  Json::Value skipped(Json::arrayValue);
  for (const auto& k : l.found.skipped) {
    Json::Value j(Json::objectValue);
    j["path"] = k.path;
    j["why"] = k.why;
    skipped.append(j);
  }
  out["skipped"] = skipped;
  Json::Value notices(Json::arrayValue);
  for (const auto& n : l.notices) notices.append(n);
  out["notices"] = notices;
  Json::Value searched(Json::arrayValue);
  for (const auto& s : l.found.searched) searched.append(s);
  out["searched"] = searched;
  std::printf("%s\n", WriteJsonPretty(out).c_str());
  return 0;
}

int PrintListing(const Listing& l) {
  std::printf("%zu skill(s)\n", l.found.skills.size());
  for (const auto& s : l.found.skills)
    std::printf("  %s  [%s] %s\n    %s\n", s.name.c_str(), s.origin.c_str(), s.file.c_str(),
                s.description.c_str());
  std::printf("%zu command(s)\n", l.commands.size());
  for (const auto& c : l.commands)
    std::printf("  /%s%s  %s\n    %s\n", c.name.c_str(),
                c.hint.empty() ? "" : (" " + c.hint).c_str(),
                c.file.empty() ? "(spec)" : c.file.c_str(), c.description.c_str());
  for (const auto& n : l.notices) std::printf("%s\n", n.c_str());
  return 0;
}

}  // namespace

Subcommand AddSkillsCommand(CLI::App& app) {
  struct Options {
    std::string agent, cwd;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("skills", "show the skills and commands found in files");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand(
      "list", "the skills and file commands a session would find, and what was skipped and why");
  list->add_option("agent", o->agent, "agent spec or folder (its `skills:` and `commands:`)");
  list->add_option("--cwd", o->cwd, "the session's working folder (default: here)");
  list->add_flag("--json", o->json, "print JSON");
  return {cmd, [o] {
            auto l = LoadListing(o->agent, o->cwd);
            if (!l.ok()) return Fail(l.error());
            return o->json ? PrintListingJson(*l) : PrintListing(*l);
          }};
}

}  // namespace lousho::cli

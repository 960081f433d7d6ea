// Skills and slash commands from files: SKILL.md folders and markdown command files in the
// places Claude Code, Codex, pi, omp and opencode keep them, found when a session opens.
// Reads a bounded number of small files; never fails: a bad file is skipped with the reason.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "config/agent_spec.h"
#include "support/status.h"

namespace lousho::agent::skills {

// Limits of what one session reads.
inline constexpr size_t kMaxSkills = 200;
inline constexpr size_t kMaxCommands = 500;
inline constexpr size_t kMaxSkillFileBytes = size_t{256} * 1024;  // SKILL.md, a command file
inline constexpr size_t kMaxDescriptionChars = 1024;              // longer: cut
inline constexpr size_t kMaxSkillNameChars = 64;

// One skill: a folder holding SKILL.md (front matter `name`, `description`; the body is read
// when the model asks for it). Value type.
struct Skill {
  std::string name;
  std::string description;
  std::filesystem::path dir;   // the skill's folder
  std::filesystem::path file;  // its SKILL.md
  std::string origin;          // "project", "user" or "spec", and the folder it came from
};

// A file that gives nothing, and why (bad front matter, no description, a name taken, ...).
struct Skipped {
  std::string path;
  std::string why;
};

// What a session opened in one folder finds. Immutable once built.
struct Found {
  std::vector<Skill> skills;                   // first found wins a name
  std::vector<config::SlashCommand> commands;  // from files (`file` set); first wins a name
  std::vector<Skipped> skipped;
  std::vector<std::string> searched;  // the folders looked in, in order (those that exist)
};

// Where to look: the working folder (its project's folders, from it up to the repository root
// or, outside a repository, the filesystem root), the user's home and lousho's own home
// (`$LOUSHO_HOME`, else ~/.lousho).
struct Places {
  std::filesystem::path cwd;
  std::filesystem::path home;         // empty: no user folders but lousho's
  std::filesystem::path lousho_home;  // empty: home/.lousho
};

// Reads the skills and commands `spec` turns on. Precedence, first wins: the spec's `paths`,
// then the project's folders (nearest first; in each .lousho, .claude, .agents, then the other
// tools' folders), then the user's.
Found Discover(const config::SkillsSpec& spec, const Places& places);
// The places of the process (HOME, LOUSHO_HOME) for a session in `cwd`.
Places ProcessPlaces(const std::filesystem::path& cwd);

// The skill's instructions: SKILL.md without its front matter.
Result<std::string> ReadSkillBody(const Skill& skill);
// The skill's other files, relative to its folder, sorted (at most `max`; hidden ones left out).
std::vector<std::string> SkillFiles(const Skill& skill, size_t max);

}  // namespace lousho::agent::skills

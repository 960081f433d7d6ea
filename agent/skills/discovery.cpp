// Skills and slash commands from files: where they are looked for, how a file is read, and
// which of two of the same name is kept.
#include "agent/skills/discovery.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "agent/rules/rule.h"
#include "support/env.h"
#include "support/files.h"
#include "support/json_util.h"

namespace lousho::agent::skills {
namespace fs = std::filesystem;

namespace {

// The folders of each tool, relative to a project folder and to the home folder.
constexpr const char* kProjectSkillDirs[] = {".lousho/skills",  ".claude/skills", ".agents/skills",
                                             ".codex/skills",   ".pi/skills",     ".omp/skills",
                                             ".opencode/skills"};
constexpr const char* kUserSkillDirs[] = {".claude/skills",    ".agents/skills",
                                          ".codex/skills",     ".pi/agent/skills",
                                          ".omp/agent/skills", ".config/opencode/skills"};
constexpr const char* kProjectCommandDirs[] = {".lousho/commands",  ".claude/commands",
                                               ".pi/prompts",       ".omp/commands",
                                               ".opencode/command", ".opencode/commands"};
constexpr const char* kUserCommandDirs[] = {".claude/commands", ".codex/prompts",
                                            ".pi/agent/prompts", ".omp/agent/commands",
                                            ".config/opencode/command"};
constexpr int kMaxCommandDepth = 3;  // subfolders of a command folder

// One folder to read, with where it came from.
struct SearchRoot {
  fs::path dir;
  std::string origin;  // project | user | spec
};

bool IsFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The project's folders: `cwd` and its parents up to the one holding .git (or the filesystem
// root when none does); the home folder is the user's, not the project's.
std::vector<fs::path> ProjectFolders(const fs::path& cwd, const fs::path& home_arg) {
  const fs::path home = home_arg.empty() ? home_arg : (home_arg / "").parent_path();
  const fs::path start = cwd.lexically_normal();
  const fs::path root = RepositoryRoot(start);
  if (root.empty()) {
    // Outside a repository only the working folder is the project's.
    if (!home.empty() && start == home) return {};
    return {start};
  }
  std::vector<fs::path> chain;
  for (fs::path d = start;; d = d.parent_path()) {
    if (home.empty() || d != home) chain.push_back(d);
    if (d == root) return chain;
  }
}

std::vector<SearchRoot> SearchRoots(const config::SkillsSpec& spec, const Places& at, bool skills) {
  std::vector<SearchRoot> roots;
  if (skills)
    for (const auto& p : spec.paths) roots.push_back({p, "spec"});
  if (spec.project)
    for (const fs::path& d : ProjectFolders(at.cwd, at.home))
      for (const char* rel : skills ? std::vector<const char*>(std::begin(kProjectSkillDirs),
                                                               std::end(kProjectSkillDirs))
                                    : std::vector<const char*>(std::begin(kProjectCommandDirs),
                                                               std::end(kProjectCommandDirs)))
        roots.push_back({d / rel, "project"});
  if (!spec.user) return roots;
  const fs::path lousho = at.lousho_home.empty() ? at.home / ".lousho" : at.lousho_home;
  if (!lousho.empty()) roots.push_back({lousho / (skills ? "skills" : "commands"), "user"});
  if (at.home.empty()) return roots;
  if (skills) {
    for (const char* rel : kUserSkillDirs) roots.push_back({at.home / rel, "user"});
  } else {
    for (const char* rel : kUserCommandDirs) roots.push_back({at.home / rel, "user"});
  }
  return roots;
}

// The front matter of a file as JSON; false (and *why) when its YAML is refused or is no
// mapping. No front matter: an empty object.
bool ReadFields(const rules::FrontMatter& fm, Json::Value* fields, std::string* why) {
  *fields = Json::Value(Json::objectValue);
  if (fm.block_line == 0) return true;
  try {
    const YAML::Node root = YAML::Load(fm.block);
    if (root.IsNull()) return true;
    if (!root.IsMap()) {
      *why = "the front matter is not a mapping of keys";
      return false;
    }
  } catch (const YAML::Exception& e) {
    *why = "the front matter is not valid YAML (line " +
           std::to_string(fm.block_line + static_cast<size_t>(std::max(e.mark.line, 0))) +
           "): " + e.msg;
    return false;
  }
  *fields = fm.fields;
  return true;
}

// A string field, or "" (a list of strings is joined with spaces).
std::string FieldText(const Json::Value& fields, const char* key) {
  const Json::Value& v = MemberOrNull(fields, key);
  if (auto s = AsString(v)) return *s;
  if (v.isNumeric() || v.isBool()) return StringOrJson(v);
  return "";
}

std::string ShortenTo(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "…";
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxSkillNameChars) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == ':';
  });
}

class SkillReader {
 public:
  explicit SkillReader(Found* out) : out_(out) {}

  void SkillRoot(const SearchRoot& root) {
    std::error_code ec;
    if (!Fresh(root.dir)) return;
    if (fs::is_regular_file(root.dir / "SKILL.md", ec)) return SkillDir(root.dir, root.origin);
    std::vector<fs::path> dirs;
    for (fs::directory_iterator it(root.dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec) && it->path().filename().string()[0] != '.')
        dirs.push_back(it->path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& d : dirs)
      if (fs::is_regular_file(d / "SKILL.md", ec)) SkillDir(d, root.origin);
  }

  void CommandRoot(const SearchRoot& root) {
    if (!Fresh(root.dir)) return;
    CommandDir(root.dir, root.dir, root.origin, 0);
  }

 private:
  // A folder not read yet (by its resolved path).
  bool Fresh(const fs::path& dir) {
    if (!IsFolder(dir)) return false;
    std::error_code ec;
    const fs::path real = fs::canonical(dir, ec);
    if (ec || !seen_.insert(real.string()).second) return false;
    out_->searched.push_back(dir.string());
    return true;
  }

  void Skip(const fs::path& path, std::string why) {
    out_->skipped.push_back({path.string(), std::move(why)});
  }

  void SkillDir(const fs::path& dir, const std::string& origin) {
    const fs::path file = dir / "SKILL.md";
    if (out_->skills.size() >= kMaxSkills)
      return Skip(file, "more than " + std::to_string(kMaxSkills) + " skills; not read");
    auto text = ReadDiskFile(file, kMaxSkillFileBytes);
    if (!text.ok()) return Skip(file, text.error().message);
    const rules::FrontMatter fm = rules::ParseFrontMatter(*text);
    Json::Value fields;
    std::string why;
    if (fm.block_line == 0)
      return Skip(file, "no front matter (a --- block with name and description)");
    if (!ReadFields(fm, &fields, &why)) return Skip(file, why);
    Skill s;
    s.name = FieldText(fields, "name");
    if (s.name.empty()) s.name = dir.filename().string();
    if (!ValidName(s.name))
      return Skip(file, "the name '" + ShortenTo(s.name, kMaxSkillNameChars) +
                            "' is not 1-64 letters, digits, '-', '_', '.' or ':'");
    s.description = ShortenTo(FieldText(fields, "description"), kMaxDescriptionChars);
    if (s.description.empty()) return Skip(file, "no description in the front matter");
    for (const Skill& other : out_->skills)
      if (other.name == s.name)
        return Skip(file, "the skill name '" + s.name + "' is taken by " + other.file.string());
    s.dir = dir;
    s.file = file;
    s.origin = origin;
    out_->skills.push_back(std::move(s));
  }

  void CommandDir(const fs::path& dir, const fs::path& root, const std::string& origin, int depth) {
    std::vector<fs::directory_entry> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string()[0] != '.') entries.push_back(*it);
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.path() < b.path(); });
    for (const auto& e : entries) {
      std::error_code fec;
      if (e.is_directory(fec)) {
        if (depth < kMaxCommandDepth) CommandDir(e.path(), root, origin, depth + 1);
      } else if (e.path().extension() == ".md" && e.is_regular_file(fec)) {
        CommandFile(e.path(), root, origin);
      }
    }
  }

  void CommandFile(const fs::path& file, const fs::path& root, const std::string& origin) {
    if (out_->commands.size() >= kMaxCommands)
      return Skip(file, "more than " + std::to_string(kMaxCommands) + " commands; not read");
    auto text = ReadDiskFile(file, kMaxSkillFileBytes);
    if (!text.ok()) return Skip(file, text.error().message);
    // Read as leniently as Claude Code reads it: `argument-hint: [pr] [priority]` is no YAML,
    // so a block YAML refuses is read line by line.
    const rules::FrontMatter fm = rules::ParseFrontMatter(*text);
    const Json::Value& fields = fm.fields;
    config::SlashCommand c;
    c.name = file.stem().string();
    if (!ValidName(c.name))
      return Skip(file, "the name '" + ShortenTo(c.name, kMaxSkillNameChars) +
                            "' is not 1-64 letters, digits, '-', '_', '.' or ':'");
    for (const auto& other : out_->commands)
      if (other.name == c.name)
        return Skip(file, "the command name /" + c.name + " is taken by " + other.file);
    c.description = FieldText(fields, "description");
    if (c.description.empty()) c.description = FirstLine(fm.body);
    c.description = ShortenTo(c.description, kMaxDescriptionChars);
    // A subfolder is shown as Claude Code shows it: "(project:frontend)".
    const fs::path sub = file.parent_path().lexically_relative(root);
    if (!sub.empty() && sub != ".")
      c.description +=
          (c.description.empty() ? "(" : " (") + origin + ":" + sub.generic_string() + ")";
    c.hint = Hint(fm.block);
    c.prompt = fm.body;
    c.file = file.string();
    out_->commands.push_back(std::move(c));
  }

  static std::string FirstLine(const std::string& body) {
    const std::string line = body.substr(0, body.find('\n'));
    const size_t b = line.find_first_not_of("# \t");
    return b == std::string::npos ? "" : ShortenTo(line.substr(b), 200);
  }

  // `argument-hint: [pr] [priority]` is shown as written (YAML would read a list, or refuse).
  static std::string Hint(const std::string& block) {
    size_t pos = 0;
    while (pos < block.size()) {
      const size_t nl = std::min(block.find('\n', pos), block.size());
      const std::string line = block.substr(pos, nl - pos);
      pos = nl + 1;
      const size_t colon = line.find(':');
      const std::string key = line.substr(0, colon);
      if (colon == std::string::npos ||
          (key != "argument-hint" && key != "argumentHint" && key != "argument_hint"))
        continue;
      std::string v = line.substr(colon + 1);
      const size_t b = v.find_first_not_of(" \t");
      v = b == std::string::npos ? "" : v.substr(b, v.find_last_not_of(" \t\r") - b + 1);
      if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0])
        v = v.substr(1, v.size() - 2);
      return v;
    }
    return "";
  }

  Found* out_;
  std::set<std::string> seen_;
};

}  // namespace

Places ProcessPlaces(const fs::path& cwd) {
  Places p;
  p.cwd = cwd;
  p.home = ProcessEnv("HOME").value_or("");
  if (auto l = ProcessEnv("LOUSHO_HOME"); l && !l->empty()) p.lousho_home = *l;
  return p;
}

Found Discover(const config::SkillsSpec& spec, const Places& places) {
  Found out;
  SkillReader reader(&out);
  if (spec.enabled)
    for (const SearchRoot& r : SearchRoots(spec, places, /*skills=*/true)) reader.SkillRoot(r);
  if (spec.commands)
    for (const SearchRoot& r : SearchRoots(spec, places, /*skills=*/false)) reader.CommandRoot(r);
  return out;
}

Result<std::string> ReadSkillBody(const Skill& skill) {
  auto text = ReadDiskFile(skill.file, kMaxSkillFileBytes);
  if (!text.ok()) return text.error();
  return rules::ParseFrontMatter(*text).body;
}

std::vector<std::string> SkillFiles(const Skill& skill, size_t max) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(skill.dir, fs::directory_options::skip_permission_denied, ec);
  for (fs::recursive_directory_iterator end; !ec && it != end && files.size() < max;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code fec;
    if (name[0] == '.') {
      if (it->is_directory(fec)) it.disable_recursion_pending();
      continue;
    }
    if (it.depth() > 4) it.disable_recursion_pending();
    if (!it->is_regular_file(fec) || it->path() == skill.file) continue;
    files.push_back(it->path().lexically_relative(skill.dir).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace lousho::agent::skills

// .gitignore parsing and matching, and the ignore-aware directory walk.
#include "agent/tools/gitignore.h"

#include <algorithm>
#include <system_error>

#include "agent/tools/tool_util.h"
#include "core/paths.h"

namespace lousho::agent::tools {

namespace fs = std::filesystem;

IgnoreFile IgnoreFile::Parse(std::string_view text) {
  IgnoreFile f;
  for (std::string_view raw : SplitLines(text)) {
    std::string line(raw);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Trailing spaces are dropped unless escaped with a backslash.
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() >= 2 && line[line.size() - 2] == '\\'))
      line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    Rule r;
    if (line[0] == '!') {
      r.negate = true;
      line.erase(0, 1);
    } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '#' || line[1] == '!')) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      r.dir_only = true;
      line.pop_back();
    }
    if (line.empty()) continue;
    if (line[0] == '/') {
      r.anchored = true;
      line.erase(0, 1);
    } else if (line.find('/') != std::string::npos) {
      r.anchored = true;
    }
    if (line.empty()) continue;
    r.glob = Glob(line, GlobMode::kPath);
    f.rules_.push_back(std::move(r));
  }
  return f;
}

IgnoreFile::Verdict IgnoreFile::Check(std::string_view rel, bool is_dir) const {
  size_t slash = rel.rfind('/');
  std::string_view base = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  // The last matching rule decides.
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->dir_only && !is_dir) continue;
    if (it->glob.Match(it->anchored ? rel : base))
      return it->negate ? Verdict::kIncluded : Verdict::kIgnored;
  }
  return Verdict::kNone;
}

namespace {

IgnoreFile LoadIgnoreFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return {};
  auto text = ReadDiskFile(file);
  if (!text.ok()) return {};
  return IgnoreFile::Parse(*text);
}

}  // namespace

void IgnoreStack::LoadAncestors(const fs::path& root, const fs::path& fallback_top) {
  std::error_code ec;
  fs::path top;
  for (fs::path p = root;; p = p.parent_path()) {
    if (fs::exists(p / ".git", ec)) {
      top = p;
      break;
    }
    if (p == p.parent_path()) break;
  }
  if (top.empty()) {
    if (fallback_top.empty() || !IsWithin(root, fallback_top)) return;
    top = fallback_top;
  }
  // From top down to the parent of root; root's own .gitignore comes with PushDir("").
  std::vector<fs::path> dirs;
  for (fs::path p = root.parent_path(); IsWithin(p, top) && p != root; p = p.parent_path()) {
    dirs.push_back(p);
    if (p == top || p == p.parent_path()) break;
  }
  std::reverse(dirs.begin(), dirs.end());
  auto add = [&](const fs::path& dir, IgnoreFile file) {
    if (file.empty()) return;
    Level l;
    l.file = std::move(file);
    l.prefix = root.lexically_relative(dir).string();
    levels_.push_back(std::move(l));
  };
  add(top, LoadIgnoreFile(top / ".git" / "info" / "exclude"));
  for (const auto& d : dirs) add(d, LoadIgnoreFile(d / ".gitignore"));
}

bool IgnoreStack::PushDir(const fs::path& abs_dir, const std::string& rel_dir) {
  IgnoreFile f = LoadIgnoreFile(abs_dir / ".gitignore");
  if (f.empty()) return false;
  Level l;
  l.file = std::move(f);
  l.base = rel_dir;
  levels_.push_back(std::move(l));
  return true;
}

bool IgnoreStack::IsIgnored(const std::string& rel, bool is_dir) const {
  // Deeper files override shallower ones.
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    std::string local;
    if (!it->prefix.empty()) {
      local = it->prefix + "/" + rel;
    } else if (!it->base.empty()) {
      if (rel.size() <= it->base.size() || rel.compare(0, it->base.size(), it->base) != 0 ||
          rel[it->base.size()] != '/')
        continue;
      local = rel.substr(it->base.size() + 1);
    } else {
      local = rel;
    }
    switch (it->file.Check(local, is_dir)) {
      case IgnoreFile::Verdict::kIgnored:
        return true;
      case IgnoreFile::Verdict::kIncluded:
        return false;
      case IgnoreFile::Verdict::kNone:
        break;
    }
  }
  return false;
}

namespace {

struct Walker {
  const WalkOptions& options;
  const WalkVisitor& visit;
  IgnoreStack ignores;
  bool stopped = false;

  void Dir(const fs::path& abs, const std::string& rel) {
    if (stopped) return;
    bool pushed = options.respect_gitignore && ignores.PushDir(abs, rel);
    std::vector<std::pair<std::string, fs::file_type>> entries;
    std::error_code ec;
    for (fs::directory_iterator it(abs, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code tec;
      fs::file_type type = it->symlink_status(tec).type();
      entries.emplace_back(it->path().filename().string(), type);
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [name, type] : entries) {
      if (stopped || options.cancel.cancelled()) {
        stopped = true;
        break;
      }
      if (type == fs::file_type::symlink) continue;
      bool is_dir = type == fs::file_type::directory;
      if (is_dir && name == ".git") continue;
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      if (options.respect_gitignore && ignores.IsIgnored(child_rel, is_dir)) continue;
      fs::path child_abs = abs / name;
      if (!visit(child_abs, child_rel, is_dir)) {
        stopped = true;
        break;
      }
      if (is_dir) Dir(child_abs, child_rel);
    }
    if (pushed) ignores.Pop();
  }
};

}  // namespace

void WalkTree(const WalkOptions& options, const WalkVisitor& visit) {
  Walker w{options, visit, {}, false};
  if (options.respect_gitignore) w.ignores.LoadAncestors(options.root, options.workspace);
  w.Dir(options.root, "");
}

}  // namespace lousho::agent::tools

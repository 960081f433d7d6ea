// .gitignore rules and a sorted, ignore-aware directory walk shared by grep and find.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cancel.h"
#include "support/glob.h"

namespace lousho::agent::tools {

// The rules of one .gitignore file. Supported: `#` comments, blank lines, trailing-space trim,
// `!` negation, `/` anchoring (a slash at the start or in the middle), `dir/` (directories
// only), `*`, `?`, `[..]`, `**` and `\` escapes. Immutable after Parse; thread-safe.
class IgnoreFile {
 public:
  enum class Verdict { kNone, kIgnored, kIncluded };

  static IgnoreFile Parse(std::string_view text);
  // `rel` is relative to the directory holding the file, '/'-separated.
  Verdict Check(std::string_view rel, bool is_dir) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    Glob glob;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the whole relative path, not the basename
  };
  std::vector<Rule> rules_;
};

// The .gitignore files that apply below a walk root, innermost last. Not thread-safe.
class IgnoreStack {
 public:
  // Loads .gitignore files (and .git/info/exclude) from the repository root above `root` (the
  // nearest ancestor holding .git, else `fallback_top` when it contains root) down to root.
  void LoadAncestors(const std::filesystem::path& root, const std::filesystem::path& fallback_top);
  // Adds the .gitignore of `dir` (relative to the walk root, "" for the root) if it has one.
  // Returns whether one was pushed.
  bool PushDir(const std::filesystem::path& abs_dir, const std::string& rel_dir);
  void Pop() { levels_.pop_back(); }
  // `rel` relative to the walk root.
  bool IsIgnored(const std::string& rel, bool is_dir) const;

 private:
  struct Level {
    IgnoreFile file;
    std::string prefix;  // from the file's directory down to the walk root (ancestors)
    std::string base;    // from the walk root down to the file's directory (nested)
  };
  std::vector<Level> levels_;
};

struct WalkOptions {
  std::filesystem::path root;  // an existing directory (real path)
  // Where to stop looking upwards for .gitignore files when no .git directory is found.
  std::filesystem::path workspace;
  bool respect_gitignore = true;
  CancelToken cancel;
};

// Visits every entry below root in sorted depth-first order, skipping `.git`, ignored entries
// and symlinks (never followed: they could lead out of the workspace or loop). `rel` is
// relative to root. The visitor returns false to stop the walk.
using WalkVisitor =
    std::function<bool(const std::filesystem::path& abs, const std::string& rel, bool is_dir)>;
void WalkTree(const WalkOptions& options, const WalkVisitor& visit);

}  // namespace lousho::agent::tools

// The working tree of a git repository as a tree object, taken around a command whose changes
// cannot be seen one by one (bash): the tree goes to the repository's object database through a
// temporary index, so the user's index, refs, branches and stash are never touched. Every git
// run is bounded (kGitSnapshotTimeoutMs) and goes through support/subprocess.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/checkpoints.h"
#include "support/status.h"

namespace lousho::agent {

inline constexpr long kGitSnapshotTimeoutMs = 10000;

// The top folder of the work tree `cwd` is in; nullopt when it is in none (or git is missing).
std::optional<std::string> GitTopLevel(const std::filesystem::path& cwd);

// Every file of the work tree that git would add (tracked, and untracked but not ignored) as a
// tree object id.
Result<std::string> GitSnapshotTree(const std::string& repo);

// A file that differs between two trees: its path relative to the top folder and its state in
// each (kAbsent, kGitBlob, or kNotKept for a symbolic link or a submodule).
struct GitChange {
  std::string path;
  FileState before;
  FileState after;
};
Result<std::vector<GitChange>> GitTreeChanges(const std::string& repo, const std::string& tree_a,
                                              const std::string& tree_b);

// A blob's content as the work tree would hold it at `path` (the repository's filters applied);
// larger than max_bytes: an error.
Result<std::string> GitReadBlob(const std::string& repo, const std::string& blob,
                                const std::string& path, uint64_t max_bytes);
// The blob id a file's current content would get at `path` (relative to the top folder).
Result<std::string> GitHashFile(const std::string& repo, const std::string& path);

// The working tree around one command: Begin takes the tree before (nothing when `cwd` is in no
// repository), End the tree after, and the store records both when they differ (or what failed).
class CommandSnapshot {
 public:
  static CommandSnapshot Begin(CheckpointStore* store, std::string entry_id,
                               const std::filesystem::path& cwd);
  void End();

 private:
  CheckpointStore* store_ = nullptr;
  std::string entry_id_;
  std::string repo_;
  std::string before_;
  std::string error_;
};

}  // namespace lousho::agent

// Workspace path safety: resolve tool paths against the session cwd and refuse escapes.
#pragma once

#include <filesystem>
#include <string>

#include "core/tool.h"
#include "support/status.h"

namespace lousho::agent {

struct ResolvedPath {
  // Absolute and lexically normal, as the user would write it (for the editor and display).
  std::filesystem::path abs;
  // Every symlink resolved (also dangling ones); what the kernel would touch.
  std::filesystem::path real;
};

// Resolves `path` (relative to ctx.cwd, or absolute; a leading "@" is dropped because models copy
// it from mentions) and checks that it stays inside one of ctx.roots (ctx.cwd when roots is
// empty) after `..` and symlinks are resolved, also for files that do not exist yet. Errors are
// user-facing: "path is outside the workspace: ...".
Result<ResolvedPath> ResolveToolPath(const ToolContext& ctx, const std::string& path);

// `path` absolute and lexically normal, without touching the disk or checking anything.
std::filesystem::path AbsolutePath(const std::filesystem::path& cwd, const std::string& path);

// `abs` relative to cwd when inside it, else abs itself. For output the model reads.
std::string DisplayPath(const std::filesystem::path& cwd, const std::filesystem::path& abs);

// Resolves every symlink of an absolute path, component by component, like the kernel does
// (so `link/..` is the parent of the link's target). Parts that do not exist are kept as they
// are. Fails on symlink loops.
Result<std::filesystem::path> RealPath(const std::filesystem::path& abs);

// True when `p` is `root` or below it (both already normal).
bool IsWithin(const std::filesystem::path& p, const std::filesystem::path& root);

}  // namespace lousho::agent

// Workspace path safety: component-wise symlink resolution and root containment.
#include "core/paths.h"

#include <deque>
#include <system_error>

#include "support/env.h"

namespace lousho::agent {

namespace fs = std::filesystem;

namespace {

// cwd/path with "~" and a leading "@" handled, but NOT normalized: `link/..` must be resolved
// by RealPath the way the kernel does, not folded away lexically.
fs::path JoinPath(const fs::path& cwd, const std::string& path) {
  std::string p = path;
  if (!p.empty() && p[0] == '@') p.erase(0, 1);
  fs::path fp(p);
  if (p == "~" || p.rfind("~/", 0) == 0) {
    if (auto home = ProcessEnv("HOME")) fp = fs::path(*home) / p.substr(p.size() > 1 ? 2 : 1);
  }
  if (fp.is_relative()) fp = cwd / fp;
  return fp;
}

}  // namespace

fs::path AbsolutePath(const fs::path& cwd, const std::string& path) {
  fs::path fp = JoinPath(cwd, path).lexically_normal();
  // "dir/" normalizes to "dir/" with an empty filename; drop it so names compare cleanly.
  std::string s = fp.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return fs::path(s);
}

Result<fs::path> RealPath(const fs::path& abs) {
  std::deque<std::string> todo;
  for (const auto& part : abs.relative_path()) todo.push_back(part.string());
  fs::path cur = "/";
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      cur = cur.parent_path();
      continue;
    }
    fs::path next = cur / part;
    std::error_code ec;
    fs::file_status st = fs::symlink_status(next, ec);
    if (!ec && fs::is_symlink(st)) {
      if (++hops > 40) return MakeError(ErrorCode::kToolPath, "too many symlinks: " + abs.string());
      fs::path target = fs::read_symlink(next, ec);
      if (ec) return MakeError(ErrorCode::kToolPath, "cannot read symlink " + next.string());
      std::deque<std::string> parts;
      for (const auto& tp : target.relative_path()) parts.push_back(tp.string());
      todo.insert(todo.begin(), parts.begin(), parts.end());
      if (target.is_absolute()) cur = "/";
      continue;
    }
    cur = std::move(next);
  }
  return cur;
}

bool IsWithin(const fs::path& p, const fs::path& root) {
  auto pi = p.begin();
  for (auto ri = root.begin(); ri != root.end(); ++ri, ++pi) {
    if (ri->empty()) continue;  // trailing separator of root
    if (pi == p.end() || *pi != *ri) return false;
  }
  return true;
}

std::string DisplayPath(const fs::path& cwd, const fs::path& abs) {
  if (!cwd.empty() && IsWithin(abs, cwd)) {
    fs::path rel = abs.lexically_relative(cwd);
    return rel.empty() ? "." : rel.string();
  }
  return abs.string();
}

Result<ResolvedPath> ResolveToolPath(const ToolContext& ctx, const std::string& path) {
  if (path.empty()) return MakeError(ErrorCode::kToolArgs, "path is empty");
  if (path.find('\0') != std::string::npos)
    return MakeError(ErrorCode::kToolArgs, "path contains a NUL byte");
  fs::path cwd = ctx.cwd.empty() ? fs::current_path() : ctx.cwd;
  ResolvedPath out;
  out.abs = AbsolutePath(cwd, path);
  auto real = RealPath(JoinPath(cwd, path));
  if (!real.ok()) return real.error();
  out.real = std::move(real.value());
  // When `..` after a symlink makes the lexical path name another file than the kernel's,
  // the resolved path is the truthful one to show and to hand to the editor.
  if (auto lexical = RealPath(out.abs); !lexical.ok() || *lexical != out.real) out.abs = out.real;

  std::vector<fs::path> roots = ctx.roots;
  if (roots.empty()) roots.push_back(cwd);
  for (const auto& root : roots) {
    auto real_root = RealPath(AbsolutePath(cwd, root.string()));
    if (real_root.ok() && IsWithin(out.real, *real_root)) return out;
  }
  std::string msg = "path is outside the workspace: " + path;
  if (out.real != out.abs) msg += " (resolves to " + out.real.string() + ")";
  return MakeError(ErrorCode::kToolPath, msg);
}

}  // namespace lousho::agent

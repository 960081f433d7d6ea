// Context files: the instruction files a repository (and the user) keep for coding agents
// (AGENTS.md, CLAUDE.md, GEMINI.md, ...), found from the session's working folder up to the
// repository root, in the user's folders and in the session's additional folders, with their
// `@path` imports expanded, capped in size, and rendered general to specific under headings
// naming each file. Reads files only; docs/agent-spec.md, "Project context".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace lousho::host::context {

// One file considered, in the order of the prompt (an import right after the file importing
// it). Plain value type.
struct ContextFile {
  std::string path;           // absolute, as found (not resolved through symlinks)
  std::string why;            // "user", "repository root", "parent folder", "working folder", ...
  int depth = 0;              // 0: found; n: an import n levels down
  uint64_t bytes = 0;         // the file's size as read
  uint64_t with_imports = 0;  // its text with its imports expanded
  uint64_t kept = 0;          // found files: the bytes of that text that reached the prompt
  bool cut = false;           // kept < bytes: the size limits cut it
  std::string refused;  // not used at all, and why (a cycle, outside the roots, too deep, ...)
};

// Where to look and how much to take.
struct ContextFileOptions {
  std::filesystem::path cwd;  // absolute
  std::vector<std::filesystem::path> additional_dirs;
  // The folders the session's tools may read (cwd first): an import must resolve inside one of
  // them or inside the folder of the file it descends from.
  std::vector<std::filesystem::path> roots;
  std::string home;         // empty: no user-level files
  std::string config_home;  // $XDG_CONFIG_HOME or ~/.config; empty: none
  std::vector<std::string> file_names = {"AGENTS.md", "CLAUDE.md", "GEMINI.md"};
  bool project = true;              // the working folder, its ancestors and the additional folders
  bool user = true;                 // the user-level files
  uint64_t max_bytes = 65536;       // all files together
  uint64_t max_file_bytes = 32768;  // one found file with its imports
  int import_depth = 5;
  // A file already in the instructions (the spec folder's AGENTS.md): not added twice.
  std::string skip_path;
};

struct ContextFiles {
  std::vector<ContextFile> files;
  std::string text;  // the rendered block; empty when no file was used
};

// Finds, reads and renders the context files. Never fails: an unreadable file is reported in
// `files` with why it was refused.
ContextFiles CollectContextFiles(const ContextFileOptions& options);

// The user-level files looked for under `home` (and `config_home`), general first: the other
// agents' files, then lousho's own. Only those whose name is in `file_names`.
std::vector<std::filesystem::path> UserContextPaths(const std::string& home,
                                                    const std::string& config_home,
                                                    const std::vector<std::string>& file_names);

// The `@path` imports of `text`, in order: tokens at the start of a line or after white space,
// outside fenced code blocks, that look like a path (holding `/` or `.`); trailing punctuation
// is not part of them. Each with its offset and length in `text` (the `@` included).
struct ImportRef {
  size_t offset = 0;
  size_t length = 0;
  std::string path;  // as written, without the `@`
};
std::vector<ImportRef> FindImports(const std::string& text);

}  // namespace lousho::host::context

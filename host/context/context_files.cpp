// Context files: discovery, `@path` imports, size limits and rendering.
#include "host/context/context_files.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "support/files.h"

namespace lousho::host::context {
namespace fs = std::filesystem;

namespace {

// A context file is prose; a bigger one is a mistake (or not meant for us): refused unread.
constexpr uint64_t kMaxContextReadBytes = 1ULL << 20;
// Imports followed in all, whatever their depth: a bound on the work one session start does.
constexpr int kMaxImports = 200;

// A file found by the walk, before it is read.
struct Found {
  fs::path path;
  std::string why;
};

// One found file with its imports expanded: what the prompt would hold before the limits.
struct Segment {
  size_t report = 0;  // its entry in the report
  std::string text;
};

std::string ResolvedKey(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : r.string();
}

bool IsInside(const fs::path& p, const fs::path& root) {
  const fs::path rel = p.lexically_relative(root);
  return !rel.empty() && rel.native().rfind("..", 0) != 0;
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Cuts `text` to at most `max` bytes, at the last line end within them when there is one, and
// never inside a UTF-8 sequence.
std::string CutText(const std::string& text, uint64_t max) {
  if (text.size() <= max) return text;
  size_t end = static_cast<size_t>(max);
  const size_t nl = text.rfind('\n', end == 0 ? 0 : end - 1);
  if (nl != std::string::npos && nl > 0) {
    end = nl + 1;
  } else {
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  }
  return text.substr(0, end);
}

bool IsFence(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  return line.compare(i, 3, "```") == 0 || line.compare(i, 3, "~~~") == 0;
}

// The import token starting at line[at] (an `@`), or empty when it is none.
std::string ImportToken(const std::string& line, size_t at) {
  size_t end = at + 1;
  while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
  std::string token = line.substr(at + 1, end - at - 1);
  while (!token.empty() &&
         std::string_view(".,;:!?)]}'\"`").find(token.back()) != std::string_view::npos)
    token.pop_back();
  if (token.empty() || token[0] == '@') return {};
  if (token.find('/') == std::string::npos && token.find('.') == std::string::npos) return {};
  return token;
}

// Scans one line (outside fences) for imports; `base` is the line's offset in the text.
void LineImports(const std::string& line, size_t base, std::vector<ImportRef>* out) {
  int ticks = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '`') ++ticks;
    if (line[i] != '@' || ticks % 2 == 1) continue;
    if (i > 0 && !std::isspace(static_cast<unsigned char>(line[i - 1]))) continue;
    std::string token = ImportToken(line, i);
    if (token.empty()) continue;
    out->push_back(ImportRef{base + i, token.size() + 1, token});
    i += token.size();
  }
}

// Expands the imports of the files it is given, reporting each import.
class Expander {
 public:
  Expander(const ContextFileOptions& o, std::vector<ContextFile>* report,
           std::set<std::string>* used)
      : o_(o), report_(report), used_(used) {}

  // The text of `file` (its contents `text`) with its imports expanded, depth 1 and on.
  // `allowed` are the folders an import may come from.
  std::string Expand(const fs::path& file, const std::string& text,
                     const std::vector<fs::path>& allowed, int depth,
                     std::vector<std::string>* stack) {
    std::string out;
    size_t pos = 0;
    for (const ImportRef& ref : FindImports(text)) {
      out.append(text, pos, ref.offset - pos);
      pos = ref.offset + ref.length;
      std::string inner;
      if (Import(file, ref.path, allowed, depth, stack, &inner)) {
        out += inner;
      } else {
        out.append(text, ref.offset, ref.length);  // left as written
      }
    }
    out.append(text, pos, std::string::npos);
    return out;
  }

 private:
  fs::path Target(const fs::path& file, const std::string& written) const {
    if (written.rfind("~/", 0) == 0 && !o_.home.empty())
      return fs::path(o_.home) / written.substr(2);
    fs::path p(written);
    return (p.is_absolute() ? p : file.parent_path() / p).lexically_normal();
  }

  // Why the import of `target` is refused; empty: it may be read.
  std::string Refusal(const fs::path& target, const std::string& key,
                      const std::vector<fs::path>& allowed, int depth,
                      const std::vector<std::string>& stack) const {
    if (depth > o_.import_depth)
      return "import deeper than context.importDepth (" + std::to_string(o_.import_depth) + ")";
    if (imports_ >= kMaxImports) return "more than " + std::to_string(kMaxImports) + " imports";
    if (!IsFile(target)) return "import not found";
    if (std::find(stack.begin(), stack.end(), key) != stack.end()) return "import cycle";
    const bool inside = std::any_of(allowed.begin(), allowed.end(), [&](const fs::path& root) {
      return IsInside(fs::path(key), fs::path(ResolvedKey(root)));
    });
    if (!inside) return "outside the folders the session's tools may read";
    if (used_->count(key)) return "already included above";
    return {};
  }

  bool Import(const fs::path& file, const std::string& written,
              const std::vector<fs::path>& allowed, int depth, std::vector<std::string>* stack,
              std::string* inner) {
    const fs::path target = Target(file, written);
    const std::string key = ResolvedKey(target);
    ContextFile entry;
    entry.path = target.string();
    entry.why = "import in " + file.string();
    entry.depth = depth;
    entry.refused = Refusal(target, key, allowed, depth, *stack);
    if (entry.refused.empty()) {
      auto read = ReadDiskFile(target, kMaxContextReadBytes);
      if (!read.ok()) entry.refused = "cannot read: " + read.error().message;
      if (read.ok()) {
        ++imports_;
        used_->insert(key);
        entry.bytes = entry.kept = read->size();
        const size_t at = report_->size();
        report_->push_back(entry);
        stack->push_back(key);
        *inner = Expand(target, *read, allowed, depth + 1, stack);
        stack->pop_back();
        while (!inner->empty() && inner->back() == '\n') inner->pop_back();
        (*report_)[at].with_imports = inner->size();
        return true;
      }
    }
    report_->push_back(entry);
    return false;
  }

  const ContextFileOptions& o_;
  std::vector<ContextFile>* report_;
  std::set<std::string>* used_;
  int imports_ = 0;
};

std::vector<Found> ProjectFiles(const ContextFileOptions& o) {
  std::vector<Found> out;
  for (const auto& dir : o.additional_dirs)
    for (const auto& name : o.file_names)
      if (IsFile(dir / name)) out.push_back(Found{dir / name, "additional folder"});
  const fs::path root = RepositoryRoot(o.cwd);
  std::vector<fs::path> chain;
  for (fs::path dir = o.cwd;; dir = dir.parent_path()) {
    chain.push_back(dir);
    if (dir == root || dir == dir.parent_path()) break;
  }
  std::reverse(chain.begin(), chain.end());
  for (const auto& dir : chain) {
    const char* why = dir == o.cwd  ? "working folder"
                      : dir == root ? "repository root"
                                    : "parent folder";
    for (const auto& name : o.file_names)
      if (IsFile(dir / name)) out.push_back(Found{dir / name, why});
  }
  return out;
}

// Reads each found file and expands its imports; files met before (by their resolved path) are
// refused.
std::vector<Segment> ReadFound(const ContextFileOptions& o, const std::vector<Found>& found,
                               std::vector<ContextFile>* report) {
  std::set<std::string> used;
  if (!o.skip_path.empty()) used.insert(ResolvedKey(o.skip_path));
  Expander expander(o, report, &used);
  std::vector<Segment> segments;
  for (const Found& f : found) {
    const std::string key = ResolvedKey(f.path);
    ContextFile entry;
    entry.path = f.path.string();
    entry.why = f.why;
    if (used.count(key)) {
      entry.refused = key == ResolvedKey(o.skip_path) ? "already in the instructions (the spec's)"
                                                      : "the same file as one above";
      report->push_back(entry);
      continue;
    }
    auto read = ReadDiskFile(f.path, kMaxContextReadBytes);
    if (!read.ok()) {
      entry.refused = "cannot read: " + read.error().message;
      report->push_back(entry);
      continue;
    }
    used.insert(key);
    entry.bytes = read->size();
    const size_t at = report->size();
    report->push_back(entry);
    std::vector<fs::path> allowed = o.roots;
    allowed.push_back(f.path.parent_path());
    std::vector<std::string> stack{key};
    std::string text = expander.Expand(f.path, *read, allowed, 1, &stack);
    const bool imported = report->size() > at + 1;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    (*report)[at].with_imports = imported ? text.size() : entry.bytes;
    segments.push_back(Segment{at, std::move(text)});
  }
  return segments;
}

// Applies the limits: each file to max_file_bytes, then the total, the most specific file
// (the last) served first.
void ApplyLimits(const ContextFileOptions& o, std::vector<Segment>* segments,
                 std::vector<ContextFile>* report) {
  uint64_t left = o.max_bytes;
  for (size_t i = segments->size(); i-- > 0;) {
    Segment& s = (*segments)[i];
    ContextFile& entry = (*report)[s.report];
    const uint64_t full = s.text.size();
    const uint64_t take = std::min<uint64_t>({full, o.max_file_bytes, left});
    if (take == 0 && full > 0) {
      entry.refused = "the context is full (context.maxBytes " + std::to_string(o.max_bytes) + ")";
      s.text.clear();
      continue;
    }
    entry.kept = full;
    if (take < full) {
      s.text = CutText(s.text, take);
      while (!s.text.empty() && s.text.back() == '\n') s.text.pop_back();
      entry.cut = true;
      entry.kept = s.text.size();
      s.text += "\n\n[lousho: cut to " + std::to_string(entry.kept) + " of " +
                std::to_string(full) + " bytes by the context limits; read " + entry.path +
                " for the rest]";
    }
    left -= std::min<uint64_t>(left, take);
  }
}

}  // namespace

std::vector<fs::path> UserContextPaths(const std::string& home, const std::string& config_home,
                                       const std::vector<std::string>& file_names) {
  std::vector<fs::path> candidates;
  if (!home.empty()) {
    const fs::path h(home);
    candidates = {h / ".claude" / "CLAUDE.md", h / ".codex" / "AGENTS.md",
                  h / ".gemini" / "GEMINI.md", h / ".pi" / "agent" / "AGENTS.md",
                  h / ".omp" / "agent" / "AGENTS.md"};
    if (!config_home.empty())
      candidates.push_back(fs::path(config_home) / "opencode" / "AGENTS.md");
  }
  if (!config_home.empty()) candidates.push_back(fs::path(config_home) / "lousho" / "AGENTS.md");
  if (!home.empty()) candidates.push_back(fs::path(home) / ".lousho" / "AGENTS.md");
  std::vector<fs::path> out;
  for (const auto& c : candidates)
    if (std::find(file_names.begin(), file_names.end(), c.filename().string()) != file_names.end())
      out.push_back(c);
  return out;
}

std::vector<ImportRef> FindImports(const std::string& text) {
  std::vector<ImportRef> out;
  bool fenced = false;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (IsFence(line)) {
      fenced = !fenced;
    } else if (!fenced) {
      LineImports(line, start, &out);
    }
    start = end + 1;
  }
  return out;
}

ContextFiles CollectContextFiles(const ContextFileOptions& o) {
  std::vector<Found> found;
  if (o.user)
    for (const auto& p : UserContextPaths(o.home, o.config_home, o.file_names))
      if (IsFile(p)) found.push_back(Found{p, "user"});
  if (o.project) {
    std::vector<Found> project = ProjectFiles(o);
    found.insert(found.end(), project.begin(), project.end());
  }
  ContextFiles out;
  std::vector<Segment> segments = ReadFound(o, found, &out.files);
  ApplyLimits(o, &segments, &out.files);
  std::string body;
  for (const Segment& s : segments) {
    if (s.text.empty()) continue;
    body += "## " + out.files[s.report].path + "\n\n" + s.text + "\n\n";
  }
  if (body.empty()) return out;
  out.text =
      "# Project context\n\nInstructions kept in the files below, the most general first; where "
      "they disagree, the later (more specific) one wins.\n\n" +
      body;
  while (out.text.back() == '\n') out.text.pop_back();
  out.text += "\n";
  return out;
}

}  // namespace lousho::host::context

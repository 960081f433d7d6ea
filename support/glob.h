// Glob patterns (`*`, `?`, `**`, `[abc]`, `{a,b}`) shared by find, permission rules and .gitignore.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lousho {

enum class GlobMode {
  // `*` and `?` stop at '/', `**` as a whole segment spans any number of segments
  // (`**/x` also matches `x`, `a/**` matches everything below `a`). For paths.
  kPath,
  // `*` (and `**`) match any run of characters, '/' included. For shell commands.
  kText,
};

// A compiled glob: braces are expanded once at construction. Immutable and thread-safe after
// construction; cheap to copy.
//
// Syntax: `?` one character; `*` any run; `**` (kPath) any run of whole segments; `[abc]`,
// `[a-z]`, `[!a]` / `[^a]` a character class; `{a,b}` alternatives (nested allowed); `\x` the
// character x literally. An unclosed `[` or `{` is taken literally.
class Glob {
 public:
  Glob() = default;
  Glob(std::string_view pattern, GlobMode mode);

  bool Match(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }
  GlobMode mode() const { return mode_; }

 private:
  std::string pattern_;
  GlobMode mode_ = GlobMode::kPath;
  std::vector<std::string> alternatives_;  // the pattern with braces expanded
};

// One-shot convenience for Glob(pattern, mode).Match(text).
bool GlobMatch(std::string_view pattern, std::string_view text, GlobMode mode = GlobMode::kPath);

// True when the pattern uses any glob syntax (else it is a literal string).
bool HasGlobChars(std::string_view pattern);

}  // namespace lousho

// Glob patterns (`*`, `?`, `**`, `[abc]`, `{a,b}`) shared by find, permission rules and .gitignore.
#pragma once

#include <cstdint>
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

// A compiled glob: braces are expanded once at construction and every alternative becomes one
// part of a position automaton that is run as a bit set, so a match costs
// O(text length x pattern states / 64): linear in the text, whatever the pattern (the old
// backtracking matcher was quadratic, and `*a*b*c` over a megabyte took minutes). Immutable and
// thread-safe after construction; copyable.
//
// Syntax: `?` one character; `*` any run; `**` (kPath) any run of whole segments; `[abc]`,
// `[a-z]`, `[!a]` / `[^a]` a character class; `{a,b}` alternatives (nested allowed); `\x` the
// character x literally. An unclosed `[` or `{` is taken literally.
class Glob {
 public:
  Glob() = default;
  Glob(std::string_view pattern, GlobMode mode);

  bool Match(std::string_view text) const;

  // Texts with unknown parts: `pieces` are known text with an unknown run of characters (any
  // length, any characters) between each two; {"git ", " --force"} stands for "git <?> --force".
  // MatchSome: some filling of the gaps matches (exact).
  // MatchEvery: every filling matches. Conservative: true only when, after the first piece, the
  // pattern is in a trailing any-run (as in "git *" for {"git ", ...}); may say false for a
  // pattern that would in fact match every filling.
  // With a single piece both are Match(pieces[0]); with none, both are false.
  bool MatchSome(const std::vector<std::string>& pieces) const;
  bool MatchEvery(const std::vector<std::string>& pieces) const;

  const std::string& pattern() const { return pattern_; }
  GlobMode mode() const { return mode_; }

 private:
  using Bits = std::vector<uint64_t>;
  void Closure(Bits* set) const;
  uint64_t Closure1(uint64_t set) const;  // Closure when a set is one word
  // Runs `text` from the states in *set (closed); false when no state is left.
  bool Run(std::string_view text, Bits* set) const;
  bool Accepts(const Bits& set) const;

  std::string pattern_;
  GlobMode mode_ = GlobMode::kPath;
  size_t states_ = 0;  // 0 for a default-constructed Glob, which matches nothing
  size_t words_ = 0;   // uint64_t words per state set
  // Characters that behave alike share a class; step_/loop_ hold one state set per class.
  std::vector<uint16_t> class_of_;  // 256 entries
  Bits step_;                       // state s on a class member moves to s + 1
  Bits loop_;                       // state s on a class member stays at s (a star)
  Bits eps1_;                       // state s may move to s + 1 without input (a star may be empty)
  Bits eps2_;                       // state s may move to s + 2 without input (`**/` may be empty)
  Bits start_;
  Bits accept_;
  Bits universal_;  // states that accept every remaining text
  Bits moves_;      // states with any way forward (for MatchSome's gaps)
};

// One-shot convenience for Glob(pattern, mode).Match(text).
bool GlobMatch(std::string_view pattern, std::string_view text, GlobMode mode = GlobMode::kPath);

// True when the pattern uses any glob syntax (else it is a literal string).
bool HasGlobChars(std::string_view pattern);

}  // namespace lousho

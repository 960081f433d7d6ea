// Regex: the project's one wrapper around PCRE2 (8-bit, UTF, JIT), used by grep and scripts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace lousho {

// One of PCRE2's limits on a match attempt, set for each search from the length of the text it
// searches (the bytes from the start offset to the end): `floor` plus `per_kib` for each KiB of
// that text, at most `cap`. A fixed limit has per_kib 0.
struct RegexLimit {
  uint32_t floor = 0;
  uint32_t per_kib = 0;
  uint32_t cap = 0;

  static constexpr RegexLimit Fixed(uint32_t n) { return RegexLimit{n, 0, n}; }
  uint32_t For(size_t bytes) const;
};

struct RegexOptions {
  bool case_insensitive = false;
  // `^` and `$` also match at line starts and ends, not only at the ends of the text.
  bool multiline = false;
  // `.` also matches a newline.
  bool dot_all = false;
  // The pattern is plain text: no character in it is special.
  bool literal = false;
  // Behave like an ECMAScript (JavaScript) RegExp without the `u` flag, for patterns written for
  // one (stream rules): `$` matches only at the very end (not before a final newline) unless
  // multiline, `\d` `\w` `\b` are ASCII, `[^]` matches any character and `[]` none, `\uhhhh`
  // is a code point, and a backreference to a group that took no part matches the empty string.
  bool ecmascript = false;
  // Compile to machine code when PCRE2 has a JIT for this platform. Off runs the interpreter
  // only; results are the same either way (tests compare them).
  bool jit = true;
  // Also compile machine code for PartialSearch(…, soft = true) (stream rules); without it a
  // soft partial search runs in the interpreter.
  bool jit_partial_soft = false;
  // Bounds on the work of one match attempt, so that a pattern that backtracks exponentially
  // (`(a+)+$` against "aaa…b") ends with LOUSHO_REGEX_LIMIT instead of running for hours. Each
  // grows with the text searched (see RegexLimit); the defaults are fixed.
  // match_limit counts backtracking steps from one start position (10 million: about 50 ms with
  // the JIT and 0.4 s in the interpreter on that pattern). depth_limit and heap_limit_kib bound
  // the interpreter's backtracking memory (the JIT ignores them; its stack is 8 MiB per thread):
  // `(?:a|b)*$` needs a depth of about 2.5 per character and some 100 bytes per level, so the
  // interpreter matches lines up to about 800 KB with these (the JIT manages about 300 KB, then
  // hands over).
  RegexLimit match_limit = RegexLimit::Fixed(10'000'000);
  RegexLimit depth_limit = RegexLimit::Fixed(2'000'000);
  RegexLimit heap_limit_kib = RegexLimit::Fixed(512 * 1024);
};

// A byte range [begin, end) of the searched text; both are kUnset for a group that took no part
// in the match.
struct Span {
  static constexpr size_t kUnset = std::string_view::npos;
  size_t begin = kUnset;
  size_t end = kUnset;

  bool matched() const { return begin != kUnset; }
  size_t size() const { return matched() ? end - begin : 0; }
  bool operator==(const Span&) const = default;
};

struct Match {
  // [0] is the whole match, [i] capture group i. Offsets are bytes into the searched text.
  std::vector<Span> groups;

  size_t begin() const { return groups[0].begin; }
  size_t end() const { return groups[0].end; }
  // The text of group i (empty when it is unset or out of range).
  std::string_view Group(std::string_view text, size_t i = 0) const;
};

enum class PartialKind {
  kNoMatch,  // no match can start in [start, end of text), whatever text follows
  kPartial,  // the text ends inside a possible match: more text decides
  kFull,     // a complete match, final whatever text follows
};

struct PartialMatch {
  PartialKind kind = PartialKind::kNoMatch;
  // kFull: the match. kPartial: from where the possible match starts to the end of the text
  // (text before span.begin is not needed again, except as lookbehind context).
  // kNoMatch: unset.
  Span span;
};

// A compiled regular expression in PCRE2 syntax. Immutable after Compile, so one Regex may be
// used from any number of threads at once; copies are cheap and share the compiled code.
// Scratch memory (match data and the JIT stack) is kept per thread.
//
// Text is UTF-8 and matched by characters, with Unicode properties for \w, \d, \b, [[:alpha:]]
// and case folding (PCRE2_UTF | PCRE2_UCP). Text that is not valid UTF-8 is neither an error nor
// matched as bytes: each invalid byte is a barrier that no pattern item matches (not even `.`),
// and matching goes on in the valid stretches around it (PCRE2_MATCH_INVALID_UTF). So grep finds
// "TODO" in a Latin-1 file, and `caf.` does not match "caf\xE9". Falling back to byte matching
// would make `.` and classes mean something else on such text, and an error would hide every
// valid line of a mostly-UTF-8 file. The pattern itself must be valid UTF-8.
//
// Matching errors (LOUSHO_REGEX_LIMIT when a limit in RegexOptions is hit, LOUSHO_REGEX_INVALID
// for a start offset past the end) come back as errors; no input makes these methods crash or
// run unbounded.
class Regex {
 public:
  // Errors are LOUSHO_REGEX_INVALID with PCRE2's message and the byte offset in the pattern
  // where it noticed the problem: "missing closing parenthesis at offset 4".
  static Result<Regex> Compile(std::string_view pattern, const RegexOptions& options = {});

  // Whether a match starts at or after byte `start`. Lookbehind and `^` still see text[0, start).
  // A start inside a UTF-8 character means the start of the next character. `not_bol` as for
  // PartialSearch.
  Result<bool> Search(std::string_view text, size_t start = 0, bool not_bol = false) const;
  // The first match starting at or after `start`, with its groups.
  Result<std::optional<Match>> Find(std::string_view text, size_t start = 0) const;
  // Every match from `start` on, left to right and not overlapping, as Perl's //g finds them:
  // after an empty match, the next one may not be empty at the same place. `visit` returns false
  // to stop. The error, if any, is the one that stopped the iteration.
  Status ForEachMatch(std::string_view text, const std::function<bool(const Match&)>& visit,
                      size_t start = 0) const;
  Result<std::vector<Match>> FindAll(std::string_view text, size_t start = 0) const;

  // For text that arrives in pieces: matches as if more text may follow the end
  // (PCRE2_PARTIAL_HARD), so a match that needs more text, or whose end depends on what comes
  // next (`\d+`, `\b`, `$` at the end), is kPartial rather than kFull or kNoMatch. A text that
  // ends inside a UTF-8 character is matched up to that character, and the partial character is
  // reported as a possible match start (kPartial) when nothing earlier is pending: exact for the
  // next call, conservative only in that the character may turn out not to start a match.
  // `not_bol`: text[0] is not the start of the subject, so `^` (without multiline) cannot match
  // there; for a buffer that keeps only a tail of the stream.
  //
  // `soft` (PCRE2_PARTIAL_SOFT): the text is taken as it ends now first, so a complete match
  // (`foo$`, `foo\b` at the end, the shorter `\d+`) is kFull even if more text would change it,
  // and kPartial only when no complete match exists yet: what a search of the text so far says,
  // plus where a match could still start. For asking "does it match now, and from where must I
  // look again" in one search.
  Result<PartialMatch> PartialSearch(std::string_view text, size_t start = 0, bool not_bol = false,
                                     bool soft = false) const;

  const std::string& pattern() const;
  size_t group_count() const;  // capture groups, not counting the whole match
  // The number of a named group, or nullopt when there is no such name.
  std::optional<size_t> GroupIndex(std::string_view name) const;
  // How many characters before a match start the pattern may look at (PCRE2_INFO_MAXLOOKBEHIND);
  // a stream keeps at least this much context (plus a margin: nested lookbehinds can see more).
  size_t max_lookbehind() const;
  // What PCRE2 knows about where a match can start, which lets it skip ahead instead of trying
  // every position: a known first character (or set of them), the start of a line, or nothing.
  // Joining patterns into one alternation keeps the skip only when they all have one.
  enum class StartHint { kNone, kFirstChars, kLineStart };
  StartHint start_hint() const;
  // Whether JIT code is used for complete (full) and partial matching.
  bool jit_complete() const;
  bool jit_partial() const;

 private:
  struct Code;
  explicit Regex(std::shared_ptr<const Code> code) : code_(std::move(code)) {}

  std::shared_ptr<const Code> code_;
};

}  // namespace lousho

// Regex over PCRE2: compile once (with JIT), match with per-thread scratch memory and limits.
#include "support/regex.h"

#include <pcre2.h>

#include <algorithm>

#include "support/text.h"

namespace lousho {

// Not in this file's anonymous namespace: a unity build includes this file in another, where a
// field of such a type in Regex::Code would be an error (-Wsubobject-linkage).
namespace regex_internal {
struct Limits {
  RegexLimit match, depth, heap_kib;
};
}  // namespace regex_internal

// The compiled pattern and its limits. Read-only once built, which is what PCRE2 needs to share
// the code between threads; the limits go into the calling thread's match context per search.
struct Regex::Code {
  Code() = default;
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;
  ~Code() {
    if (code) pcre2_code_free(code);
  }

  std::string pattern;
  pcre2_code* code = nullptr;
  regex_internal::Limits limits;
  uint32_t pairs = 1;  // ovector pairs: the whole match and each capture group
  uint32_t max_lookbehind = 0;
  bool jit_complete = false;
  bool jit_partial = false;
  bool jit_partial_soft = false;
};

namespace {

// After an interpreter run on a text longer than this, the thread's match data is freed: the
// interpreter keeps its backtracking frames in it, and they grow with the text (some 50 MB for
// `(?:a|b)*$` over 200 KB) and would otherwise stay allocated for the life of the thread.
constexpr size_t kKeepFramesUpTo = 16UL * 1024;
// Enough ovector pairs for most patterns, so that switching patterns rarely reallocates.
constexpr uint32_t kMinPairs = 16;
// The JIT stack grows on demand up to this; deeper matches fall back to the interpreter.
constexpr size_t kJitStackStart = 32UL * 1024;
constexpr size_t kJitStackMax = 8UL * 1024 * 1024;

PCRE2_SPTR Ptr(std::string_view s) { return reinterpret_cast<PCRE2_SPTR>(s.data()); }

std::string Pcre2Message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof buf);
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return {reinterpret_cast<const char*>(buf), static_cast<size_t>(n)};
}

// Match data and a JIT stack for the calling thread. A match data is only in use during one
// pcre2_match call, and results are copied out before any caller code runs, so one per thread
// serves every Regex (even a visitor that searches with another Regex).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    Release();
    if (context_) pcre2_match_context_free(context_);
    if (stack_) pcre2_jit_stack_free(stack_);
  }

  pcre2_match_data* Get(uint32_t pairs) {
    if (md_ && pairs_ >= pairs) return md_;
    Release();
    pairs_ = std::max(pairs, kMinPairs);
    md_ = pcre2_match_data_create(pairs_, nullptr);
    return md_;
  }
  void Release() {
    if (md_) pcre2_match_data_free(md_);
    md_ = nullptr;
    pairs_ = 0;
  }
  // Null when the stack cannot be allocated: PCRE2 then uses 32 KiB of the machine stack.
  pcre2_jit_stack* Stack() {
    if (!stack_) stack_ = pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr);
    return stack_;
  }
  // The match context of this thread's searches, with limits set for each (null: no memory).
  pcre2_match_context* Context();

 private:
  pcre2_match_data* md_ = nullptr;
  uint32_t pairs_ = 0;
  pcre2_jit_stack* stack_ = nullptr;
  pcre2_match_context* context_ = nullptr;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

pcre2_jit_stack* ThreadJitStack(void* /*data*/) { return ThreadScratch().Stack(); }

pcre2_match_context* Scratch::Context() {
  if (!context_) {
    context_ = pcre2_match_context_create(nullptr);
    // The JIT stack cannot be shared between threads, so the callback hands out the caller's.
    if (context_) pcre2_jit_stack_assign(context_, ThreadJitStack, nullptr);
  }
  return context_;
}

Error MatchError(int rc) {
  switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
    case PCRE2_ERROR_HEAPLIMIT:
    case PCRE2_ERROR_NOMEMORY:
      return MakeError(ErrorCode::kRegexLimit,
                       "regular expression " + Pcre2Message(rc) +
                           ": it backtracks too much on this text; simplify the pattern (nested "
                           "repeats such as (a+)+ are the usual cause)");
    default:
      return MakeError(ErrorCode::kRegexInvalid,
                       "regular expression match failed: " + Pcre2Message(rc));
  }
}

// The length of the valid UTF-8 character at text[i], or 0 when none starts there. Follows
// RFC 3629 as PCRE2 does: no overlong forms, no surrogates, nothing above U+10FFFF.
size_t CharLength(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = at(i);
  if (b < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - i < len || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return len;
}

// Where the valid UTF-8 run that ends `text` begins: just after the last invalid byte, or 0.
size_t ValidSuffixStart(std::string_view text) {
  size_t from = 0;
  for (size_t i = 0; i < text.size();) {
    size_t len = CharLength(text, i);
    if (len == 0) {
      from = ++i;
    } else {
      i += len;
    }
  }
  return from;
}

// A start offset inside a valid character moves to the character's end: the JIT and the
// interpreter disagree about where such a search may match (`x*` matches empty at the offset
// itself with one and at the next character with the other).
size_t AlignStart(std::string_view text, size_t start) {
  if (start >= text.size() || (static_cast<unsigned char>(text[start]) & 0xC0) != 0x80)
    return start;
  for (size_t back = 1; back <= 3 && back <= start; ++back) {
    size_t lead = start - back;
    if ((static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) continue;
    size_t len = CharLength(text, lead);
    return lead + len > start ? lead + len : start;
  }
  return start;
}

}  // namespace

uint32_t RegexLimit::For(size_t bytes) const {
  const uint64_t grown = floor + static_cast<uint64_t>(per_kib) * (bytes / 1024) +
                         static_cast<uint64_t>(per_kib) * (bytes % 1024) / 1024;
  return static_cast<uint32_t>(std::min<uint64_t>(grown, cap));
}

std::string_view Match::Group(std::string_view text, size_t i) const {
  if (i >= groups.size()) return {};
  const Span& s = groups[i];
  if (!s.matched() || s.end < s.begin || s.end > text.size()) return {};
  return text.substr(s.begin, s.end - s.begin);
}

Result<Regex> Regex::Compile(std::string_view pattern, const RegexOptions& options) {
  uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
  if (options.case_insensitive) flags |= PCRE2_CASELESS;
  if (options.dot_all && !options.literal) flags |= PCRE2_DOTALL;
  if (options.ecmascript && !options.literal)
    flags |=
        PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF;
  if (options.literal) {
    // PCRE2 refuses UCP and MULTILINE beside LITERAL; plain text has no use for either.
    flags |= PCRE2_LITERAL;
  } else {
    // JavaScript's classes are ASCII (without its `u` flag); case folding stays Unicode.
    if (!options.ecmascript) flags |= PCRE2_UCP;
    if (options.multiline) flags |= PCRE2_MULTILINE;
  }
  auto c = std::make_shared<Code>();
  c->pattern = std::string(pattern);
  int err = 0;
  PCRE2_SIZE offset = 0;
  c->code = pcre2_compile(Ptr(pattern), pattern.size(), flags, &err, &offset, nullptr);
  if (!c->code)
    return MakeError(ErrorCode::kRegexInvalid,
                     Pcre2Message(err) + " at offset " + std::to_string(offset));

  uint32_t captures = 0;
  pcre2_pattern_info(c->code, PCRE2_INFO_CAPTURECOUNT, &captures);
  c->pairs = captures + 1;
  pcre2_pattern_info(c->code, PCRE2_INFO_MAXLOOKBEHIND, &c->max_lookbehind);

  if (options.jit) {
    // Each mode is separate machine code; without the partial one, PartialSearch would silently
    // run in the interpreter. No JIT on this platform (or no memory for it) leaves both false.
    if (pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD) == 0) {
      c->jit_complete = c->jit_partial = true;
    } else {
      c->jit_complete = pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE) == 0;
    }
    if (options.jit_partial_soft)
      c->jit_partial_soft = pcre2_jit_compile(c->code, PCRE2_JIT_PARTIAL_SOFT) == 0;
  }

  c->limits =
      regex_internal::Limits{options.match_limit, options.depth_limit, options.heap_limit_kib};
  return Regex(std::move(c));
}

namespace {

// One pcre2_match call. Returns PCRE2's code when it is a match (>= 0), PCRE2_ERROR_NOMATCH or
// PCRE2_ERROR_PARTIAL, with the offsets copied into *groups (when given) for a match or partial
// match; any other code becomes an Error.
Result<int> Exec(const pcre2_code* code, const regex_internal::Limits& limits, uint32_t pairs,
                 bool jit, std::string_view text, size_t start, uint32_t flags,
                 std::vector<Span>* groups) {
  if (start > text.size())
    return MakeError(ErrorCode::kRegexInvalid, "start offset " + std::to_string(start) +
                                                   " is past the end of the text (" +
                                                   std::to_string(text.size()) + " bytes)");
  start = AlignStart(text, start);
  Scratch& scratch = ThreadScratch();
  pcre2_match_data* md = scratch.Get(pairs);
  pcre2_match_context* context = scratch.Context();
  if (!md || !context) return MatchError(PCRE2_ERROR_NOMEMORY);
  // The limits follow the text this search may look at, so a short text cannot cost what a long
  // one may.
  const size_t searched = text.size() - start;
  pcre2_set_match_limit(context, limits.match.For(searched));
  pcre2_set_depth_limit(context, limits.depth.For(searched));
  pcre2_set_heap_limit(context, limits.heap_kib.For(searched));
  int rc = pcre2_match(code, Ptr(text), text.size(), start, flags, md, context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    // The JIT stack is bounded; the interpreter keeps its frames on the heap, where the depth
    // and heap limits bound them instead.
    jit = false;
    rc = pcre2_match(code, Ptr(text), text.size(), start, flags | PCRE2_NO_JIT, md, context);
  }
  bool matched = rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
  if (matched && groups) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    // A partial match sets only the first pair; a match sets the first rc pairs.
    size_t set = std::min<size_t>(rc > 0 ? static_cast<size_t>(rc) : 1, pairs);
    groups->assign(pairs, Span{});
    for (size_t i = 0; i < set; ++i) {
      if (ov[2 * i] == PCRE2_UNSET) continue;
      (*groups)[i] = Span{ov[2 * i], ov[2 * i + 1]};
    }
  }
  if (!jit && text.size() > kKeepFramesUpTo) scratch.Release();
  if (matched || rc == PCRE2_ERROR_NOMATCH) return rc;
  return MatchError(rc);
}

}  // namespace

Result<bool> Regex::Search(std::string_view text, size_t start, bool not_bol) const {
  auto rc = Exec(code_->code, code_->limits, code_->pairs, code_->jit_complete, text, start,
                 not_bol ? PCRE2_NOTBOL : 0, nullptr);
  if (!rc.ok()) return rc.error();
  return *rc >= 0;
}

Result<std::optional<Match>> Regex::Find(std::string_view text, size_t start) const {
  Match m;
  auto rc = Exec(code_->code, code_->limits, code_->pairs, code_->jit_complete, text, start, 0,
                 &m.groups);
  if (!rc.ok()) return rc.error();
  if (*rc < 0) return std::optional<Match>();
  return std::optional<Match>(std::move(m));
}

Status Regex::ForEachMatch(std::string_view text, const std::function<bool(const Match&)>& visit,
                           size_t start) const {
  size_t pos = start;
  uint32_t flags = 0;
  Match m;
  while (true) {
    auto rc = Exec(code_->code, code_->limits, code_->pairs, code_->jit_complete, text, pos, flags,
                   &m.groups);
    if (!rc.ok()) return rc.error();
    if (*rc < 0) return Status::Ok();
    size_t begin = m.begin();
    size_t end = m.end();
    if (!visit(m)) return Status::Ok();
    if (end > pos) {
      pos = end;
      // The next match may not be empty right where this one ended.
      flags = begin == end ? PCRE2_NOTEMPTY_ATSTART : 0;
    } else if (flags == 0) {
      flags = PCRE2_NOTEMPTY_ATSTART;
    } else {
      // Only \K can report an empty match here; step over one character to make progress.
      if (pos >= text.size()) return Status::Ok();
      ++pos;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
      flags = 0;
    }
  }
}

Result<std::vector<Match>> Regex::FindAll(std::string_view text, size_t start) const {
  std::vector<Match> all;
  Status st = ForEachMatch(
      text,
      [&](const Match& m) {
        all.push_back(m);
        return true;
      },
      start);
  if (!st.ok()) return st.error();
  return all;
}

Result<PartialMatch> Regex::PartialSearch(std::string_view text, size_t start, bool not_bol,
                                          bool soft) const {
  if (start > text.size())
    return MakeError(ErrorCode::kRegexInvalid, "start offset " + std::to_string(start) +
                                                   " is past the end of the text (" +
                                                   std::to_string(text.size()) + " bytes)");
  // PCRE2 cannot be asked about a text that stops inside a character: with the JIT it says "no
  // match" for `caf\xC3` against `café`, the interpreter says "partial". So the unfinished
  // character is left out and stands for "more text follows" itself.
  start = AlignStart(text, start);
  size_t head = text.size() - IncompleteUtf8Tail(text);
  if (start > head) return PartialMatch{PartialKind::kPartial, Span{start, text.size()}};
  std::string_view known = text.substr(0, head);
  uint32_t bol = not_bol ? PCRE2_NOTBOL : 0;
  std::vector<Span> groups;
  // Nothing matches an invalid byte, so a match starting before the last one cannot reach the
  // end of the text: it is final, and ordinary matching finds it. PARTIAL_HARD is left for the
  // valid run at the end, because across invalid bytes PCRE2 10.42's interpreter reports
  // partial matches the JIT does not, and can even skip a complete match before them.
  size_t valid_from = ValidSuffixStart(known);
  size_t from = start;
  if (start < valid_from) {
    auto rc = Exec(code_->code, code_->limits, code_->pairs, code_->jit_complete, known, start, bol,
                   &groups);
    if (!rc.ok()) return rc.error();
    if (*rc >= 0 && groups[0].begin < valid_from)
      return PartialMatch{PartialKind::kFull, groups[0]};
    from = valid_from;
  }
  auto rc = Exec(code_->code, code_->limits, code_->pairs,
                 soft ? code_->jit_partial_soft : code_->jit_partial, known, from,
                 (soft ? PCRE2_PARTIAL_SOFT : PCRE2_PARTIAL_HARD) | bol, &groups);
  if (!rc.ok()) return rc.error();
  if (*rc >= 0) return PartialMatch{PartialKind::kFull, groups[0]};
  // A partial match at the very end has inspected nothing (the interpreter reports `\b` there,
  // the JIT does not); like "no match", it only says that a match may start where new text will.
  if (*rc == PCRE2_ERROR_PARTIAL && (groups[0].begin < head || head < text.size()))
    return PartialMatch{PartialKind::kPartial, Span{groups[0].begin, text.size()}};
  if (head < text.size()) return PartialMatch{PartialKind::kPartial, Span{head, text.size()}};
  return PartialMatch{};
}

Regex::StartHint Regex::start_hint() const {
  uint32_t type = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_FIRSTCODETYPE, &type);
  if (type == 1) return StartHint::kFirstChars;
  if (type == 2) return StartHint::kLineStart;
  const uint8_t* bitmap = nullptr;
  pcre2_pattern_info(code_->code, PCRE2_INFO_FIRSTBITMAP, &bitmap);
  return bitmap ? StartHint::kFirstChars : StartHint::kNone;
}

const std::string& Regex::pattern() const { return code_->pattern; }
size_t Regex::group_count() const { return code_->pairs - 1; }
size_t Regex::max_lookbehind() const { return code_->max_lookbehind; }
bool Regex::jit_complete() const { return code_->jit_complete; }
bool Regex::jit_partial() const { return code_->jit_partial; }

std::optional<size_t> Regex::GroupIndex(std::string_view name) const {
  std::string z(name);  // PCRE2 wants it NUL-terminated
  int n = pcre2_substring_number_from_name(code_->code, reinterpret_cast<PCRE2_SPTR>(z.c_str()));
  if (n < 0) return std::nullopt;
  return static_cast<size_t>(n);
}

}  // namespace lousho

// Glob matching: brace expansion once, then one bit-parallel position automaton over all
// alternatives.
#include "support/glob.h"

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <map>
#include <utility>

namespace lousho {
namespace {

// Above this many alternatives, brace expansion stops and the rest is taken literally; patterns
// come from people and models, and a runaway `{a,b}{c,d}...` must not eat memory.
constexpr size_t kMaxAlternatives = 1024;

// The ']' closing the character class at p[open] == '['; `open` itself when it is unclosed.
size_t SkipClassForBraces(std::string_view p, size_t open) {
  size_t j = open + 1;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
  if (j < p.size() && p[j] == ']') ++j;
  while (j < p.size() && p[j] != ']') ++j;
  return j < p.size() ? j : open;
}

// Finds the '}' closing the '{' at `open`, and the top-level commas inside. Returns npos when
// the brace is unclosed.
size_t FindBraceClose(std::string_view p, size_t open, std::vector<size_t>* commas) {
  int depth = 0;
  for (size_t i = open; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == '[') {
      i = SkipClassForBraces(p, i);  // braces inside a character class are literal
      continue;
    }
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i;
    } else if (c == ',' && depth == 1) {
      commas->push_back(i);
    }
  }
  return std::string_view::npos;
}

void Expand(std::string_view p, std::vector<std::string>* out) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] != '{') continue;
    std::vector<size_t> commas;
    size_t close = FindBraceClose(p, i, &commas);
    if (close == std::string_view::npos) return out->push_back(std::string(p));
    if (commas.empty()) continue;  // `{x}` is literal, as in bash
    std::string_view prefix = p.substr(0, i);
    std::string_view suffix = p.substr(close + 1);
    size_t start = i + 1;
    commas.push_back(close);
    for (size_t end : commas) {
      if (out->size() >= kMaxAlternatives) return;
      std::string alt(prefix);
      alt.append(p.substr(start, end - start));
      alt.append(suffix);
      Expand(alt, out);
      start = end + 1;
    }
    return;
  }
  if (out->size() < kMaxAlternatives) out->push_back(std::string(p));
}

// Matches a class starting at p[pi] == '['. Sets *next to the index after ']'. Returns -1 when
// the class is unclosed (then '[' is literal), else 1 on match and 0 on no match.
int MatchClass(std::string_view p, size_t pi, char c, size_t* next) {
  size_t j = pi + 1;
  bool negate = false;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
    negate = true;
    ++j;
  }
  bool matched = false;
  bool first = true;
  while (j < p.size() && (p[j] != ']' || first)) {
    first = false;
    char lo = p[j];
    if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
    char hi = lo;
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      hi = p[j + 2];
      if (hi == '\\' && j + 3 < p.size()) ++j, hi = p[j + 2];
      j += 2;
    }
    auto uc = static_cast<unsigned char>(c);
    if (uc >= static_cast<unsigned char>(lo) && uc <= static_cast<unsigned char>(hi))
      matched = true;
    ++j;
  }
  if (j >= p.size()) return -1;
  *next = j + 1;
  return matched != negate ? 1 : 0;
}

// One automaton state while compiling. A state sits before a pattern token: `step` are the
// characters that consume the token, `loop` those a star swallows while staying put.
struct RawState {
  std::bitset<256> step;
  std::bitset<256> loop;
  bool eps1 = false;
  bool eps2 = false;
  bool accept = false;
};

std::bitset<256> AllChars(bool path) {
  std::bitset<256> all;
  all.set();
  if (path) all.reset('/');
  return all;
}

// The states of a run of stars at p[pi]; returns the index past it.
size_t CompileStars(std::string_view p, size_t pi, bool path, std::vector<RawState>* out) {
  size_t np = pi;
  while (np < p.size() && p[np] == '*') ++np;
  RawState st;
  if (path && np - pi == 1) {
    st.loop = AllChars(true);  // a single `*` stops at '/'
  } else {
    st.loop = AllChars(false);
    bool seg_start = pi == 0 || p[pi - 1] == '/';
    if (path && seg_start && np < p.size() && p[np] == '/') {
      // `**/`: nothing, or any run ending in '/'. An entry state that skips both or enters
      // a star which leaves only on a '/'.
      RawState entry;
      entry.eps1 = true;
      entry.eps2 = true;
      out->push_back(entry);
      st.step.set('/');
      out->push_back(st);
      return np + 1;
    }
    // Text mode, a trailing `**`, or `**` inside a segment: anything, '/' included.
  }
  st.eps1 = true;
  out->push_back(st);
  return np;
}

// The state of a character class at p[pi] == '['; returns the index past it, or npos when it
// is unclosed (and adds nothing: the '[' is literal).
size_t CompileClass(std::string_view p, size_t pi, bool path, std::vector<RawState>* out) {
  size_t next = 0;
  if (MatchClass(p, pi, 'x', &next) < 0) return std::string_view::npos;
  RawState st;
  for (int ch = 0; ch < 256; ++ch) {
    size_t ignored = 0;
    if (MatchClass(p, pi, static_cast<char>(ch), &ignored) == 1) st.step.set(ch);
  }
  if (path) st.step.reset('/');
  out->push_back(st);
  return next;
}

// The state of the token at p[pi]: a star run, `?`, a class, or a (maybe escaped) character;
// returns the index past it.
size_t CompileToken(std::string_view p, size_t pi, bool path, std::vector<RawState>* out) {
  char c = p[pi];
  if (c == '*') return CompileStars(p, pi, path, out);
  RawState st;
  if (c == '?') {
    st.step = AllChars(path);
    out->push_back(st);
    return pi + 1;
  }
  if (c == '[') {
    const size_t next = CompileClass(p, pi, path, out);
    if (next != std::string_view::npos) return next;
  }
  if (c == '\\' && pi + 1 < p.size()) c = p[++pi];
  st.step.set(static_cast<unsigned char>(c));
  out->push_back(st);
  return pi + 1;
}

// The states of one brace-free alternative, ending with its accepting state.
std::vector<RawState> CompileAlternative(std::string_view p, bool path) {
  std::vector<RawState> out;
  for (size_t pi = 0; pi < p.size();) pi = CompileToken(p, pi, path, &out);
  RawState accept;
  accept.accept = true;
  out.push_back(accept);
  return out;
}

bool Test(const std::vector<uint64_t>& bits, size_t i) { return (bits[i / 64] >> (i % 64)) & 1; }
void Set(std::vector<uint64_t>* bits, size_t i) { (*bits)[i / 64] |= uint64_t{1} << (i % 64); }

// out |= in << by (by is 1 or 2), across words.
void OrShifted(const uint64_t* in, size_t words, unsigned by, uint64_t* out) {
  uint64_t carry = 0;
  for (size_t w = 0; w < words; ++w) {
    uint64_t v = in[w];
    out[w] |= (v << by) | carry;
    carry = v >> (64 - by);
  }
}

// The set of the states for which `has` holds, in `words` words.
template <typename Pred>
std::vector<uint64_t> StatesWhere(const std::vector<RawState>& raw, size_t words, Pred has) {
  std::vector<uint64_t> set(words, 0);
  for (size_t s = 0; s < raw.size(); ++s)
    if (has(raw[s])) Set(&set, s);
  return set;
}

// Characters whose columns (the states that step or loop on them) are equal share one class:
// returns each character's class, and appends each class's step and loop sets (of `words`
// words) to *step and *loop.
std::vector<uint16_t> GroupCharacters(const std::vector<RawState>& raw, size_t words,
                                      std::vector<uint64_t>* step, std::vector<uint64_t>* loop) {
  using Set64 = std::vector<uint64_t>;
  std::vector<uint16_t> class_of(256, 0);
  std::map<std::pair<Set64, Set64>, uint16_t> ids;
  for (int ch = 0; ch < 256; ++ch) {
    Set64 steps = StatesWhere(raw, words, [ch](const RawState& st) { return st.step.test(ch); });
    Set64 loops = StatesWhere(raw, words, [ch](const RawState& st) { return st.loop.test(ch); });
    auto [it, added] = ids.emplace(std::make_pair(steps, loops), static_cast<uint16_t>(ids.size()));
    if (added) {
      step->insert(step->end(), steps.begin(), steps.end());
      loop->insert(loop->end(), loops.begin(), loops.end());
    }
    class_of[ch] = it->second;
  }
  return class_of;
}

}  // namespace

Glob::Glob(std::string_view pattern, GlobMode mode) : pattern_(pattern), mode_(mode) {
  std::vector<std::string> alternatives;
  Expand(pattern_, &alternatives);
  const bool path = mode_ == GlobMode::kPath;
  std::vector<RawState> raw;
  std::vector<size_t> starts;
  for (const auto& alt : alternatives) {
    starts.push_back(raw.size());
    std::vector<RawState> part = CompileAlternative(alt, path);
    raw.insert(raw.end(), part.begin(), part.end());
  }
  states_ = raw.size();
  words_ = (states_ + 1 + 63) / 64;  // a spare bit: shifts past the last state land there
  auto empty = [&] { return Bits(words_, 0); };
  eps1_ = StatesWhere(raw, words_, [](const RawState& st) { return st.eps1; });
  eps2_ = StatesWhere(raw, words_, [](const RawState& st) { return st.eps2; });
  accept_ = StatesWhere(raw, words_, [](const RawState& st) { return st.accept; });
  moves_ = StatesWhere(raw, words_,
                       [](const RawState& st) { return st.eps1 || st.eps2 || st.step.any(); });
  start_ = universal_ = empty();
  for (size_t s : starts) Set(&start_, s);
  Closure(&start_);
  class_of_ = GroupCharacters(raw, words_, &step_, &loop_);
  // A state is universal when it loops on every character and reaches acceptance for free.
  for (size_t s = 0; s < states_; ++s) {
    if (!raw[s].loop.all()) continue;
    Bits one = empty();
    Set(&one, s);
    Closure(&one);
    if (Accepts(one)) Set(&universal_, s);
  }
}

void Glob::Closure(Bits* set) const {
  if (words_ == 1) {
    (*set)[0] = Closure1((*set)[0]);
    return;
  }
  // Empty moves only go forward and their chains are short (`**/` then `*`): few rounds.
  Bits add(words_, 0);
  Bits masked(words_, 0);
  for (;;) {
    std::fill(add.begin(), add.end(), 0);
    for (size_t w = 0; w < words_; ++w) masked[w] = (*set)[w] & eps1_[w];
    OrShifted(masked.data(), words_, 1, add.data());
    for (size_t w = 0; w < words_; ++w) masked[w] = (*set)[w] & eps2_[w];
    OrShifted(masked.data(), words_, 2, add.data());
    bool grew = false;
    for (size_t w = 0; w < words_; ++w) {
      if (add[w] & ~(*set)[w]) grew = true;
      (*set)[w] |= add[w];
    }
    if (!grew) return;
  }
}

uint64_t Glob::Closure1(uint64_t set) const {
  for (;;) {
    uint64_t next = set | ((set & eps1_[0]) << 1) | ((set & eps2_[0]) << 2);
    if (next == set) return set;
    set = next;
  }
}

bool Glob::Run(std::string_view text, Bits* set) const {
  if (words_ == 1) {
    // The common case, patterns of up to 63 states: one machine word per step.
    uint64_t cur = (*set)[0];
    for (char ch : text) {
      size_t cls = class_of_[static_cast<unsigned char>(ch)];
      cur = ((cur & step_[cls]) << 1) | (cur & loop_[cls]);
      if (cur == 0) break;
      cur = Closure1(cur);
    }
    (*set)[0] = cur;
    return cur != 0;
  }
  Bits next(words_, 0);
  Bits masked(words_, 0);
  for (char ch : text) {
    size_t cls = class_of_[static_cast<unsigned char>(ch)];
    const uint64_t* step = &step_[cls * words_];
    const uint64_t* loop = &loop_[cls * words_];
    for (size_t w = 0; w < words_; ++w) {
      masked[w] = (*set)[w] & step[w];
      next[w] = (*set)[w] & loop[w];
    }
    OrShifted(masked.data(), words_, 1, next.data());
    bool any = false;
    for (size_t w = 0; w < words_; ++w) any |= next[w] != 0;
    if (!any) {
      std::fill(set->begin(), set->end(), 0);
      return false;
    }
    set->swap(next);
    Closure(set);
  }
  return true;
}

bool Glob::Accepts(const Bits& set) const {
  for (size_t w = 0; w < words_; ++w)
    if (set[w] & accept_[w]) return true;
  return false;
}

bool Glob::Match(std::string_view text) const {
  if (states_ == 0) return false;
  Bits set = start_;
  return Run(text, &set) && Accepts(set);
}

bool Glob::MatchSome(const std::vector<std::string>& pieces) const {
  if (states_ == 0 || pieces.empty()) return false;
  Bits set = start_;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) {
      // A gap: every state some text reaches from the current ones. Moves only go forward, so
      // one pass in state order finds them all.
      for (size_t s = 0; s < states_; ++s) {
        if (!Test(set, s) || !Test(moves_, s)) continue;
        if (s + 1 < states_) Set(&set, s + 1);
        if (Test(eps2_, s) && s + 2 < states_) Set(&set, s + 2);
      }
    }
    if (!Run(pieces[i], &set)) return false;
  }
  return Accepts(set);
}

bool Glob::MatchEvery(const std::vector<std::string>& pieces) const {
  if (states_ == 0 || pieces.empty()) return false;
  if (pieces.size() == 1) return Match(pieces[0]);
  Bits set = start_;
  if (!Run(pieces[0], &set)) return false;
  for (size_t w = 0; w < words_; ++w)
    if (set[w] & universal_[w]) return true;
  return false;
}

bool GlobMatch(std::string_view pattern, std::string_view text, GlobMode mode) {
  return Glob(pattern, mode).Match(text);
}

bool HasGlobChars(std::string_view pattern) {
  return pattern.find_first_of("*?[{\\") != std::string_view::npos;
}

}  // namespace lousho

// Glob matching: brace expansion once, then a memoized recursive matcher per alternative.
#include "support/glob.h"

#include <cstdint>

namespace lousho {
namespace {

// Above this many alternatives, brace expansion stops and the rest is taken literally; patterns
// come from people and models, and a runaway `{a,b}{c,d}...` must not eat memory.
constexpr size_t kMaxAlternatives = 1024;

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
      // Braces inside a character class are literal.
      size_t j = i + 1;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') ++j;
      if (j < p.size()) i = j;
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

class Matcher {
 public:
  Matcher(std::string_view p, std::string_view t, GlobMode mode)
      : p_(p), t_(t), path_(mode == GlobMode::kPath), memo_((p.size() + 1) * (t.size() + 1), 0) {}

  bool Run() { return Match(0, 0); }

 private:
  // memo_: 0 unknown, 1 false, 2 true. Keeps `*a*a*a...` patterns polynomial.
  bool Match(size_t pi, size_t ti) {
    uint8_t& m = memo_[pi * (t_.size() + 1) + ti];
    if (m != 0) return m == 2;
    bool r = Compute(pi, ti);
    m = r ? 2 : 1;
    return r;
  }

  bool Compute(size_t pi, size_t ti) {
    while (pi < p_.size()) {
      char c = p_[pi];
      if (c == '*') {
        bool dbl = pi + 1 < p_.size() && p_[pi + 1] == '*';
        if (!path_) {
          size_t np = pi + 1;
          while (np < p_.size() && p_[np] == '*') ++np;
          for (size_t k = ti; k <= t_.size(); ++k)
            if (Match(np, k)) return true;
          return false;
        }
        if (dbl) {
          size_t np = pi + 2;
          while (np < p_.size() && p_[np] == '*') ++np;
          bool seg_start = pi == 0 || p_[pi - 1] == '/';
          if (seg_start && np < p_.size() && p_[np] == '/') {
            // `**/`: zero or more whole segments.
            if (Match(np + 1, ti)) return true;
            for (size_t k = ti; k < t_.size(); ++k)
              if (t_[k] == '/' && Match(np + 1, k + 1)) return true;
            return false;
          }
          // Trailing `**` (or `**` inside a segment): anything, '/' included.
          for (size_t k = ti; k <= t_.size(); ++k)
            if (Match(np, k)) return true;
          return false;
        }
        // Single `*`: any run without '/'.
        for (size_t k = ti;; ++k) {
          if (Match(pi + 1, k)) return true;
          if (k >= t_.size() || t_[k] == '/') return false;
        }
      }
      if (ti >= t_.size()) return false;
      if (c == '?') {
        if (path_ && t_[ti] == '/') return false;
        ++pi, ++ti;
        continue;
      }
      if (c == '[') {
        size_t next = 0;
        int r = MatchClass(p_, pi, t_[ti], &next);
        if (r >= 0) {
          if (r == 0 || (path_ && t_[ti] == '/')) return false;
          pi = next, ++ti;
          continue;
        }
        // Unclosed: literal '['.
      }
      if (c == '\\' && pi + 1 < p_.size()) c = p_[++pi];
      if (t_[ti] != c) return false;
      ++pi, ++ti;
    }
    return ti == t_.size();
  }

  std::string_view p_;
  std::string_view t_;
  bool path_;
  std::vector<uint8_t> memo_;
};

}  // namespace

Glob::Glob(std::string_view pattern, GlobMode mode) : pattern_(pattern), mode_(mode) {
  Expand(pattern_, &alternatives_);
}

bool Glob::Match(std::string_view text) const {
  for (const auto& alt : alternatives_)
    if (Matcher(alt, text, mode_).Run()) return true;
  return false;
}

bool GlobMatch(std::string_view pattern, std::string_view text, GlobMode mode) {
  return Glob(pattern, mode).Match(text);
}

bool HasGlobChars(std::string_view pattern) {
  return pattern.find_first_of("*?[{\\") != std::string_view::npos;
}

}  // namespace lousho

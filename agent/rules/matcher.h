// Stream rules: matching regexes against a text that grows by deltas, at a cost per delta that
// follows the delta, not the text, with the answer of a search over the whole text each time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/regex.h"

namespace lousho::agent::rules {

// One regex over one growing text. After every Update the answer equals `Search(text)`: whether
// the regex matches anywhere in the whole text so far (a match stays a match: the caller acts on
// the first). Incrementally, each Update is one soft partial search (PCRE2_PARTIAL_SOFT) from
// where a match could still start (the start of the last partial match, or the end of the text
// when there was none) with a context before it for lookbehind, `\b` and `^`: it finds a match
// as the text ends now, or else the new place a match could still start.
// Not incremental (patterns with \G, \A, verbs): the whole text is searched every time.
class StreamMatcher {
 public:
  StreamMatcher(const Regex* regex, bool incremental);

  // `text` is the whole stream since the last Reset: the previous text plus what was appended,
  // ending on a whole UTF-8 character. Errors (a matching limit) come back; the matcher then
  // answers "no match" for this text and searches again next time.
  Result<bool> Update(std::string_view text);
  void Reset();
  bool matched() const { return matched_; }

 private:
  const Regex* regex_;
  bool incremental_;
  size_t context_chars_;
  size_t resume_ = 0;  // no match can start before this byte
  bool matched_ = false;
};

// Whether incremental matching is exact for a pattern (see StreamMatcher).
bool IncrementalSafe(std::string_view pattern);
// Whether a pattern can be one alternative of a larger one: no backreference or subroutine call
// that counts groups (they would count the other alternatives' groups too).
bool Combinable(std::string_view pattern);

// Several conditions over one growing text, each with a tag. Conditions that can be are joined
// into alternations `(?:a)|(?:b)|…` matched as one StreamMatcher each, so a delta costs a few
// searches whatever the number of rules; when one matches, each of its conditions is searched
// once over the whole text to learn which, and the ones that did not match go on alone. The
// others run alone from the start. Conditions are joined by what PCRE2 knows of where their
// matches start (a first character, a line start, nothing) and by whether they look behind:
// one pattern of another kind in an alternation makes PCRE2 try every position for all of them
// (ten times slower on the benchmark's 100 rules).
class ConditionSet {
 public:
  struct Item {
    std::string pattern;  // as written (a leading flags group is kept: it scopes to its group)
    const Regex* regex;   // compiled alone
    size_t tag;
  };
  struct Joined {
    std::shared_ptr<const Regex> regex;
    std::vector<size_t> members;  // indices into the items
  };
  // Compiled alternations by their pattern, to share between calls of Join.
  using JoinCache = std::map<std::string, std::shared_ptr<const Regex>>;
  // The joined regexes for `items`. Costly: compile once per set of conditions and share; with
  // a cache, an alternation already compiled (the same conditions of one kind) is reused.
  static std::vector<Joined> Join(const std::vector<Item>& items, JoinCache* cache = nullptr);

  // `joined`: what Join returned for these items (empty: all run alone).
  ConditionSet(std::vector<Item> items, std::vector<Joined> joined);

  // A condition whose search failed (a matching limit: it backtracks too much for its text).
  struct Failure {
    size_t tag;
    Error error;
  };
  // Feeds the whole text so far (see StreamMatcher::Update); returns the tags of the conditions
  // that match for the first time. A condition whose search fails is dropped (never searched
  // here again) and added to *failures; a joined search that fails only makes its members go
  // on alone.
  std::vector<size_t> Update(std::string_view text, std::vector<Failure>* failures = nullptr);
  bool empty() const { return items_.empty(); }

 private:
  struct Group {
    Joined joined;
    std::optional<StreamMatcher> matcher;
  };
  void RunAlone(size_t i, std::string_view text, std::vector<size_t>* hits,
                std::vector<Failure>* failures);
  // Ends a joined search: its members still searched go on alone, from the start of the text.
  void Split(Group& g);
  bool Live(size_t i) const { return !reported_[i] && !dropped_[i]; }

  std::vector<Item> items_;
  std::vector<Group> groups_;
  std::vector<std::optional<StreamMatcher>> alone_;  // per item, when not (or no longer) joined
  std::vector<bool> reported_;
  std::vector<bool> dropped_;
};

}  // namespace lousho::agent::rules

// Stream rules: incremental matching over PCRE2 partial matches, and joined condition sets.
#include "agent/rules/matcher.h"

#include "agent/rules/rule.h"

namespace lousho::agent::rules {

namespace {

// The byte offset `chars` UTF-8 characters before `pos` (or 0).
size_t BackChars(std::string_view text, size_t pos, size_t chars) {
  size_t i = pos;
  while (chars > 0 && i > 0) {
    --i;
    while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
    --chars;
  }
  return i;
}

// An alternation from the cache, else compiled (and cached); null when it does not compile.
std::shared_ptr<const Regex> CompileJoined(const std::string& joined,
                                           ConditionSet::JoinCache* cache) {
  if (cache)
    if (auto it = cache->find(joined); it != cache->end()) return it->second;
  auto compiled = Regex::Compile(joined, ConditionOptions());
  if (!compiled.ok()) return nullptr;
  auto re = std::make_shared<const Regex>(std::move(*compiled));
  if (cache) (*cache)[joined] = re;
  return re;
}

}  // namespace

bool IncrementalSafe(std::string_view p) {
  // \G and \A look at where matching started or at the subject's start, which a resumed search
  // moves; verbs and callouts change backtracking in ways partial matching does not promise to
  // keep. Conservative: `[\G]` counts too.
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == '\\') {
      if (p[i + 1] == 'G' || p[i + 1] == 'A') return false;
      ++i;
      continue;
    }
    if (p[i] == '(' &&
        (p[i + 1] == '*' || (p[i + 1] == '?' && i + 2 < p.size() && p[i + 2] == 'C')))
      return false;
  }
  return true;
}

bool Combinable(std::string_view p) {
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == '\\') {
      char c = p[i + 1];
      if ((c >= '1' && c <= '9') || c == 'g' || c == 'k') return false;
      ++i;
      continue;
    }
    if (p[i] == '(' && p[i + 1] == '?' && i + 2 < p.size()) {
      char c = p[i + 2];
      if (c == 'R' || c == '&' || c == '|' || c == '+' || c == '-' || (c >= '0' && c <= '9'))
        return false;
      if (c == 'P' && i + 3 < p.size() && (p[i + 3] == '=' || p[i + 3] == '>')) return false;
    }
  }
  return true;
}

StreamMatcher::StreamMatcher(const Regex* regex, bool incremental)
    : regex_(regex),
      incremental_(incremental),
      // Nested lookbehinds may see further than PCRE2 reports; `^` and `\b` need one character.
      context_chars_(2 * regex->max_lookbehind() + 4) {}

void StreamMatcher::Reset() {
  resume_ = 0;
  matched_ = false;
}

Result<bool> StreamMatcher::Update(std::string_view text) {
  if (matched_) return true;
  if (!incremental_) {
    auto hit = regex_->Search(text);
    if (!hit.ok()) return hit.error();
    matched_ = *hit;
    return matched_;
  }
  if (resume_ > text.size()) resume_ = text.size();
  const size_t window = BackChars(text, resume_, context_chars_);
  const std::string_view sub = text.substr(window);
  const bool not_bol = window > 0;
  // Soft: a match as the text ends now counts (`foo$`, `foo\b`, `a(?!b)` at the end), as a
  // search of the whole text would say; otherwise the partial match says where to look again.
  auto pm = regex_->PartialSearch(sub, resume_ - window, not_bol, /*soft=*/true);
  if (!pm.ok()) return pm.error();
  switch (pm->kind) {
    case PartialKind::kFull:
      matched_ = true;
      return true;
    case PartialKind::kPartial:
      resume_ = window + pm->span.begin;
      return false;
    case PartialKind::kNoMatch:
      resume_ = text.size();
      return false;
  }
  return false;
}

std::vector<ConditionSet::Joined> ConditionSet::Join(const std::vector<Item>& items,
                                                     JoinCache* cache) {
  // Kinds: 0 first characters, 1 line start, 2 nothing known; +3 when it looks behind.
  std::vector<size_t> kinds[6];
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& p = items[i].pattern;
    if (!Combinable(p) || !IncrementalSafe(p)) continue;
    size_t kind = 2;
    switch (items[i].regex->start_hint()) {
      case Regex::StartHint::kFirstChars:
        kind = 0;
        break;
      case Regex::StartHint::kLineStart:
        kind = 1;
        break;
      case Regex::StartHint::kNone:
        kind = 2;
        break;
    }
    if (p.find("(?<=") != std::string::npos || p.find("(?<!") != std::string::npos) kind += 3;
    kinds[kind].push_back(i);
  }
  std::vector<Joined> out;
  for (auto& members : kinds) {
    if (members.size() < 2) continue;
    std::string joined;
    for (size_t i : members) joined += (joined.empty() ? "(?:" : "|(?:") + items[i].pattern + ")";
    auto re = CompileJoined(joined, cache);
    if (!re) continue;  // duplicate group names, say: each runs alone
    out.push_back(Joined{std::move(re), members});
  }
  return out;
}

ConditionSet::ConditionSet(std::vector<Item> items, std::vector<Joined> joined)
    : items_(std::move(items)) {
  const size_t n = items_.size();
  alone_.resize(n);
  reported_.assign(n, false);
  dropped_.assign(n, false);
  std::vector<bool> in_group(n, false);
  for (auto& j : joined) {
    for (size_t i : j.members) in_group[i] = true;
    Group g{std::move(j), std::nullopt};
    groups_.push_back(std::move(g));
  }
  for (auto& g : groups_) g.matcher.emplace(g.joined.regex.get(), true);
  for (size_t i = 0; i < n; ++i)
    if (!in_group[i]) alone_[i].emplace(items_[i].regex, IncrementalSafe(items_[i].pattern));
}

void ConditionSet::RunAlone(size_t i, std::string_view text, std::vector<size_t>* hits,
                            std::vector<Failure>* failures) {
  auto hit = alone_[i]->Update(text);
  if (!hit.ok()) {
    dropped_[i] = true;
    alone_[i].reset();
    if (failures) failures->push_back(Failure{items_[i].tag, hit.error()});
    return;
  }
  if (*hit) {
    reported_[i] = true;
    hits->push_back(items_[i].tag);
  }
}

void ConditionSet::Split(Group& g) {
  g.matcher.reset();
  for (size_t i : g.joined.members)
    if (Live(i)) alone_[i].emplace(items_[i].regex, true);
}

std::vector<size_t> ConditionSet::Update(std::string_view text, std::vector<Failure>* failures) {
  std::vector<size_t> hits;
  for (size_t i = 0; i < items_.size(); ++i)
    if (Live(i) && alone_[i]) RunAlone(i, text, &hits, failures);
  for (auto& g : groups_) {
    if (!g.matcher) continue;
    auto any = g.matcher->Update(text);
    if (any.ok() && !*any) continue;
    // One of them matched (or the joined search failed): each goes on alone from here, after
    // one search over the whole text, which tells which matched (or which cannot be searched).
    Split(g);
    for (size_t i : g.joined.members)
      if (Live(i)) RunAlone(i, text, &hits, failures);
  }
  return hits;
}

}  // namespace lousho::agent::rules

// Tests of stream-rule matching: incremental search over deltas must answer exactly what a
// search of the whole text after every delta answers (random splits, lookbehind, \b and $ at a
// delta boundary, UTF-8 characters split across deltas, joined condition sets).
#include <gtest/gtest.h>

#include <random>

#include "agent/rules/matcher.h"
#include "agent/rules/rule.h"

namespace lousho::agent::rules {
namespace {

// What the controller does: a character split across deltas waits until it is whole.
std::string_view Whole(const std::string& s) {
  size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto b = static_cast<unsigned char>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;
    size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 1;
    return std::string_view(s).substr(0, need > back ? n - back : n);
  }
  return s;
}

Regex Cond(const std::string& p) {
  auto re = CompileCondition(p);
  EXPECT_TRUE(re.ok()) << p << ": " << (re.ok() ? "" : re.error().message);
  return *re;
}

// The delta (1-based) after which the whole text first matches; 0: never.
size_t Reference(const Regex& re, const std::vector<std::string>& deltas) {
  std::string text;
  for (size_t i = 0; i < deltas.size(); ++i) {
    text += deltas[i];
    auto hit = re.Search(Whole(text));
    if (hit.ok() && *hit) return i + 1;
  }
  return 0;
}

size_t Incremental(const Regex& re, const std::vector<std::string>& deltas, bool incremental) {
  StreamMatcher m(&re, incremental);
  std::string text;
  for (size_t i = 0; i < deltas.size(); ++i) {
    text += deltas[i];
    auto hit = m.Update(Whole(text));
    if (hit.ok() && *hit) return i + 1;
  }
  return 0;
}

std::vector<std::string> Split(const std::string& text, std::mt19937& rng, size_t max_piece) {
  std::vector<std::string> out;
  std::uniform_int_distribution<size_t> piece(1, max_piece);
  for (size_t i = 0; i < text.size();) {
    size_t n = std::min(piece(rng), text.size() - i);
    out.push_back(text.substr(i, n));  // byte offsets: UTF-8 characters get split too
    i += n;
  }
  return out;
}

const std::vector<std::string> kPatterns = {
    "FORBIDDEN",        "foo\\b",     "\\bfoo\\b",   "(?<=ab)c",    "(?<!x)yz", "(?<=\\w{3})!",
    "a[\\s\\S]{0,5}?b", "colou?r$",   "^start",      "(?m)^line$",  "x+y",      "\\d{3}-\\d{4}",
    "(?i)hello world",  "\xC3\xA9+z", "caf\xC3\xA9", "(?:ab|abc)d", "[^]q",     "a(?!b)",
    "(?s)o.{2}x",       "\\Gstart",   "(a)\\1b",     "ends\\.$",
};

std::string RandomText(std::mt19937& rng) {
  static const std::vector<std::string> tokens = {"a",
                                                  "b",
                                                  "c",
                                                  "x",
                                                  "y",
                                                  "z",
                                                  "q",
                                                  " ",
                                                  "\n",
                                                  "foo",
                                                  "fo",
                                                  "o",
                                                  "ab",
                                                  "abc",
                                                  "d",
                                                  "yz",
                                                  "!",
                                                  "start",
                                                  "line",
                                                  "col",
                                                  "colou",
                                                  "r",
                                                  "color",
                                                  "123",
                                                  "-4567",
                                                  "hello ",
                                                  "HeLLo",
                                                  "world",
                                                  "\xC3\xA9",
                                                  "caf",
                                                  "\xE2\x82\xAC",
                                                  "\xF0\x9F\x98\x80",
                                                  "ends.",
                                                  "FORBID",
                                                  "DEN",
                                                  "aa"};
  std::uniform_int_distribution<size_t> pick(0, tokens.size() - 1);
  std::uniform_int_distribution<int> len(1, 60);
  std::string s;
  for (int i = len(rng); i > 0; --i) s += tokens[pick(rng)];
  return s;
}

TEST(TtsrMatcherTest, RandomSplitsAnswerLikeTheWholeText) {
  std::mt19937 rng(20261201);
  size_t fired = 0;
  for (const auto& p : kPatterns) {
    Regex re = Cond(p);
    const bool safe = IncrementalSafe(p);
    for (int round = 0; round < 300; ++round) {
      std::string text = RandomText(rng);
      auto deltas = Split(text, rng, 1 + round % 24);
      size_t want = Reference(re, deltas);
      fired += want != 0;
      ASSERT_EQ(Incremental(re, deltas, safe), want) << "pattern " << p << " text '" << text << "'";
      ASSERT_EQ(Incremental(re, deltas, false), want) << "rescan, pattern " << p;
    }
  }
  EXPECT_GT(fired, 1000u);  // the texts do trigger the patterns, often
}

TEST(TtsrMatcherTest, JoinedSetsReportEachConditionWhenTheWholeTextWould) {
  std::mt19937 rng(7);
  std::vector<Regex> regexes;
  std::vector<ConditionSet::Item> items;
  regexes.reserve(kPatterns.size());
  items.reserve(kPatterns.size());
  for (const auto& p : kPatterns) regexes.push_back(Cond(p));
  for (size_t i = 0; i < kPatterns.size(); ++i)
    items.push_back(ConditionSet::Item{kPatterns[i], &regexes[i], i});
  auto shared = ConditionSet::Join(items);
  ASSERT_GE(shared.size(), 2u);  // first characters, line start, lookbehind…
  for (int round = 0; round < 400; ++round) {
    std::string text = RandomText(rng);
    auto deltas = Split(text, rng, 1 + round % 24);
    ConditionSet set(items, shared);
    std::vector<size_t> first(items.size(), 0);
    std::string acc;
    for (size_t d = 0; d < deltas.size(); ++d) {
      acc += deltas[d];
      for (size_t tag : set.Update(Whole(acc))) {
        ASSERT_EQ(first[tag], 0u) << "reported twice";
        first[tag] = d + 1;
      }
    }
    // A condition is reported at the first delta where the whole text matches it, or (joined
    // ones) no later than the delta where the joined alternation first matched.
    for (size_t i = 0; i < items.size(); ++i) {
      size_t want = Reference(regexes[i], deltas);
      ASSERT_EQ(first[i] != 0, want != 0) << kPatterns[i] << " in '" << text << "'";
      if (want) {
        ASSERT_GE(first[i], want) << kPatterns[i];
      }
    }
  }
}

// The first condition to match is reported on the very delta the whole-text search says.
TEST(TtsrMatcherTest, JoinedSetFiresOnTheFirstMatchingDelta) {
  std::mt19937 rng(99);
  std::vector<std::string> pats = {"FORBIDDEN", "foo\\b", "(?<=ab)c", "x+y", "colou?r$"};
  std::vector<Regex> regexes;
  std::vector<ConditionSet::Item> items;
  regexes.reserve(pats.size());
  items.reserve(pats.size());
  for (const auto& p : pats) regexes.push_back(Cond(p));
  for (size_t i = 0; i < pats.size(); ++i) items.push_back({pats[i], &regexes[i], i});
  auto shared = ConditionSet::Join(items);
  ASSERT_EQ(shared.size(), 1u);  // the lookbehind goes apart, alone
  for (int round = 0; round < 500; ++round) {
    std::string text = RandomText(rng);
    auto deltas = Split(text, rng, 1 + round % 24);
    size_t want = 0;
    for (const auto& re : regexes) {
      size_t w = Reference(re, deltas);
      if (w && (!want || w < want)) want = w;
    }
    ConditionSet set(items, shared);
    std::string acc;
    size_t got = 0;
    for (size_t d = 0; d < deltas.size() && !got; ++d) {
      acc += deltas[d];
      if (!set.Update(Whole(acc)).empty()) got = d + 1;
    }
    ASSERT_EQ(got, want) << text;
  }
}

TEST(TtsrMatcherTest, LookbehindSeesTextOfEarlierDeltas) {
  Regex re = Cond("(?<=secret )key");
  // Many deltas between the lookbehind text and the match: the context must still be there.
  EXPECT_EQ(Incremental(re, {"my secret ", "k", "e", "y"}, true), 4u);
  EXPECT_EQ(Incremental(re, {"my public ", "k", "e", "y"}, true), 0u);
  Regex neg = Cond("(?<!not )ok");
  EXPECT_EQ(Incremental(neg, {"it is not ", "o", "k"}, true), 0u);
  EXPECT_EQ(Incremental(neg, {"it is not ", "o", "k and ok"}, true), 3u);
}

TEST(TtsrMatcherTest, WordBoundaryAtADeltaBoundary) {
  // `\b` before the word looks at the previous delta's last character.
  Regex re = Cond("\\bfoo\\b");
  EXPECT_EQ(Incremental(re, {"x", "foo", "d"}, true), 0u);
  EXPECT_EQ(Incremental(re, {"x ", "foo", " d"}, true), 2u);
  // At the end of the text so far, `\b` holds: a search of the whole text after "foo" says
  // yes, and so does the stream (the reference semantics: the text ends there for now).
  EXPECT_EQ(Incremental(re, {"a ", "foo", "d"}, true), 2u);
  EXPECT_EQ(Reference(re, {"a ", "foo", "d"}), 2u);
  // `$` is the end of the text, not of a line, without (?m).
  Regex end = Cond("done$");
  EXPECT_EQ(Incremental(end, {"done\n", "more"}, true), 0u);
  EXPECT_EQ(Incremental(end, {"not ", "don", "e"}, true), 3u);
}

TEST(TtsrMatcherTest, MultibyteCharacterSplitAcrossDeltas) {
  // "café!" with the é (C3 A9) split between deltas: no match on half a character, and the
  // match as soon as the character is whole.
  Regex re = Cond("caf\xC3\xA9!");
  EXPECT_EQ(Incremental(re, {"caf\xC3", "\xA9", "!"}, true), 3u);
  Regex word = Cond("caf\\b");
  // At the split the text is "caf" (the half character waits): `\b` at its end holds, as it
  // would for a JavaScript string "caf".
  EXPECT_EQ(Incremental(word, {"caf\xC3", "\xA9"}, true), 1u);
  Regex euro = Cond("\xE2\x82\xAC{2}");
  EXPECT_EQ(Incremental(euro, {"\xE2", "\x82\xAC\xE2\x82", "\xAC"}, true), 3u);
}

TEST(TtsrMatcherTest, EcmascriptDialect) {
  // `$` only at the very end, not before a final newline.
  EXPECT_FALSE(*Cond("end$").Search("the end\n"));
  EXPECT_TRUE(*Cond("(?m)end$").Search("the end\nmore"));
  // `.` does not match a newline unless (?s); [^] matches anything.
  EXPECT_FALSE(*Cond("a.b").Search("a\nb"));
  EXPECT_TRUE(*Cond("(?s)a.b").Search("a\nb"));
  EXPECT_TRUE(*Cond("a[^]b").Search("a\nb"));
  // \uhhhh, and ASCII \w as in JavaScript without the u flag.
  EXPECT_TRUE(*Cond("\\u0041").Search("A"));
  EXPECT_FALSE(*Cond("^\\w$").Search("\xC3\xA9"));
  // Case-insensitive flags group.
  EXPECT_TRUE(*Cond("(?i)forbidden").Search("FORBIDDEN"));
}

TEST(TtsrMatcherTest, CombinableAndSafe) {
  EXPECT_TRUE(Combinable("foo|bar"));
  EXPECT_FALSE(Combinable("(a)\\1"));
  EXPECT_FALSE(Combinable("(?<n>a)\\k<n>"));
  EXPECT_FALSE(Combinable("(a)(?1)"));
  EXPECT_TRUE(IncrementalSafe("(?<=a)b"));
  EXPECT_FALSE(IncrementalSafe("\\Gfoo"));
  EXPECT_FALSE(IncrementalSafe("\\Afoo"));
  EXPECT_FALSE(IncrementalSafe("a(*COMMIT)b"));
}

}  // namespace
}  // namespace lousho::agent::rules

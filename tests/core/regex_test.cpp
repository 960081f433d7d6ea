// Tests of the PCRE2 wrapper: compile errors, options, UTF-8, limits, partial matching, threads.
#include "support/regex.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcre2.h>

#include <chrono>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace lousho {

// Readable failure messages.
void PrintTo(const Span& s, std::ostream* os) {
  if (s.matched()) {
    *os << "[" << s.begin << ", " << s.end << ")";
  } else {
    *os << "unset";
  }
}
void PrintTo(PartialKind k, std::ostream* os) {
  switch (k) {
    case PartialKind::kNoMatch:
      *os << "kNoMatch";
      return;
    case PartialKind::kPartial:
      *os << "kPartial";
      return;
    case PartialKind::kFull:
      *os << "kFull";
      return;
  }
}

namespace {

using ::testing::HasSubstr;

Regex Re(std::string_view pattern, RegexOptions options = {}) {
  auto re = Regex::Compile(pattern, options);
  EXPECT_TRUE(re.ok()) << pattern << ": " << re.error().ToString();
  return std::move(re).value();
}

bool Hit(const Regex& re, std::string_view text) {
  auto r = re.Search(text);
  EXPECT_TRUE(r.ok()) << re.pattern() << ": " << r.error().ToString();
  return r.ok() && *r;
}

std::vector<std::pair<size_t, size_t>> Spans(const Regex& re, std::string_view text) {
  auto all = re.FindAll(text);
  EXPECT_TRUE(all.ok()) << re.pattern() << ": " << all.error().ToString();
  std::vector<std::pair<size_t, size_t>> out;
  if (all.ok())
    for (const Match& m : *all) out.emplace_back(m.begin(), m.end());
  return out;
}

RegexOptions NoJit() {
  RegexOptions o;
  o.jit = false;
  return o;
}

TEST(RegexTest, CompileErrorsCarryMessageAndOffset) {
  auto r = Regex::Compile("ab(c");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kRegexInvalid);
  EXPECT_EQ(r.error().message, "missing closing parenthesis at offset 4");

  auto range = Regex::Compile("x[z-a]");
  ASSERT_FALSE(range.ok());
  EXPECT_THAT(range.error().message, HasSubstr("range out of order"));
  EXPECT_THAT(range.error().message, HasSubstr("at offset 4"));

  auto quant = Regex::Compile("ab*+?+");
  ASSERT_FALSE(quant.ok());
  EXPECT_THAT(quant.error().message, HasSubstr("at offset"));

  // The pattern must be UTF-8; the offset names the bad byte.
  auto bad_utf = Regex::Compile("ok\xFF");
  ASSERT_FALSE(bad_utf.ok());
  EXPECT_THAT(bad_utf.error().message, HasSubstr("UTF-8 error"));
  EXPECT_THAT(bad_utf.error().message, HasSubstr("at offset 2"));

  // Literal text has no syntax to get wrong.
  RegexOptions literal;
  literal.literal = true;
  EXPECT_TRUE(Regex::Compile("ab(c", literal).ok());
}

TEST(RegexTest, CaseInsensitiveIncludingUnicode) {
  EXPECT_FALSE(Hit(Re("hello"), "Say HELLO"));
  RegexOptions ci;
  ci.case_insensitive = true;
  EXPECT_TRUE(Hit(Re("hello", ci), "Say HELLO"));
  EXPECT_TRUE(Hit(Re("ÉTÉ", ci), "un été chaud"));
  EXPECT_TRUE(Hit(Re("straße", ci), "STRAßE"));
  EXPECT_FALSE(Hit(Re("ÉTÉ"), "un été chaud"));
  EXPECT_TRUE(Hit(Re("(?i)ÉTÉ"), "un été chaud"));
}

TEST(RegexTest, MultilineAndLiteral) {
  EXPECT_FALSE(Hit(Re("^b$"), "a\nb\nc"));
  RegexOptions ml;
  ml.multiline = true;
  EXPECT_TRUE(Hit(Re("^b$", ml), "a\nb\nc"));

  RegexOptions lit;
  lit.literal = true;
  Regex dot = Re("a.b", lit);
  EXPECT_FALSE(Hit(dot, "axb"));
  EXPECT_TRUE(Hit(dot, "xa.by"));
  EXPECT_TRUE(Hit(Re("(a+)+$ [x] \\d", lit), "see (a+)+$ [x] \\d here"));
  lit.case_insensitive = true;
  EXPECT_TRUE(Hit(Re("A.B", lit), "xa.by"));
  EXPECT_TRUE(Hit(Re("CAFÉ", lit), "café"));
}

TEST(RegexTest, FindReportsOffsetsOfMatchAndGroups) {
  Regex re = Re(R"((\d+)-(\d+)?(?<tail>z)?)");
  std::string text = "ab 12- cd";
  auto m = re.Find(text);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->has_value());
  const Match& match = **m;
  EXPECT_EQ(match.begin(), 3u);
  EXPECT_EQ(match.end(), 6u);
  ASSERT_EQ(match.groups.size(), 4u);
  EXPECT_EQ(re.group_count(), 3u);
  EXPECT_EQ(match.groups[1], (Span{3, 5}));
  EXPECT_FALSE(match.groups[2].matched());
  EXPECT_FALSE(match.groups[3].matched());
  EXPECT_EQ(match.Group(text), "12-");
  EXPECT_EQ(match.Group(text, 1), "12");
  EXPECT_EQ(match.Group(text, 2), "");
  EXPECT_EQ(match.Group(text, 9), "");
  EXPECT_EQ(re.GroupIndex("tail"), std::optional<size_t>(3));
  EXPECT_EQ(re.GroupIndex("nope"), std::nullopt);

  // A start offset skips earlier matches but lookbehind still sees the text before it.
  Regex after = Re(R"((?<=x)\d)");
  auto later = after.Find("x1 x2", 2);
  ASSERT_TRUE(later.ok() && later->has_value());
  EXPECT_EQ((*later)->begin(), 4u);
  auto none = after.Find("x1 x2", 5);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto past = after.Find("x1", 3);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, ErrorCode::kRegexInvalid);
}

TEST(RegexTest, IteratesMatchesLikePerl) {
  using P = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(Spans(Re(R"(\d+)"), "a1b22c333"), (P{{1, 2}, {3, 5}, {6, 9}}));
  // Empty matches: one at each position a non-empty one does not cover, none inside "xx".
  EXPECT_EQ(Spans(Re("x*"), "axxb"), (P{{0, 0}, {1, 3}, {3, 3}, {4, 4}}));
  // An empty pattern matches between characters, never inside a UTF-8 sequence.
  EXPECT_EQ(Spans(Re(""), "é!"), (P{{0, 0}, {2, 2}, {3, 3}}));
  EXPECT_TRUE(Spans(Re("q"), "abc").empty());

  // The visitor stops the iteration.
  int seen = 0;
  Status st = Re(R"(\d)").ForEachMatch("123456", [&](const Match&) { return ++seen < 2; });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(seen, 2);

  // Searching with another Regex from inside the visitor does not disturb the iteration.
  Regex inner = Re(R"((a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)(m)(n)(o)(p)(q)(r)(s))");
  std::string text = "w1 w22 w333";
  std::vector<std::string> words;
  st = Re(R"(w(\d+))").ForEachMatch(text, [&](const Match& m) {
    EXPECT_FALSE(Hit(inner, "abcdefghijklmnopqr"));
    EXPECT_TRUE(Hit(inner, "abcdefghijklmnopqrs"));
    words.emplace_back(m.Group(text, 1));
    return true;
  });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(words, (std::vector<std::string>{"1", "22", "333"}));
}

TEST(RegexTest, Utf8CharactersAndUnicodeProperties) {
  EXPECT_TRUE(Hit(Re("^.$"), "é"));
  EXPECT_TRUE(Hit(Re("^.$"), "😀"));
  auto m = Re("é").Find("xé");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->begin(), 1u);  // offsets are bytes
  EXPECT_EQ((*m)->end(), 3u);
  // UCP: \w, \d and \b know letters beyond ASCII.
  using P = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(Spans(Re(R"(\w+)"), "été ok"), (P{{0, 5}, {6, 8}}));
  EXPECT_TRUE(Hit(Re(R"(\bété\b)"), "un été"));
  EXPECT_TRUE(Hit(Re(R"(^\d+$)"), "١٢٣"));  // Arabic-Indic digits
  EXPECT_TRUE(Hit(Re("[[:alpha:]]"), "ß"));
}

// Invalid UTF-8 in the text is a barrier that nothing matches, not an error and not bytes.
TEST(RegexTest, InvalidUtf8TextMatchesAroundTheBadBytes) {
  std::string latin1 = "caf\xE9 TODO fix";
  for (const RegexOptions& o : {RegexOptions{}, NoJit()}) {
    auto todo = Re("TODO", o).Find(latin1);
    ASSERT_TRUE(todo.ok() && todo->has_value());
    EXPECT_EQ((*todo)->begin(), 5u);
    EXPECT_FALSE(Hit(Re("caf.", o), latin1));
    EXPECT_FALSE(Hit(Re(R"(caf\C)", o), latin1));
    EXPECT_TRUE(Hit(Re("^caf", o), latin1));
    using P = std::vector<std::pair<size_t, size_t>>;
    EXPECT_EQ(Spans(Re(".+", o), std::string("ab\xFF\xFE"
                                             "cd\xC3",
                                             7)),
              (P{{0, 2}, {4, 6}}));
    // Truncated sequences, stray continuation bytes, overlong forms, surrogates: no crash.
    for (std::string junk : {"\xC3", "\x80\x80", "\xC0\xAF", "\xED\xA0\x80", "a\xF4\x90\x80\x80"}) {
      EXPECT_TRUE(Re("(?s).*", o).Search(junk).ok());
      EXPECT_TRUE(Re("", o).FindAll(junk).ok());
      EXPECT_TRUE(Re("x", o).PartialSearch(junk).ok());
      for (size_t start = 0; start <= junk.size(); ++start)
        EXPECT_TRUE(Re(R"(\w)", o).Find(junk, start).ok());
    }
  }
  // A start offset inside a character moves on to the next one.
  auto mid = Re(".").Find("éx", 1);
  ASSERT_TRUE(mid.ok() && mid->has_value());
  EXPECT_EQ((*mid)->begin(), 2u);
}

TEST(RegexTest, JitAndInterpreterAgree) {
  // The JIT is used wherever this PCRE2 has one.
  uint32_t have_jit = 0;
  pcre2_config(PCRE2_CONFIG_JIT, &have_jit);
  Regex probe = Re("a+b");
  EXPECT_EQ(probe.jit_complete(), have_jit != 0);
  EXPECT_EQ(probe.jit_partial(), have_jit != 0);
  EXPECT_FALSE(Re("a+b", NoJit()).jit_complete());

  const std::vector<std::string> patterns = {
      R"(\d+)",  R"(\b\w+\b)",       "x*",       R"((a|ab)(c|bcd)(d*))",
      "(?i)été", R"((?<=\s)\S+)",    "^.*$",     R"((\w)\1)",
      "[^a-z]+", R"(\p{Lu}\p{Ll}+)", "(?m)^\\w", R"((?<n>[aeiou])(?!\k<n>))"};
  const std::vector<std::string> texts = {
      "", "abcd 123 Été été", "aa bb cd 1212\nline two\r\nÜber Straße",
      std::string("mixed \xFF bytes 42 \xC3 x", 20), "abcbcdd acbcd"};
  for (const auto& p : patterns) {
    Regex jit = Re(p);
    Regex interp = Re(p, NoJit());
    for (const auto& t : texts) {
      auto a = jit.FindAll(t);
      auto b = interp.FindAll(t);
      ASSERT_TRUE(a.ok() && b.ok()) << p;
      ASSERT_EQ(a->size(), b->size()) << p << " on " << t;
      for (size_t i = 0; i < a->size(); ++i)
        EXPECT_EQ((*a)[i].groups, (*b)[i].groups) << p << " on " << t << " match " << i;
      // Every prefix of the text, from every start offset (inside characters too).
      for (size_t cut = 0; cut <= t.size(); ++cut) {
        std::string_view prefix = std::string_view(t).substr(0, cut);
        for (size_t start = 0; start <= cut; ++start) {
          std::string shown =
              ::testing::PrintToString(std::string(prefix)) + " from " + std::to_string(start);
          auto fa = jit.Find(prefix, start);
          auto fb = interp.Find(prefix, start);
          ASSERT_TRUE(fa.ok() && fb.ok()) << p;
          ASSERT_EQ(fa->has_value(), fb->has_value()) << p << " on " << shown;
          if (fa->has_value()) {
            EXPECT_EQ((*fa)->groups, (*fb)->groups) << p << " on " << shown;
          }
          auto pa = jit.PartialSearch(prefix, start);
          auto pb = interp.PartialSearch(prefix, start);
          ASSERT_TRUE(pa.ok() && pb.ok()) << p;
          EXPECT_EQ(pa->kind, pb->kind) << p << " on " << shown;
          EXPECT_EQ(pa->span, pb->span) << p << " on " << shown;
        }
      }
    }
  }
}

TEST(RegexTest, CatastrophicBacktrackingHitsTheMatchLimit) {
  // 2^40 ways to split the a's: without a limit this runs for hours.
  std::string text = std::string(40, 'a') + "b";
  for (const RegexOptions& o : {RegexOptions{}, NoJit()}) {
    Regex re = Re("(a+)+$", o);
    auto t0 = std::chrono::steady_clock::now();
    auto r = re.Search(text);
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kRegexLimit);
    EXPECT_THAT(r.error().message, HasSubstr("match limit exceeded"));
    // The limit is about 0.05 s of JIT or 0.4 s of interpreter work; this bound leaves room for
    // a loaded machine and a sanitizer build.
    EXPECT_LT(took, std::chrono::seconds(30));
    // Every way in reports it.
    EXPECT_FALSE(re.Find(text).ok());
    EXPECT_FALSE(re.FindAll(text).ok());
    EXPECT_FALSE(re.PartialSearch(text).ok());
    // The same Regex still works on harmless text afterwards.
    EXPECT_TRUE(Hit(re, "aaa"));
  }
  // A lower limit is reached sooner; the pattern itself is fine on short text.
  RegexOptions tight;
  tight.match_limit = RegexLimit::Fixed(1000);
  Regex re = Re("(a+)+$", tight);
  EXPECT_TRUE(Hit(re, "aaaa"));
  EXPECT_FALSE(re.Search(std::string(20, 'a') + "b").ok());
}

TEST(RegexTest, DepthLimitBoundsTheInterpreter) {
  // Each repetition of a group is a backtracking frame; the default limits leave room for a
  // long line in both engines (the JIT's 8 MiB stack holds this one; past about 300 KB the
  // interpreter takes over, where the depth limit applies).
  std::string text(200000, 'a');
  EXPECT_TRUE(Hit(Re("(?:a|b)*$"), text));
  EXPECT_TRUE(Hit(Re("(?:a|b)*$", NoJit()), text));
  RegexOptions shallow = NoJit();
  shallow.depth_limit = RegexLimit::Fixed(10000);
  auto r = Re("(?:a|b)*$", shallow).Search(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kRegexLimit);
  EXPECT_THAT(r.error().message, HasSubstr("depth limit"));
}

TEST(RegexTest, PartialSearchSaysFullPartialOrNone) {
  Regex num = Re(R"(\d+)");
  auto p = num.PartialSearch("abc 12");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kPartial);  // more digits may follow
  EXPECT_EQ(p->span, (Span{4, 6}));
  p = num.PartialSearch("abc 12 ");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kFull);
  EXPECT_EQ(p->span, (Span{4, 6}));
  p = num.PartialSearch("abc ");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kNoMatch);
  EXPECT_FALSE(p->span.matched());

  Regex phrase = Re("hello world");
  p = phrase.PartialSearch("say hello wo");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kPartial);
  EXPECT_EQ(p->span, (Span{4, 12}));
  p = phrase.PartialSearch("say hello there");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kNoMatch);
  p = phrase.PartialSearch("hello world, hello wo", 1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kPartial);
  EXPECT_EQ(p->span, (Span{13, 21}));

  // not_bol: the buffer is a tail of the stream, so its start is not the start of the text.
  p = Re("^ab").PartialSearch("ab", 0, true);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PartialKind::kNoMatch);

  for (const RegexOptions& o : {RegexOptions{}, NoJit()}) {
    // A text cut inside a UTF-8 character.
    p = Re("café", o).PartialSearch("caf\xC3");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kPartial);
    EXPECT_EQ(p->span, (Span{0, 4}));
    p = Re("é", o).PartialSearch("abc\xC3");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kPartial);
    EXPECT_EQ(p->span, (Span{3, 4}));
    p = Re("c", o).PartialSearch("abc\xE2\x82");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kFull);
    EXPECT_EQ(p->span, (Span{2, 3}));
    // Invalid bytes end matches for good: nothing can match them, whatever follows.
    p = Re("[^a-z]+", o).PartialSearch("mixed \xFF b");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kFull);
    EXPECT_EQ(p->span, (Span{5, 6}));
    p = Re("^.*$", o).PartialSearch("mixed \xFF");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kNoMatch);
    p = Re(R"(\d+)", o).PartialSearch("1\xFF 23", 1);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kPartial);
    EXPECT_EQ(p->span, (Span{3, 5}));
    // `\b` after "abc" depends on whether the next character is a letter.
    p = Re(R"(abc\b)", o).PartialSearch("abc\xC3");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, PartialKind::kPartial);
  }
}

// Feeds a text in pieces the way a stream rule will (the technique of pcre2partial(3)) and
// checks that it finds exactly the matches of one pass over the whole text.
std::vector<std::pair<size_t, size_t>> StreamMatches(const Regex& re, std::string_view text,
                                                     size_t piece) {
  std::vector<std::pair<size_t, size_t>> found;
  std::string buf;
  size_t scan = 0;
  for (size_t at = 0; at < text.size(); at += piece) {
    buf.append(text.substr(at, piece));
    while (true) {
      auto r = re.PartialSearch(buf, scan);
      EXPECT_TRUE(r.ok());
      if (!r.ok()) return found;
      if (r->kind == PartialKind::kFull) {
        found.emplace_back(r->span.begin, r->span.end);
        scan = r->span.end;
        continue;
      }
      scan = r->kind == PartialKind::kPartial ? r->span.begin : buf.size();
      break;
    }
  }
  // The end of the stream: pending partial matches are decided without PARTIAL_HARD.
  auto rest = re.FindAll(buf, scan);
  EXPECT_TRUE(rest.ok());
  if (rest.ok())
    for (const Match& m : *rest) found.emplace_back(m.begin(), m.end());
  return found;
}

TEST(RegexTest, PartialSearchFindsStreamMatchesAtEverySplit) {
  std::string text =
      "été 12 <t>tool ünd</t> dog dogs hotdog 3456 <t>b</t> été\xE2\x82\xAC 789 naïve 😀😀 end"
      " (also after bad bytes: 12\xFF"
      "34 dog\xC3 été\xC0\xAFété <t>x\xFFy</t> <t>z</t>)";
  for (const char* p : {R"(\d+)", R"(<t>[^<]*</t>)", R"(\bdog\b)", "été", R"(\w+)", "😀+",
                        R"((?<=\s)[a-z]+)", "ï"}) {
    for (const RegexOptions& o : {RegexOptions{}, NoJit()}) {
      Regex re = Re(p, o);
      auto whole = Spans(re, text);
      ASSERT_FALSE(whole.empty()) << p;
      for (size_t piece = 1; piece <= 7; ++piece)
        EXPECT_EQ(StreamMatches(re, text, piece), whole) << p << " in pieces of " << piece;
    }
  }
}

// What the threads of OneRegexServesManyThreads share: the regexes, the texts and the results
// computed on the main thread.
struct RegexThreadWork {
  const Regex* words = nullptr;
  const Regex* digits = nullptr;
  std::vector<std::string> texts;
  std::string big;
  std::vector<std::vector<Match>> want_words;
  std::vector<std::vector<Match>> want_digits;
  std::vector<Match> want_big;
};

bool SameMatches(const Result<std::vector<Match>>& got, const std::vector<Match>& want) {
  if (!got.ok() || got->size() != want.size()) return false;
  for (size_t k = 0; k < want.size(); ++k)
    if ((*got)[k].groups != want[k].groups) return false;
  return true;
}

// Thread `t` of `threads`: 200 rounds over the texts, through its own copy of the words regex
// on odd rounds; the number of rounds with a wrong result.
int RegexThreadRounds(const RegexThreadWork& w, int t, int threads) {
  int failures = 0;
  Regex copy = *w.words;  // copies share the compiled code
  for (int round = 0; round < 200; ++round) {
    size_t i = static_cast<size_t>(round * threads + t) % w.texts.size();
    const Regex& words = round % 2 ? copy : *w.words;
    bool ok = SameMatches(words.FindAll(w.texts[i]), w.want_words[i]) &&
              SameMatches(w.digits->FindAll(w.texts[i]), w.want_digits[i]);
    if (round % 50 == 0) ok = ok && SameMatches(w.digits->FindAll(w.big), w.want_big);
    if (!ok) ++failures;
  }
  return failures;
}

TEST(RegexTest, OneRegexServesManyThreads) {
  Regex words = Re(R"((\w+)@(\w+)\.(\w+))");
  Regex digits = Re(R"(\d+)", NoJit());
  RegexThreadWork w;
  w.words = &words;
  w.digits = &digits;
  // Longer than the size above which interpreter scratch memory is given back.
  w.big = std::string(40000, ' ') + "x@y.z 42";
  w.texts.reserve(64);
  for (int i = 0; i < 64; ++i)
    w.texts.push_back("to " + std::string(static_cast<size_t>(i), 'a') + "b@host" +
                      std::to_string(i) + ".org and cc@x.io " + std::to_string(i * 7));
  // Expected results, computed on this thread first.
  for (const auto& t : w.texts) {
    w.want_words.push_back(*words.FindAll(t));
    w.want_digits.push_back(*digits.FindAll(t));
  }
  w.want_big = *digits.FindAll(w.big);
  ASSERT_EQ(w.want_words[5].size(), 2u);
  ASSERT_FALSE(w.want_big.empty());

  constexpr int kThreads = 8;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { failures[t] = RegexThreadRounds(w, t, kThreads); });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace lousho

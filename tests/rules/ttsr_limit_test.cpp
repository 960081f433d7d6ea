// Tests of stream rules whose conditions backtrack too much: the search limits grow with the
// text (so a normal rule still matches on long text), a rule that hits one is switched off for
// the session at its first failure and told once, and the other rules keep working.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/rules/controller.h"
#include "agent/rules/matcher.h"
#include "agent/rules/rule.h"

namespace lousho::agent::rules {
namespace {

Rule MakeRule(const std::string& name, const std::vector<std::string>& conditions,
              const std::string& scope = "") {
  Json::Value fields(Json::objectValue);
  Json::Value list(Json::arrayValue);
  for (const auto& c : conditions) list.append(c);
  fields["condition"] = list;
  if (!scope.empty()) fields["scope"] = scope;
  std::vector<std::string> warnings;
  auto r = RuleFromFields(name, "/proj/.cursor/rules/" + name + ".mdc", ".cursor", fields,
                          "Body of " + name, &warnings, nullptr);
  EXPECT_TRUE(r.has_value()) << name;
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  return *r;
}

// The four conditions a hostile repository may plant: each backtracks exponentially on a long
// run of one letter.
const std::vector<std::string>& Hostile() {
  static const std::vector<std::string> p = {"(a+)+b", "(a|aa)*c\\d", "(?s)(.*)*X",
                                             "(\\w+\\s?)*$z"};
  return p;
}

struct Feed {
  std::vector<std::string> fired;  // rule names, in firing order
  std::vector<std::string> warnings;
};

// Streams `text` as assistant text in `chunk`-byte deltas, collecting firings and warnings.
Feed Stream(Controller& c, const std::string& text, size_t chunk) {
  Feed out;
  c.ResetBuffers();
  StreamDelta d;
  d.kind = DeltaKind::kText;
  for (size_t i = 0; i < text.size(); i += chunk) {
    d.text = text.substr(i, chunk);
    if (auto f = c.OnDelta(d))
      for (const Rule* r : f->rules) out.fired.push_back(r->name);
    for (auto& w : c.TakeWarnings()) out.warnings.push_back(std::move(w));
  }
  return out;
}

TEST(TtsrLimitTest, ConditionLimitsGrowWithTheText) {
  // One start position of `BEGIN.*?END` walks the whole text: about one step per byte. A fixed
  // limit of the conditions' floor fails on long text; the conditions' own limits do not.
  const std::string pattern = "(?s)BEGIN.*?END";
  const std::string text = "BEGIN" + std::string(400'000, 'x') + "END";
  RegexOptions fixed = ConditionOptions();
  fixed.match_limit = RegexLimit::Fixed(ConditionOptions().match_limit.floor);
  auto tight = Regex::Compile(pattern, fixed);
  ASSERT_TRUE(tight.ok());
  auto hit = tight->Search(text);
  ASSERT_FALSE(hit.ok()) << "the floor alone should not cover 400 KB";
  EXPECT_EQ(hit.error().code, ErrorCode::kRegexLimit);

  auto scaled = CompileCondition(pattern);
  ASSERT_TRUE(scaled.ok());
  hit = scaled->Search(text);
  ASSERT_TRUE(hit.ok()) << hit.error().message;
  EXPECT_TRUE(*hit);
  // Streamed, too: the rule fires on the delta that completes the match.
  Controller c(RuleSet{{}, {}, {MakeRule("begin-end", {pattern})}, {}, {}, {}}, "/proj", "");
  Feed f = Stream(c, text, 4096);
  EXPECT_EQ(f.fired, (std::vector<std::string>{"begin-end"}));
  EXPECT_TRUE(f.warnings.empty());
}

TEST(TtsrLimitTest, LimitsAreSmallOnShortText) {
  // The same backtracking condition on a short text stops at the floor, well below the cap a
  // long text would be given: the search costs what its text warrants.
  const RegexOptions o = ConditionOptions();
  EXPECT_EQ(o.match_limit.For(100), o.match_limit.floor + o.match_limit.per_kib * 100 / 1024);
  EXPECT_LT(o.match_limit.For(100), o.match_limit.cap / 50);
  EXPECT_EQ(o.match_limit.For(size_t{1} << 40), o.match_limit.cap);
  EXPECT_LT(o.heap_limit_kib.For(1000), o.heap_limit_kib.For(1'000'000));
  EXPECT_LT(o.depth_limit.For(1000), o.depth_limit.For(100'000));
}

TEST(TtsrLimitTest, AHostileRuleIsSwitchedOffAtItsFirstFailureAndToldOnce) {
  std::vector<Rule> rules;
  for (size_t i = 0; i < Hostile().size(); ++i)
    rules.push_back(MakeRule("hostile" + std::to_string(i + 1), {Hostile()[i]}));
  rules.push_back(MakeRule("forbid", {"FORBIDDEN_TOKEN"}));
  Controller c(RuleSet{{}, {}, rules, {}, {}, {}}, "/proj", "");

  // 30 KB of one letter, then a token the ordinary rule forbids.
  const std::string text = std::string(30'000, 'a') + " FORBIDDEN_TOKEN";
  Feed f = Stream(c, text, 100);
  // Each hostile rule is told once, naming the rule, its file and its condition.
  ASSERT_EQ(f.warnings.size(), Hostile().size());
  for (size_t i = 0; i < Hostile().size(); ++i) {
    const std::string name = "hostile" + std::to_string(i + 1);
    bool told = false;
    for (const auto& w : f.warnings)
      if (w.find("'" + name + "' (.cursor/rules/" + name + ".mdc)") != std::string::npos) {
        EXPECT_NE(w.find("'" + Hostile()[i] + "'"), std::string::npos) << w;
        EXPECT_NE(w.find("switched off for the rest of this session"), std::string::npos) << w;
        EXPECT_NE(w.find("match limit"), std::string::npos) << w;
        told = true;
      }
    EXPECT_TRUE(told) << name;
    EXPECT_TRUE(c.switched_off(name)) << name;
  }
  // The ordinary rule kept working.
  EXPECT_EQ(f.fired, (std::vector<std::string>{"forbid"}));
  EXPECT_FALSE(c.switched_off("forbid"));

  // The next reply (a new turn) neither searches nor tells them again.
  c.OnTurnEnd();
  f = Stream(c, std::string(30'000, 'a') + "b c1 X z", 100);
  EXPECT_TRUE(f.warnings.empty());
  EXPECT_TRUE(f.fired.empty());
}

TEST(TtsrLimitTest, TheSwitchedOffRuleIsLeftOutOfToolCallsToo) {
  // A rule that fails on prose is not searched on a tool call's arguments (streamed or final);
  // one that fails only on the final arguments is switched off there, told once.
  Controller c(RuleSet{{},
                       {},
                       {MakeRule("prose", {"(a+)+b"}), MakeRule("args", {"(x+x+)+y"}, "tool"),
                        MakeRule("danger", {"DANGER"}, "tool")},
                       {},
                       {},
                       {}},
               "/proj", "");
  Feed f = Stream(c, std::string(200, 'a'), 50);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("'prose'"), std::string::npos) << f.warnings[0];

  StreamDelta d;
  d.kind = DeltaKind::kToolCallStart;
  d.index = 0;
  d.id = "call-1";
  d.name = "bash";
  EXPECT_FALSE(c.OnDelta(d));
  d.kind = DeltaKind::kToolCallEnd;
  // A `y` after the run: a search of complete text that has no `y` there stops at once.
  d.text = R"({"command":")" + std::string(5000, 'x') + R"( y DANGER"})";
  auto fired = c.OnDelta(d);
  ASSERT_TRUE(fired);
  ASSERT_EQ(fired->rules.size(), 1u);
  EXPECT_EQ(fired->rules[0]->name, "danger");
  auto w = c.TakeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'args'"), std::string::npos) << w[0];
  EXPECT_TRUE(c.switched_off("args"));
  EXPECT_TRUE(c.TakeWarnings().empty());
}

TEST(TtsrLimitTest, AFailedConditionLeavesTheSetAndItsPartnersGoOnAlone) {
  // Joined into one alternation (both start with `a`), a hostile condition and an ordinary one:
  // the joined search fails, the hostile one is dropped, the ordinary one still matches later.
  auto hostile = CompileCondition("(a+)+b");
  auto plain = CompileCondition("abc");
  ASSERT_TRUE(hostile.ok() && plain.ok());
  std::vector<ConditionSet::Item> items = {{"(a+)+b", &*hostile, 7}, {"abc", &*plain, 9}};
  auto joined = ConditionSet::Join(items);
  ASSERT_EQ(joined.size(), 1u);
  ConditionSet set(items, joined);
  std::string text(3000, 'a');
  std::vector<ConditionSet::Failure> failures;
  EXPECT_TRUE(set.Update(text, &failures).empty());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].tag, 7u);
  EXPECT_EQ(failures[0].error.code, ErrorCode::kRegexLimit);
  failures.clear();
  text += "aaaa";
  EXPECT_TRUE(set.Update(text, &failures).empty());
  EXPECT_TRUE(failures.empty()) << "a dropped condition is not searched again";
  text += "bc";
  EXPECT_EQ(set.Update(text, &failures), (std::vector<size_t>{9}));
  EXPECT_TRUE(failures.empty());
}

}  // namespace
}  // namespace lousho::agent::rules

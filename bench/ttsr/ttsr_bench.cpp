// Stream-rule matching benchmark: 100 rules over 1 MB of assistant text streamed in deltas of
// 1-24 bytes. Compares the engine's incremental matching (the session's controller, joined
// alternation; and each rule alone) with rescanning the whole buffer after every delta, against
// the floor of one JIT search of the whole 1 MB per rule (and of the joined alternation).
// Then the hostile case: a 30 KB reply streamed through the controller with the 100 rules, and
// with four rules that backtrack exponentially on it added (each is switched off at its first
// limit error), for the time with them against the time without.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "agent/rules/controller.h"
#include "agent/rules/matcher.h"
#include "agent/rules/rule.h"

namespace {
using namespace lousho;
using namespace lousho::agent;
using Clock = std::chrono::steady_clock;

std::vector<std::string> Patterns() {
  std::vector<std::string> p;
  char buf[128];
  for (int i = 0; i < 40; ++i) {
    std::snprintf(buf, sizeof buf, "FORBIDDEN_TOKEN_%02d", i);
    p.push_back(buf);
  }
  for (int i = 0; i < 20; ++i) {
    std::snprintf(buf, sizeof buf, "\\bbadname%02d\\b", i);
    p.push_back(buf);
  }
  for (int i = 0; i < 10; ++i) {
    std::snprintf(buf, sizeof buf, "(?i)never say %02d", i);
    p.push_back(buf);
  }
  for (int i = 0; i < 10; ++i) {
    std::snprintf(buf, sizeof buf, "console\\.log\\(%d\\)|debugger_%d", i, i);
    p.push_back(buf);
  }
  for (int i = 0; i < 5; ++i) {
    std::snprintf(buf, sizeof buf, "(?<=import )lib%02d", i);
    p.push_back(buf);
  }
  for (int i = 0; i < 5; ++i) {
    std::snprintf(buf, sizeof buf, "begin%02d[\\s\\S]{0,300}?end%02d", i, i);
    p.push_back(buf);
  }
  for (int i = 0; i < 5; ++i) {
    std::snprintf(buf, sizeof buf, "(?m)^### heading %02d$", i);
    p.push_back(buf);
  }
  for (int i = 0; i < 5; ++i) {
    std::snprintf(buf, sizeof buf, ": any%02d\\b|as any%02d\\b", i, i);
    p.push_back(buf);
  }
  return p;
}

// Prose-like text that triggers none of the rules, with near misses (prefixes of conditions).
std::string Text(size_t bytes, std::mt19937& rng) {
  static const std::vector<std::string> words = {"the",
                                                 "model",
                                                 "writes",
                                                 "code",
                                                 "for",
                                                 "a",
                                                 "user",
                                                 "function",
                                                 "return",
                                                 "value",
                                                 "na\xC3\xAFve",
                                                 "\xCE\xBB",
                                                 "caf\xC3\xA9",
                                                 "import",
                                                 "lib",
                                                 "console.log",
                                                 "debugger",
                                                 "any",
                                                 "as",
                                                 ":",
                                                 "FORBIDDEN",
                                                 "TOKEN",
                                                 "begin",
                                                 "end",
                                                 "###",
                                                 "heading",
                                                 "never",
                                                 "say",
                                                 "badname",
                                                 "\n",
                                                 "\xE2\x82\xAC",
                                                 "\xF0\x9F\x98\x80",
                                                 "{",
                                                 "}",
                                                 "(",
                                                 ")",
                                                 "=>"};
  std::uniform_int_distribution<size_t> pick(0, words.size() - 1);
  std::string s;
  while (s.size() < bytes) {
    s += words[pick(rng)];
    s += ' ';
  }
  return s;
}

std::vector<std::string> Deltas(const std::string& text, std::mt19937& rng) {
  std::uniform_int_distribution<size_t> len(1, 24);
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t n = std::min(len(rng), text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// The four conditions a hostile repository may plant (issue 18, N4).
const char* const kHostile[] = {"(a+)+b", "(a|aa)*c\\d", "(?s)(.*)*X", "(\\w+\\s?)*$z"};

double BestMs(int runs, const std::function<void()>& f) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

// The rules, one per pattern; empty (and a message) when one does not load.
std::vector<rules::Rule> LoadRules(const std::vector<std::string>& patterns) {
  std::vector<rules::Rule> rule_list;
  for (size_t i = 0; i < patterns.size(); ++i) {
    Json::Value fields(Json::objectValue);
    fields["condition"] = patterns[i];
    auto r = rules::RuleFromFields("r" + std::to_string(i), "/bench/r.md", "bench", fields, "x",
                                   nullptr, nullptr);
    if (!r) {
      std::fprintf(stderr, "pattern %s did not load\n", patterns[i].c_str());
      return {};
    }
    rule_list.push_back(std::move(*r));
  }
  return rule_list;
}

// The session's controller fed the text deltas `ds` (best of `runs`); `fired` counts the rules
// that fired and `told` the warnings (rules switched off).
double ControllerMs(int runs, const std::vector<rules::Rule>& list,
                    const std::vector<std::string>& ds, size_t& fired, size_t& told) {
  return BestMs(runs, [&] {
    rules::RuleSet set;
    set.rules = list;
    rules::Controller c(std::move(set), "/bench", "");
    c.ResetBuffers();
    StreamDelta d;
    d.kind = DeltaKind::kText;
    for (const auto& piece : ds) {
      d.text = piece;
      if (c.OnDelta(d)) ++fired;
    }
    told += c.TakeWarnings().size();
  });
}

// Each rule alone (no joined alternation): one incremental matcher per rule, per delta.
double AloneMs(const std::vector<rules::ConditionSet::Item>& items,
               const std::vector<std::string>& deltas, size_t& fired) {
  return BestMs(1, [&] {
    rules::ConditionSet set(items, {});
    std::string acc;
    for (const auto& piece : deltas) {
      acc += piece;
      size_t whole = acc.size();
      while (whole > 0 && (static_cast<unsigned char>(acc[whole - 1]) & 0xC0) == 0x80) --whole;
      if (whole > 0 && static_cast<unsigned char>(acc[whole - 1]) >= 0xC0) --whole;
      fired += set.Update(std::string_view(acc).substr(0, whole)).size();
    }
  });
}

// Rescanning: the whole buffer searched after every delta, over the first `rescan_bytes` only
// (it is quadratic); `rescan_deltas` is how many deltas that took.
double RescanMs(const Regex& joined, const std::vector<std::string>& deltas, size_t rescan_bytes,
                size_t& rescan_deltas, bool& any) {
  return BestMs(1, [&] {
    std::string acc;
    for (const auto& piece : deltas) {
      if (acc.size() >= rescan_bytes) break;
      acc += piece;
      ++rescan_deltas;
      any |= *joined.Search(acc);
    }
  });
}

// The hostile case. The reply is the probe's (30,000 a's and a c) and 30 KB of the prose
// above, in 100-byte and in 1-24-byte deltas; the rules are the 100, with and without the four.
void PrintHostile(const std::vector<rules::Rule>& rule_list, const std::string& text,
                  std::mt19937& rng, size_t& fired) {
  std::vector<rules::Rule> hostile_list = rule_list;
  for (const char* p : kHostile) {
    Json::Value fields(Json::objectValue);
    fields["condition"] = p;
    hostile_list.push_back(*rules::RuleFromFields("hostile" + std::to_string(hostile_list.size()),
                                                  "/bench/.cursor/rules/h.mdc", ".cursor", fields,
                                                  "x", nullptr, nullptr));
  }
  const std::string run = std::string(30'000, 'a') + "c";
  const std::string prose = text.substr(0, 30'000);
  std::vector<std::string> run_fixed, prose_fixed;
  for (size_t i = 0; i < run.size(); i += 100) run_fixed.push_back(run.substr(i, 100));
  for (size_t i = 0; i < prose.size(); i += 100) prose_fixed.push_back(prose.substr(i, 100));
  size_t told = 0;
  std::printf("\n30 KB reply through the controller: 100 rules, then with the 4 hostile ones\n");
  std::printf("| reply, deltas | without (ms) | with (ms) | ratio |\n|---|---|---|---|\n");
  const std::pair<const char*, const std::vector<std::string>*> cases[] = {
      {"30,000 a's + c, 100 bytes", &run_fixed},
      {"prose, 100 bytes", &prose_fixed},
      {"30,000 a's + c, 1-24 bytes", nullptr},
      {"prose, 1-24 bytes", nullptr}};
  std::vector<std::string> run_small = Deltas(run, rng);
  std::vector<std::string> prose_small = Deltas(prose, rng);
  for (const auto& [name, ds] : cases) {
    const auto& deltas_used = ds ? *ds : (name[0] == '3' ? run_small : prose_small);
    const double without = ControllerMs(5, rule_list, deltas_used, fired, told);
    const double with = ControllerMs(5, hostile_list, deltas_used, fired, told);
    std::printf("| %s | %.2f | %.2f | %.2fx |\n", name, without, with, with / without);
  }
  std::printf("rules switched off, summed over the runs with them: %zu\n", told);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? std::stoul(argv[1]) : 1 << 20;
  const size_t rescan_bytes = argc > 2 ? std::stoul(argv[2]) : 16 << 10;
  std::mt19937 rng(20261201);
  const std::string text = Text(bytes, rng);
  const auto deltas = Deltas(text, rng);
  const auto patterns = Patterns();

  const std::vector<rules::Rule> rule_list = LoadRules(patterns);
  if (rule_list.size() != patterns.size()) return 1;
  std::vector<const Regex*> regexes;
  std::vector<rules::ConditionSet::Item> items;
  for (size_t i = 0; i < rule_list.size(); ++i) {
    regexes.push_back(&rule_list[i].conditions[0].regex);
    items.push_back({patterns[i], regexes.back(), i});
  }
  const auto groups = rules::ConditionSet::Join(items);
  // One alternation of all the rules (for the floor and the rescan: the cheapest single pass).
  std::string all;
  for (const auto& p : patterns) all += (all.empty() ? "(?:" : "|(?:") + p + ")";
  RegexOptions jo;
  jo.ecmascript = true;
  auto joined = std::make_shared<const Regex>(*Regex::Compile(all, jo));

  bool any = false;
  // Floor: one JIT search of the whole text per rule, and of the joined alternation.
  double floor_each = BestMs(5, [&] {
    for (const Regex* re : regexes) any |= *re->Search(text);
  });
  double floor_joined = BestMs(5, [&] { any |= *joined->Search(text); });
  double floor_groups = BestMs(5, [&] {
    for (const auto& g : groups) any |= *g.regex->Search(text);
  });

  // The engine: the session's controller fed the provider's text deltas.
  size_t fired = 0;
  size_t told = 0;
  double controller = ControllerMs(3, rule_list, deltas, fired, told);
  double alone = AloneMs(items, deltas, fired);
  size_t rescan_deltas = 0;
  double rescan = RescanMs(*joined, deltas, rescan_bytes, rescan_deltas, any);
  const double scale = static_cast<double>(bytes) / static_cast<double>(rescan_bytes);

  std::printf("text %zu bytes, %zu deltas (1-24 bytes), %zu rules; fired %zu, any %d\n",
              text.size(), deltas.size(), patterns.size(), fired, any ? 1 : 0);
  std::printf("| what | ms |\n|---|---|\n");
  std::printf("| floor: one JIT search of 1 MB per rule (100 searches) | %.1f |\n", floor_each);
  std::printf("| floor: one JIT search of 1 MB, all rules in one alternation | %.1f |\n",
              floor_joined);
  std::printf("| floor: one JIT search of 1 MB per joined group (%zu groups) | %.1f |\n",
              groups.size(), floor_groups);
  std::printf("| incremental, session controller (joined) | %.1f |\n", controller);
  std::printf("| incremental, each rule alone | %.1f |\n", alone);
  std::printf("| rescan after every delta, joined, first %zu KB (%zu deltas) | %.1f |\n",
              rescan_bytes >> 10, rescan_deltas, rescan);
  std::printf("| rescan extrapolated to 1 MB (quadratic: x%.0f) | %.0f |\n", scale * scale,
              rescan * scale * scale);
  std::printf("controller / floor: per rule %.2fx, one alternation %.2fx, per group %.2fx\n",
              controller / floor_each, controller / floor_joined, controller / floor_groups);

  PrintHostile(rule_list, text, rng, fired);
  return fired == 0 ? 0 : 1;
}

// Stream rules: discovery in priority order, duplicate names, and the settings' layers.
#include "agent/rules/loader.h"

#include <algorithm>
#include <set>

#include "support/files.h"
#include "support/json_util.h"

namespace lousho::agent::rules {
namespace fs = std::filesystem;

namespace {

// Rule files are prose; a bigger one is a mistake, not a rule.
constexpr uint64_t kMaxRuleFileBytes = 1024ULL * 1024;

bool IsRuleFile(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".md" || ext == ".mdc";
}

// Why a context rule is not a stream rule, for listings.
std::string ContextRuleNote(const Rule& r) {
  return r.always_apply ? "not a stream rule: in the system prompt (alwaysApply)"
                        : "not a stream rule: added when a turn touches its files (globs)";
}

void ReadOne(const fs::path& file, const std::string& origin, std::vector<Rule>* rules,
             std::vector<Skipped>* skipped, std::vector<std::string>* warnings,
             std::set<std::string>* seen, std::vector<Rule>* context) {
  if (seen) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(file, ec);
    if (!seen->insert(ec ? file.lexically_normal().string() : resolved.string()).second) return;
  }
  auto text = ReadDiskFile(file, kMaxRuleFileBytes);
  if (!text.ok()) {
    warnings->push_back(file.string() + ": cannot read (" + text.error().message + ")");
    return;
  }
  const std::string name = file.stem().string();
  std::string why;
  auto rule = ParseRuleText(name, file.string(), origin, *text, warnings, &why);
  if (rule) {
    rules->push_back(std::move(*rule));
    return;
  }
  auto in_context =
      context ? ContextRuleFromText(name, file.string(), origin, *text) : std::nullopt;
  if (in_context) {
    skipped->push_back(Skipped{name, file.string(), ContextRuleNote(*in_context)});
    context->push_back(std::move(*in_context));
    return;
  }
  skipped->push_back(Skipped{name, file.string(), why});
}

// Applies one layer of `ttsr:` keys (from a project file) leniently: a bad value is a warning.
void ApplySettings(const Json::Value& t, const std::string& from, Settings* s,
                   std::vector<std::string>* warnings) {
  auto bad = [&](const std::string& key) {
    warnings->push_back(from + ": ttsr." + key + " has an invalid value; ignored");
  };
  if (const Json::Value* v = FindMember(t, "enabled")) {
    if (auto b = AsBool(*v)) {
      s->enabled = *b;
    } else {
      bad("enabled");
    }
  }
  if (const Json::Value* v = FindMember(t, "contextMode")) {
    auto m = ParseContextMode(AsString(*v).value_or(""));
    if (m) {
      s->context_mode = *m;
    } else {
      bad("contextMode");
    }
  }
  if (const Json::Value* v = FindMember(t, "interruptMode")) {
    auto m = ParseInterruptMode(AsString(*v).value_or(""));
    if (m) {
      s->interrupt_mode = *m;
    } else {
      bad("interruptMode");
    }
  }
  if (const Json::Value* v = FindMember(t, "repeatMode")) {
    auto m = ParseRepeatMode(AsString(*v).value_or(""));
    if (m) {
      s->repeat_mode = *m;
    } else {
      bad("repeatMode");
    }
  }
  if (const Json::Value* v = FindMember(t, "repeatGap")) {
    auto n = AsInt64(*v);
    if (n && *n >= 0 && *n <= 1'000'000) {
      s->repeat_gap = static_cast<int>(*n);
    } else {
      bad("repeatGap");
    }
  }
}

}  // namespace

void ReadRulePath(const fs::path& path, const std::string& origin, std::vector<Rule>* rules,
                  std::vector<Skipped>* skipped, std::vector<std::string>* warnings,
                  std::set<std::string>* seen, std::vector<Rule>* context) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    ReadOne(path, origin, rules, skipped, warnings, seen, context);
    return;
  }
  if (!fs::is_directory(path, ec)) return;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (IsRuleFile(it->path()) && it->is_regular_file(fec)) files.push_back(it->path());
    if (files.size() > 10'000) break;  // a runaway folder is not a rule book
  }
  if (ec) warnings->push_back(path.string() + ": cannot list (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) ReadOne(f, origin, rules, skipped, warnings, seen, context);
}

std::shared_ptr<const AgentRules> LoadAgentRules(const config::AgentSpec& spec,
                                                 const std::string& home) {
  auto a = std::make_shared<AgentRules>();
  a->home = home;
  const config::TtsrSpec& t = spec.ttsr;
  a->settings_from.push_back("defaults");
  if (t.enabled || t.context_mode || t.interrupt_mode || t.repeat_mode || t.repeat_gap)
    a->settings_from.push_back(spec.source);
  if (t.enabled) a->settings.enabled = *t.enabled;
  if (t.context_mode)
    a->settings.context_mode = ParseContextMode(*t.context_mode).value_or(ContextMode::kDiscard);
  if (t.interrupt_mode)
    a->settings.interrupt_mode =
        ParseInterruptMode(*t.interrupt_mode).value_or(InterruptMode::kAlways);
  if (t.repeat_mode)
    a->settings.repeat_mode = ParseRepeatMode(*t.repeat_mode).value_or(RepeatMode::kOnce);
  if (t.repeat_gap) a->settings.repeat_gap = *t.repeat_gap;

  for (const auto& r : spec.rules) {
    if (!r.path.empty()) {
      ReadRulePath(r.path, "spec", &a->spec_rules, &a->skipped, &a->warnings, &a->files,
                   &a->spec_context_rules);
      continue;
    }
    std::string why;
    auto rule = RuleFromFields(r.name, r.where, "spec", r.fields, r.content, &a->warnings, &why);
    auto in_context =
        rule ? std::nullopt : ContextRuleFromFields(r.name, r.where, "spec", r.fields, r.content);
    if (rule) {
      a->spec_rules.push_back(std::move(*rule));
    } else if (in_context) {
      a->skipped.push_back(Skipped{r.name, r.where, ContextRuleNote(*in_context)});
      a->spec_context_rules.push_back(std::move(*in_context));
    } else {
      a->skipped.push_back(Skipped{r.name, r.where, why});
    }
  }
  if (!spec.rules_dir.empty())
    ReadRulePath(spec.rules_dir, "agent", &a->spec_rules, &a->skipped, &a->warnings, &a->files,
                 &a->spec_context_rules);
  if (!home.empty())
    ReadRulePath(fs::path(home) / ".lousho" / "rules", "user", &a->user_rules, &a->skipped,
                 &a->warnings, &a->files, &a->user_context_rules);
  return a;
}

RuleSet LoadSessionRules(const AgentRules& agent, const fs::path& cwd) {
  RuleSet set;
  set.settings = agent.settings;
  set.settings_from = agent.settings_from;
  set.skipped = agent.skipped;
  set.warnings = agent.warnings;

  // The project's override of the settings.
  for (const char* name : {"config.yml", "config.yaml"}) {
    const fs::path file = cwd / ".lousho" / name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    auto text = ReadDiskFile(file, kMaxRuleFileBytes);
    if (!text.ok()) {
      set.warnings.push_back(file.string() + ": cannot read (" + text.error().message + ")");
      break;
    }
    auto doc = LoadYaml(*text);
    if (!doc || !(doc->isObject() || doc->isNull())) {
      set.warnings.push_back(file.string() + ": not a YAML mapping; ignored");
      break;
    }
    if (const Json::Value* t = FindMember(*doc, "ttsr"); t && t->isObject()) {
      ApplySettings(*t, file.string(), &set.settings, &set.warnings);
      set.settings_from.push_back(file.string());
    }
    break;
  }

  // The agent's files (its folder may be the project's .lousho/, the home the project) are not
  // read again.
  std::set<std::string> seen = agent.files;
  std::vector<Rule> project, project_context;
  for (const auto& [dir, origin] :
       {std::pair{".lousho", "project"}, std::pair{".omp", ".omp"}, std::pair{".agents", ".agents"},
        std::pair{".cursor", ".cursor"}})
    ReadRulePath(cwd / dir / "rules", origin, &project, &set.skipped, &set.warnings, &seen,
                 &project_context);

  std::set<std::string> names;
  auto take = [&](const std::vector<Rule>& layer, std::vector<Rule>* into) {
    for (const auto& r : layer) {
      if (!names.insert(r.name).second) {
        set.skipped.push_back(Skipped{r.name, r.path, "shadowed by an earlier rule of that name"});
        continue;
      }
      into->push_back(r);
    }
  };
  take(agent.spec_rules, &set.rules);
  take(project, &set.rules);
  take(agent.user_rules, &set.rules);
  take(agent.spec_context_rules, &set.context_rules);
  take(project_context, &set.context_rules);
  take(agent.user_context_rules, &set.context_rules);
  if (!set.settings.enabled) {
    for (const auto& r : set.rules)
      set.skipped.push_back(Skipped{r.name, r.path, "ttsr.enabled is false"});
    set.rules.clear();
  }
  return set;
}

}  // namespace lousho::agent::rules

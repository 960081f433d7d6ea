// Stream rules: parsing rule files leniently (front matter, conditions, scopes) into Rules.
#include "agent/rules/rule.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "support/json_util.h"
#include "support/text.h"

namespace lousho::agent::rules {
namespace fs = std::filesystem;

const char* ContextModeId(ContextMode m) {
  switch (m) {
    case ContextMode::kDiscard:
      return "discard";
    case ContextMode::kKeep:
      return "keep";
  }
  return "discard";
}

const char* InterruptModeId(InterruptMode m) {
  switch (m) {
    case InterruptMode::kAlways:
      return "always";
    case InterruptMode::kProseOnly:
      return "prose-only";
    case InterruptMode::kToolOnly:
      return "tool-only";
    case InterruptMode::kNever:
      return "never";
  }
  return "always";
}

const char* RepeatModeId(RepeatMode m) {
  switch (m) {
    case RepeatMode::kOnce:
      return "once";
    case RepeatMode::kAfterGap:
      return "after-gap";
  }
  return "once";
}

const char* SourceId(Source s) {
  switch (s) {
    case Source::kText:
      return "text";
    case Source::kThinking:
      return "thinking";
    case Source::kTool:
      return "tool";
  }
  return "text";
}

std::optional<ContextMode> ParseContextMode(std::string_view s) {
  if (s == "discard") return ContextMode::kDiscard;
  if (s == "keep") return ContextMode::kKeep;
  return std::nullopt;
}

std::optional<InterruptMode> ParseInterruptMode(std::string_view s) {
  if (s == "always") return InterruptMode::kAlways;
  if (s == "prose-only") return InterruptMode::kProseOnly;
  if (s == "tool-only") return InterruptMode::kToolOnly;
  if (s == "never") return InterruptMode::kNever;
  return std::nullopt;
}

std::optional<RepeatMode> ParseRepeatMode(std::string_view s) {
  if (s == "once") return RepeatMode::kOnce;
  if (s == "after-gap") return RepeatMode::kAfterGap;
  return std::nullopt;
}

std::optional<Source> ParseSource(std::string_view s) {
  if (s == "text") return Source::kText;
  if (s == "thinking") return Source::kThinking;
  if (s == "tool") return Source::kTool;
  return std::nullopt;
}

bool Rule::needs_paths() const {
  if (!glob_matchers.empty()) return true;
  for (const auto& t : tools)
    if (t.glob) return true;
  return false;
}

namespace {

std::string_view Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// YAML -> JSON, plain scalars typed (true/false, numbers), quoted ones strings. Never throws.
Json::Value YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Json::Value();
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (!s.empty() &&
          std::all_of(s.begin(), s.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
          s.size() < 10)
        return std::stoi(s);
      return s;
    }
    case YAML::NodeType::Sequence: {
      Json::Value a(Json::arrayValue);
      for (const auto& item : n) a.append(YamlToJson(item));
      return a;
    }
    case YAML::NodeType::Map: {
      Json::Value o(Json::objectValue);
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) continue;
        o[kv.first.Scalar()] = YamlToJson(kv.second);
      }
      return o;
    }
  }
  return Json::Value();
}

// `kebab-case` -> `kebabCase`.
std::string CamelCase(std::string_view key) {
  std::string out;
  bool up = false;
  for (char c : key) {
    if (c == '-') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

// `"text","thinking"`: a quoted value with more after its closing quote, which YAML readers
// take as just "text". Such a value is kept as written (SplitList handles it).
bool QuotedWithRest(std::string_view v) {
  if (v.size() < 2 || (v[0] != '"' && v[0] != '\'')) return false;
  size_t close = v.find(v[0], 1);
  if (close == std::string_view::npos) return false;
  std::string_view rest = Trim(v.substr(close + 1));
  return !rest.empty() && rest[0] != '#';
}

// The fallback for front matter YAML refuses: `key: value` lines, each value read as YAML (or
// kept as written).
Json::Value LineWise(std::string_view block, bool parse_values) {
  Json::Value out(Json::objectValue);
  size_t pos = 0;
  while (pos <= block.size()) {
    size_t nl = block.find('\n', pos);
    std::string_view line = block.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? block.size() + 1 : nl + 1;
    if (line.empty() || std::isspace(static_cast<unsigned char>(line[0])) || line[0] == '#')
      continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string key = CamelCase(Trim(line.substr(0, colon)));
    std::string value(Trim(line.substr(colon + 1)));
    auto parsed = parse_values && !QuotedWithRest(value) ? LoadYaml(value) : std::nullopt;
    out[key] = parsed && !parsed->isNull() ? *parsed : Json::Value(value);
  }
  return out;
}

}  // namespace

std::vector<std::string> Strings(const Json::Value& v) {
  std::vector<std::string> out;
  if (auto s = AsString(v)) out.push_back(*s);
  if (v.isArray())
    for (const auto& item : v)
      if (auto s = AsString(item)) out.push_back(*s);
  return out;
}

bool Truthy(const Json::Value& v, bool fallback) {
  if (auto b = AsBool(v)) return *b;
  if (auto str = AsString(v)) {
    std::string s = AsciiLower(*str);
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  return fallback;
}

namespace {

std::string Unquote(std::string_view s) {
  s = Trim(s);
  while (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = Trim(s.substr(1, s.size() - 2));
  // A lone quote left over by a malformed list (`"text","thinking"` read as one string).
  while (!s.empty() && (s.front() == '"' || s.front() == '\'')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '"' || s.back() == '\'')) s.remove_suffix(1);
  return std::string(Trim(s));
}

// Adds one scope token to the rule; false when it is not understood.
bool AddScope(Rule* r, const std::string& raw) {
  std::string token = Unquote(raw);
  std::string low = AsciiLower(token);
  if (low == "text") {
    r->text = true;
  } else if (low == "thinking") {
    r->thinking = true;
  } else if (low == "tool" || low == "toolcall" || low == "tools") {
    r->tools.push_back(ToolScope{});
  } else {
    std::string rest = low.rfind("tool:", 0) == 0 ? token.substr(5) : token;
    ToolScope ts;
    size_t open = rest.find('(');
    if (open != std::string::npos) {
      if (rest.back() != ')') return false;
      ts.glob_text = rest.substr(open + 1, rest.size() - open - 2);
      ts.glob = Glob(ts.glob_text, GlobMode::kPath);
      rest = rest.substr(0, open);
    } else if (low.rfind("tool:", 0) != 0) {
      return false;  // a bare word that is not a source
    }
    ts.tool = AsciiLower(Trim(rest));
    if (ts.tool.empty() && ts.glob_text.empty()) return false;
    r->tools.push_back(std::move(ts));
  }
  r->scope.push_back(token);
  return true;
}

// The key RuleFromFields takes its conditions from.
const char* ConditionKey(const Json::Value& fields) {
  for (const char* key : {"condition", "ttsr_trigger", "ttsrTrigger"})
    if (!Strings(MemberOrNull(fields, key)).empty()) return key;
  return nullptr;
}

// Where each condition string of a rule file is written, as "<path>:<line>:<col>", in the order
// RuleFromFields reads them (a list item that is no string has no place, as it is no
// condition); empty when not known. Front matter YAML refuses was read line by line: then the
// key's line stands for its one condition.
std::vector<std::string> ConditionPlaces(const FrontMatter& fm, const std::string& path) {
  const char* key = ConditionKey(fm.fields);
  if (!key || fm.block_line == 0) return {};
  auto at = [&](size_t line, size_t col) {
    return path + ":" + std::to_string(fm.block_line + line) + ":" + std::to_string(col + 1);
  };
  std::vector<std::string> out;
  try {
    const YAML::Node root = YAML::Load(fm.block);
    if (root.IsMap()) {
      const YAML::Node v = root[key];
      auto place = [&](const YAML::Node& n) {
        const YAML::Mark m = n.Mark();
        out.push_back(m.line >= 0 && m.column >= 0
                          ? at(static_cast<size_t>(m.line), static_cast<size_t>(m.column))
                          : path);
      };
      if (v.IsScalar()) place(v);
      if (v.IsSequence())
        for (const auto& item : v)
          if (AsString(YamlToJson(item))) place(item);
      return out;
    }
  } catch (const std::exception&) {
  }
  const std::string prefix = std::string(key) + ":";
  size_t line = 0;
  for (size_t pos = 0; pos <= fm.block.size(); ++line) {
    size_t nl = fm.block.find('\n', pos);
    if (fm.block.compare(pos, prefix.size(), prefix) == 0) return {at(line, 0)};
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return {};
}

}  // namespace

std::optional<Json::Value> LoadYaml(const std::string& text) {
  try {
    return YamlToJson(YAML::Load(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

FrontMatter ParseFrontMatter(std::string_view text) {
  FrontMatter fm;
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t end = std::string_view::npos;
  if (text.rfind("---", 0) == 0) end = text.find("\n---", 3);
  if (end == std::string_view::npos) {
    fm.body = std::string(Trim(text));
    return fm;
  }
  size_t first_nl = text.find('\n');
  std::string_view block = text.substr(first_nl + 1, end > first_nl ? end - first_nl - 1 : 0);
  fm.block = std::string(block);
  fm.block_line = 2;
  size_t after = text.find('\n', end + 4);
  fm.body = after == std::string_view::npos ? "" : std::string(Trim(text.substr(after + 1)));
  auto parsed = LoadYaml(std::string(block));
  if (parsed && parsed->isObject()) {
    fm.fields = *parsed;
    // yaml-cpp reads `scope: "text","thinking"` as "text" and drops the rest; such a line (a
    // quoted value with more after its closing quote) is kept as written instead.
    Json::Value raw = LineWise(block, /*parse_values=*/false);
    for (const auto& key : MemberNames(raw)) {
      std::string v = AsString(MemberOrNull(raw, key)).value_or("");
      if (QuotedWithRest(v)) fm.fields[key] = v;
    }
  } else if (!parsed || !parsed->isNull()) {
    fm.fields = LineWise(block, /*parse_values=*/true);
  }
  return fm;
}

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  std::string cur;
  auto flush = [&] {
    std::string t = Unquote(cur);
    if (!t.empty()) out.push_back(t);
    cur.clear();
  };
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
      cur += c;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    cur += c;
  }
  flush();
  return out;
}

bool LooksLikeGlob(std::string_view token) {
  if (token.find_first_of("*?[]{}") == std::string_view::npos) return false;
  if (token.find_first_of("\\^$+|()") != std::string_view::npos) return false;
  if (token.find('/') != std::string_view::npos) return true;
  // `*.ext`
  if (token.size() < 3 || token.substr(0, 2) != "*.") return false;
  return std::all_of(token.begin() + 2, token.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

RegexOptions ConditionOptions() {
  RegexOptions o;
  o.ecmascript = true;
  o.jit_partial_soft = true;  // matched on streams (rules/matcher.h)
  // A condition is searched on every delta of a reply, so one search may cost what its text
  // warrants and little more. Normal conditions need at most about one step per byte from a
  // start position (`BEGIN.*END`) and a depth of 2.5 per byte (`(?:a|b)*$`); the floors let any
  // of them run on short text, the caps are the fixed limits of other searches (the heap's is
  // lower: a stream's text is held in memory already). A backtracking condition (`(a+)+b`)
  // fails on the first delta at the cost of the floor (about 1 ms with the JIT).
  o.match_limit = RegexLimit{100'000, 64 * 1024, 10'000'000};  // 64 steps per byte
  o.depth_limit = RegexLimit{20'000, 4 * 1024, 2'000'000};     // 4 levels per byte
  o.heap_limit_kib = RegexLimit{2 * 1024, 512, 128 * 1024};    // 512 bytes per byte
  return o;
}

Result<Regex> CompileCondition(std::string_view pattern) {
  RegexOptions o = ConditionOptions();
  // A leading flags group of i/m/s is how people write JavaScript flags in a string.
  if (pattern.size() > 3 && pattern.substr(0, 2) == "(?") {
    size_t close = pattern.find(')');
    std::string_view letters = pattern.substr(2, close == std::string_view::npos ? 0 : close - 2);
    if (!letters.empty() && letters.find_first_not_of("ims") == std::string_view::npos) {
      for (char c : letters) {
        if (c == 'i') o.case_insensitive = true;
        if (c == 'm') o.multiline = true;
        if (c == 's') o.dot_all = true;
      }
      pattern.remove_prefix(close + 1);
    }
  }
  return Regex::Compile(pattern, o);
}

namespace {

// Adds a rule's conditions to it: a glob-looking one becomes edit and write scopes, an invalid
// regex a warning at `at[i]` (else at the rule's path). Returns whether any was a glob.
bool AddConditions(Rule* r, const std::vector<std::string>& conditions,
                   const std::vector<std::string>& at, std::vector<std::string>* warnings) {
  bool had_glob = false;
  for (size_t i = 0; i < conditions.size(); ++i) {
    const std::string& c = conditions[i];
    if (LooksLikeGlob(c)) {
      had_glob = true;
      AddScope(r, "tool:edit(" + c + ")");
      AddScope(r, "tool:write(" + c + ")");
      continue;
    }
    auto re = CompileCondition(c);
    if (!re.ok()) {
      if (warnings)
        warnings->push_back((i < at.size() ? at[i] : r->path) + ": condition " +
                            std::to_string(i + 1) + " '" + c + "' is not a valid regex (" +
                            re.error().message + "); skipped");
      continue;
    }
    r->conditions.push_back(Condition{c, *re});
  }
  return had_glob;
}

// The rule's conditions: `condition`, or the older `ttsr_trigger` or `ttsrTrigger`.
std::vector<std::string> ConditionTexts(const Json::Value& fields) {
  std::vector<std::string> conditions = Strings(MemberOrNull(fields, "condition"));
  if (conditions.empty()) conditions = Strings(MemberOrNull(fields, "ttsr_trigger"));
  if (conditions.empty()) conditions = Strings(MemberOrNull(fields, "ttsrTrigger"));
  return conditions;
}

// `scope`: strings or lists of text, thinking, tool, tool:NAME(GLOB); others are warned about.
void AddScopeField(Rule* r, const Json::Value& scope,
                   const std::function<void(const std::string&)>& warn) {
  std::vector<std::string> tokens;
  for (const auto& s : Strings(scope))
    for (auto& t : SplitList(s)) tokens.push_back(std::move(t));
  for (const auto& t : tokens)
    if (!AddScope(r, t)) warn("scope '" + t + "' is not text, thinking, tool or tool:NAME(GLOB)");
}

void ReadInterruptModeField(Rule* r, const Json::Value& fields,
                            const std::function<void(const std::string&)>& warn) {
  auto mode = AsString(MemberOrNull(fields, "interruptMode"));
  if (!mode) return;
  r->interrupt_mode = ParseInterruptMode(*mode);
  if (!r->interrupt_mode)
    warn("interruptMode '" + *mode +
         "' is not always, prose-only, tool-only or never; the setting applies");
}

}  // namespace

std::optional<Rule> RuleFromFields(const std::string& name, const std::string& path,
                                   const std::string& origin, const Json::Value& fields,
                                   std::string content, std::vector<std::string>* warnings,
                                   std::string* why, const std::vector<std::string>& condition_at) {
  auto warn = [&](const std::string& w) {
    if (warnings) warnings->push_back(path + ": " + w);
  };
  auto no = [&](const std::string& w) -> std::optional<Rule> {
    if (why) *why = w;
    return std::nullopt;
  };
  Rule r;
  r.name = name;
  r.path = path;
  r.origin = origin;
  r.content = std::move(content);
  r.description = StringOr(fields, "description");
  r.always_apply = Truthy(MemberOrNull(fields, "alwaysApply"), false);
  r.enabled = Truthy(MemberOrNull(fields, "enabled"), true);
  if (!r.enabled) return no("disabled (enabled: false)");

  const std::vector<std::string> conditions = ConditionTexts(fields);
  if (conditions.empty()) return no("not a stream rule (no condition)");

  // Scope first: glob-looking conditions add to it.
  const Json::Value& scope = MemberOrNull(fields, "scope");
  AddScopeField(&r, scope, warn);

  const bool had_glob = AddConditions(&r, conditions, condition_at, warnings);
  if (r.conditions.empty() && had_glob)
    r.conditions.push_back(Condition{".*", *CompileCondition(".*")});
  if (r.conditions.empty()) return no("no valid condition");
  if (scope.isNull() && !had_glob) {
    r.text = true;
    r.tools.push_back(ToolScope{});
    r.scope = {"text", "tool"};
  }
  if (!r.text && !r.thinking && r.tools.empty()) return no("its scope excludes every stream");

  AddGlobsField(&r, fields);
  ReadInterruptModeField(&r, fields, warn);
  return r;
}

std::optional<Rule> ParseRuleText(const std::string& name, const std::string& path,
                                  const std::string& origin, std::string_view text,
                                  std::vector<std::string>* warnings, std::string* why) {
  FrontMatter fm = ParseFrontMatter(text);
  const std::vector<std::string> at = ConditionPlaces(fm, path);
  return RuleFromFields(name, path, origin, fm.fields, std::move(fm.body), warnings, why, at);
}

namespace {

// The strings of the arguments whose names end in "path", and the items of those ending in
// "paths".
std::vector<std::string> PathArguments(const Json::Value& args) {
  std::vector<std::string> raw;
  for (const auto& key : MemberNames(args)) {
    std::string low = AsciiLower(key);
    const Json::Value& v = MemberOrNull(args, key);
    auto ends = [&](std::string_view suffix) {
      return low.size() >= suffix.size() &&
             low.compare(low.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (auto s = AsString(v); s && ends("path")) raw.push_back(*s);
    if (v.isArray() && ends("paths"))
      for (const auto& item : v)
        if (auto s = AsString(item)) raw.push_back(*s);
  }
  return raw;
}

// The ways a glob may name path p: as given, without leading "./", absolute, and relative to
// cwd when inside it.
template <typename Add>
void AddPathSpellings(const std::string& p, const fs::path& cwd, Add add) {
  add(p);
  std::string plain = p;
  while (plain.rfind("./", 0) == 0) plain = plain.substr(2);
  add(plain);
  fs::path abs = fs::path(plain).is_absolute() ? fs::path(plain) : cwd / plain;
  abs = abs.lexically_normal();
  add(abs.string());
  if (cwd.empty()) return;
  fs::path rel = abs.lexically_relative(cwd);
  if (!rel.empty() && rel.native().rfind("..", 0) != 0) add(rel.string());
}

}  // namespace

std::vector<std::string> CandidatePaths(const Json::Value& args, const fs::path& cwd) {
  std::vector<std::string> out;
  if (!args.isObject()) return out;
  auto add = [&](std::string p) {
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(std::move(p));
  };
  for (const auto& p : PathArguments(args)) {
    if (p.empty() || p.find('\0') != std::string::npos) continue;
    AddPathSpellings(p, cwd, add);
  }
  return out;
}

std::string ShownPath(const std::string& path, const fs::path& cwd, const std::string& home) {
  fs::path p(path);
  if (!p.is_absolute()) return path;
  if (!cwd.empty()) {
    fs::path rel = p.lexically_relative(cwd);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.string();
  }
  if (!home.empty()) {
    fs::path rel = p.lexically_relative(home);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return "~/" + rel.string();
  }
  return path;
}

}  // namespace lousho::agent::rules

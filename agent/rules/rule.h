// Stream rules (TTSR): one rule as loaded from a Markdown file with front matter or from the
// spec, the session settings, and the lenient parsing both need.
#pragma once

#include <json/json.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/glob.h"
#include "support/regex.h"

namespace lousho::agent::rules {

enum class ContextMode { kDiscard, kKeep };
enum class InterruptMode { kAlways, kProseOnly, kToolOnly, kNever };
enum class RepeatMode { kOnce, kAfterGap };
// Which stream a buffer holds.
enum class Source { kText, kThinking, kTool };

const char* ContextModeId(ContextMode m);
const char* InterruptModeId(InterruptMode m);
const char* RepeatModeId(RepeatMode m);
const char* SourceId(Source s);
std::optional<ContextMode> ParseContextMode(std::string_view s);
std::optional<InterruptMode> ParseInterruptMode(std::string_view s);
std::optional<RepeatMode> ParseRepeatMode(std::string_view s);
std::optional<Source> ParseSource(std::string_view s);

// The `ttsr:` settings of a session (spec, then the project's override).
struct Settings {
  bool enabled = true;
  ContextMode context_mode = ContextMode::kDiscard;
  InterruptMode interrupt_mode = InterruptMode::kAlways;
  RepeatMode repeat_mode = RepeatMode::kOnce;
  int repeat_gap = 10;  // completed turns
};

// One `tool…` scope token: a tool name (empty: any tool) and an optional path glob.
struct ToolScope {
  std::string tool;  // lower case
  std::string glob_text;
  std::optional<Glob> glob;
};

// A condition as written and, when it compiled, its regex.
struct Condition {
  std::string pattern;  // as written (flags group included)
  Regex regex;
};

// A loaded rule. Immutable once loaded; copies share the compiled regexes.
struct Rule {
  std::string name;     // file name without .md/.mdc, or the spec's `name`
  std::string path;     // absolute file, or "<spec>:<line>:<col>" for an inline rule
  std::string origin;   // "spec", "agent", "project", ".omp", ".agents", ".cursor", "user"
  std::string content;  // the body: what gets injected
  std::string description;
  std::vector<Condition> conditions;  // the ones that compiled; OR-ed
  bool text = false;                  // scope: assistant text
  bool thinking = false;              // scope: thinking
  std::vector<ToolScope> tools;       // scope: tool calls
  std::vector<std::string> scope;     // the scope tokens as understood, for listings
  std::vector<std::string> globs;     // path gate, as written
  std::vector<Glob> glob_matchers;
  std::optional<InterruptMode> interrupt_mode;  // the rule's own, else the setting
  bool always_apply = false;
  bool enabled = true;
  // A match needs a file path from the tool call (a `globs` gate or a scope glob).
  bool needs_paths() const;
};

// Reads a rule from its file text. `warnings` get "<path>: …" lines (an invalid regex:
// "<path>:<line>:<col>: …", and the offset in the pattern). Returns nullopt for a file that is not
// a stream rule (no condition, a scope that excludes everything) or is disabled; `why` then says
// which.
std::optional<Rule> ParseRuleText(const std::string& name, const std::string& path,
                                  const std::string& origin, std::string_view text,
                                  std::vector<std::string>* warnings, std::string* why);
// Builds a rule from front-matter keys already parsed (a spec's inline rule, or a file's).
// `condition_at`: where each condition string is written ("<file>:<line>:<col>"), in the order
// of the condition list, for the warnings about it; empty: `path` stands for all.
std::optional<Rule> RuleFromFields(const std::string& name, const std::string& path,
                                   const std::string& origin, const Json::Value& fields,
                                   std::string content, std::vector<std::string>* warnings,
                                   std::string* why,
                                   const std::vector<std::string>& condition_at = {});

// Front matter: the YAML between a leading `---` line and the next `\n---`, leniently (a block
// YAML refuses is read line by line as `key: value`, keys with `-` camel-cased). The body is
// what follows, trimmed. No front matter: empty fields, the whole text as body.
struct FrontMatter {
  Json::Value fields{Json::objectValue};
  std::string body;
  std::string block;      // the YAML text between the `---` lines
  size_t block_line = 0;  // the file's line (from 1) the block starts on; 0: no front matter
};
FrontMatter ParseFrontMatter(std::string_view text);
// YAML text as JSON (plain scalars typed); nullopt when YAML refuses it. Never throws.
std::optional<Json::Value> LoadYaml(const std::string& text);

// A front-matter value as strings: a string or a list of strings (anything else: none).
std::vector<std::string> Strings(const Json::Value& v);
// A front-matter value as a flag: a bool, or true/yes/on, false/no/off in any case.
bool Truthy(const Json::Value& v, bool fallback);

// `globs` (strings or lists of them, comma-separated): the files the rule is about.
void AddGlobsField(Rule* r, const Json::Value& fields);

// A rule file that is no stream rule (no condition) but belongs in the context: one with
// `alwaysApply: true` (always in the system prompt) or with `globs` (added when a turn touches a
// file they match). The rule holds name, path, origin, content, description, always_apply and
// globs; nullopt when the file is neither, or disabled.
std::optional<Rule> ContextRuleFromText(const std::string& name, const std::string& path,
                                        const std::string& origin, std::string_view text);
std::optional<Rule> ContextRuleFromFields(const std::string& name, const std::string& path,
                                          const std::string& origin, const Json::Value& fields,
                                          std::string content);

// Splits a scope / glob list on commas outside ()[]{} and quotes; surrounding quotes are removed.
std::vector<std::string> SplitList(std::string_view s);
// A condition that looks like a file glob (`src/**/*.ts`, `*.py`) rather than a regex.
bool LooksLikeGlob(std::string_view token);
// The options conditions are compiled with: ECMAScript-like, with limits that grow with the text.
RegexOptions ConditionOptions();
// Compiles one condition with ConditionOptions(); a leading `(?i)`/`(?m)`/`(?s)` group
// (any mix of those letters) becomes the matching flags.
Result<Regex> CompileCondition(std::string_view pattern);

// Candidate file paths of a tool call: string arguments whose key is `path` or ends in `path`,
// strings in arrays whose key ends in `paths`; each as given, without `./`, absolute and
// cwd-relative.
std::vector<std::string> CandidatePaths(const Json::Value& args, const std::filesystem::path& cwd);

// How a rule's path is shown to the model: cwd-relative, else `~/…`, else as is.
std::string ShownPath(const std::string& path, const std::filesystem::path& cwd,
                      const std::string& home);

}  // namespace lousho::agent::rules

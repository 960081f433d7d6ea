// Context rules: rule files without a stream condition that belong in the model's context
// (Cursor's and omp's `alwaysApply` and `globs` rules).
#include "agent/rules/rule.h"
#include "support/json_util.h"

namespace lousho::agent::rules {

void AddGlobsField(Rule* r, const Json::Value& fields) {
  for (const auto& g : Strings(MemberOrNull(fields, "globs")))
    for (auto& t : SplitList(g)) {
      r->glob_matchers.emplace_back(t, GlobMode::kPath);
      r->globs.push_back(std::move(t));
    }
}

std::optional<Rule> ContextRuleFromFields(const std::string& name, const std::string& path,
                                          const std::string& origin, const Json::Value& fields,
                                          std::string content) {
  if (!Truthy(MemberOrNull(fields, "enabled"), true)) return std::nullopt;
  Rule r;
  r.name = name;
  r.path = path;
  r.origin = origin;
  r.description = AsString(MemberOrNull(fields, "description")).value_or("");
  r.always_apply = Truthy(MemberOrNull(fields, "alwaysApply"), false);
  if (!r.always_apply) AddGlobsField(&r, fields);
  if (!r.always_apply && r.globs.empty()) return std::nullopt;
  if (content.empty()) return std::nullopt;
  r.content = std::move(content);
  return r;
}

std::optional<Rule> ContextRuleFromText(const std::string& name, const std::string& path,
                                        const std::string& origin, std::string_view text) {
  FrontMatter fm = ParseFrontMatter(text);
  return ContextRuleFromFields(name, path, origin, fm.fields, std::move(fm.body));
}

}  // namespace lousho::agent::rules

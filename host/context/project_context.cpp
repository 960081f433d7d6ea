// A session's context: files, rules that always apply, environment; and its report.
#include "host/context/project_context.h"

#include "support/text.h"

namespace lousho::host::context {
namespace fs = std::filesystem;

namespace {

// The rules block: each rule that always applies under a heading naming its file.
std::string RulesText(const std::vector<agent::rules::Rule>& rules, const ContextInputs& in) {
  std::string body;
  for (const auto& r : rules) {
    std::string content = r.content;
    if (content.size() > static_cast<size_t>(in.settings.max_file_bytes)) {
      content.resize(static_cast<size_t>(in.settings.max_file_bytes));
      content += "\n[lousho: cut by context.maxFileBytes; read " + r.path + " for the rest]";
    }
    body += "## Rule " + r.name + " (" + agent::rules::ShownPath(r.path, in.cwd, in.home) +
            ")\n\n" + content + "\n\n";
  }
  if (body.empty()) return {};
  body.pop_back();
  return "# Rules\n\nRules of this project that always apply.\n\n" + body;
}

void Join(std::string* into, const std::string& part) {
  if (part.empty()) return;
  if (!into->empty()) *into += "\n";
  *into += part;
  if (into->back() != '\n') *into += "\n";
}

std::string Size(uint64_t bytes) { return std::to_string(bytes) + " B"; }

std::string FileLine(const ContextFile& f) {
  std::string line(2 + 2 * static_cast<size_t>(f.depth), ' ');
  line += f.path + "  (" + f.why + ")";
  if (!f.refused.empty()) return line + ": not used: " + f.refused + "\n";
  line += ": " + Size(f.bytes);
  if (f.depth == 0 && f.with_imports != f.bytes)
    line += ", " + Size(f.with_imports) + " with imports";
  if (f.depth == 0 && f.cut) line += ", cut to " + Size(f.kept);
  return line + "\n";
}

}  // namespace

ContextReport BuildContext(const ContextInputs& in) {
  ContextReport report;
  const config::ContextSpec& s = in.settings;
  ContextFileOptions fo;
  fo.cwd = in.cwd;
  fo.additional_dirs = in.additional_dirs;
  fo.roots.push_back(in.cwd);
  fo.roots.insert(fo.roots.end(), in.additional_dirs.begin(), in.additional_dirs.end());
  fo.roots.insert(fo.roots.end(), in.extra_roots.begin(), in.extra_roots.end());
  fo.home = in.home;
  fo.config_home = in.config_home;
  fo.file_names = s.file_names;
  fo.project = s.files;
  fo.user = s.user_files;
  fo.max_bytes = static_cast<uint64_t>(s.max_bytes);
  fo.max_file_bytes = static_cast<uint64_t>(s.max_file_bytes);
  fo.import_depth = s.import_depth;
  fo.skip_path = in.instructions_file;
  if (s.files || s.user_files) report.files = CollectContextFiles(fo);
  if (s.rules && in.rules) {
    for (auto& r : agent::rules::LoadSessionRules(*in.rules, in.cwd).context_rules)
      (r.always_apply ? report.always_rules : report.file_rules).push_back(std::move(r));
  }
  if (s.environment) {
    EnvironmentOptions eo;
    eo.cwd = in.cwd;
    eo.git = s.git;
    eo.date = in.date;
    report.environment = DescribeEnvironment(eo);
  }
  Join(&report.context.text, report.files.text);
  Join(&report.context.text, RulesText(report.always_rules, in));
  Join(&report.context.text, report.environment.text);
  report.context.file_rules = report.file_rules;
  return report;
}

ContextInputs InputsFor(const config::AgentSpec* spec,
                        std::shared_ptr<const agent::rules::AgentRules> rules, const fs::path& cwd,
                        std::vector<fs::path> additional_dirs, std::vector<fs::path> extra_roots,
                        const EnvLookup& env) {
  ContextInputs in;
  if (spec != nullptr) {
    in.settings = spec->context;
    in.instructions_file = (fs::path(spec->dir) / "AGENTS.md").string();
  }
  in.cwd = cwd;
  in.additional_dirs = std::move(additional_dirs);
  in.extra_roots = std::move(extra_roots);
  in.home = env("HOME").value_or("");
  in.config_home = ConfigHome(env);
  in.rules = std::move(rules);
  return in;
}

agent::ContextSource ContextSourceFor(ContextInputs inputs) {
  return [inputs = std::move(inputs)] { return BuildContext(inputs).context; };
}

std::string DescribeReport(const ContextReport& r) {
  std::string out = "Context files (general first):\n";
  if (r.files.files.empty()) out += "  none\n";
  for (const auto& f : r.files.files) out += FileLine(f);
  out += "Rules that always apply:\n";
  if (r.always_rules.empty()) out += "  none\n";
  for (const auto& rule : r.always_rules)
    out += "  " + rule.name + "  " + rule.path + ": " + Size(rule.content.size()) + "\n";
  out += "Rules added when a turn touches their files:\n";
  if (r.file_rules.empty()) out += "  none\n";
  for (const auto& rule : r.file_rules) {
    out += "  " + rule.name + "  " + rule.path + " (" + JoinStrings(rule.globs, ", ") +
           "): " + Size(rule.content.size()) + "\n";
  }
  out += "Environment: " +
         (r.environment.text.empty() ? std::string("off") : Size(r.environment.text.size()));
  if (!r.environment.git_problem.empty()) out += " (" + r.environment.git_problem + ")";
  out += "\nContext block: " + Size(r.context.text.size()) + "\n";
  return out;
}

}  // namespace lousho::host::context

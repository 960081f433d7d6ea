// The `skill` tool: a skill's instructions and files, read from its folder when asked.
#include "agent/tools/skill_tool.h"

#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {
namespace fs = std::filesystem;

namespace {

class SkillTool : public Tool {
 public:
  explicit SkillTool(std::vector<skills::Skill> skills) : skills_(std::move(skills)) {
    description_ =
        "Load a skill: instructions for a kind of task, written for you, with files they may "
        "refer to. When the task at hand matches a skill's description, call this with the "
        "skill's name first and follow what it says. Pass `file` (a path the skill lists, "
        "relative to its folder) to read one of its other files.\n\nSkills:";
    for (const auto& s : skills_) description_ += "\n- " + s.name + ": " + s.description;
  }

  std::string name() const override { return "skill"; }
  std::string description() const override { return description_; }
  Json::Value parameters() const override {
    return ObjectSchema({{"name", PropSchema("string", "The skill's name")},
                         {"file", PropSchema("string",
                                             "A file of the skill, relative to its folder "
                                             "(omit for the skill's instructions)")}},
                        {"name"});
  }
  ToolKind kind() const override { return ToolKind::kRead; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    const std::string file = AsString(MemberOrNull(args, "file")).value_or("");
    return "Skill " + AsString(MemberOrNull(args, "name")).value_or("?") +
           (file.empty() ? "" : ": " + file);
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return AsString(MemberOrNull(args, "name")).value_or("");
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto name = a.String("name", true);
    auto file = a.String("file", false);
    if (!a.ok()) return ToolOutput::Error("skill: " + a.error());
    const skills::Skill* skill = Find(*name);
    if (skill == nullptr)
      return ToolOutput::Error("skill: no skill named '" + *name + "'" + Names());
    ToolOutput out = file && !file->empty() ? ReadFile(*skill, *file, ctx) : Instructions(*skill);
    if (!out.is_error) {
      out.details["name"] = skill->name;
      out.details["path"] = skill->file.string();
    }
    return out;
  }

 private:
  const skills::Skill* Find(const std::string& name) const {
    for (const auto& s : skills_)
      if (s.name == name) return &s;
    return nullptr;
  }

  std::string Names() const {
    std::string out;
    for (const auto& s : skills_) out += (out.empty() ? "; there are: " : ", ") + s.name;
    return out;
  }

  static ToolOutput Instructions(const skills::Skill& skill) {
    auto body = skills::ReadSkillBody(skill);
    if (!body.ok()) return ToolOutput::Error("skill " + skill.name + ": " + body.error().message);
    std::string text = "Skill " + skill.name + " (folder " + skill.dir.string() + ")\n\n" + *body;
    const std::vector<std::string> files = skills::SkillFiles(skill, kMaxSkillFilesListed + 1);
    if (!files.empty()) {
      text += "\n\nFiles of this skill (read one with skill {name, file}):";
      for (size_t i = 0; i < files.size() && i < kMaxSkillFilesListed; ++i)
        text += "\n- " + files[i];
      if (files.size() > kMaxSkillFilesListed) text += "\n- … (more not listed)";
    }
    return ToolOutput::Text(std::move(text));
  }

  // A file inside the skill's folder (after symlinks are resolved), as text.
  static ToolOutput ReadFile(const skills::Skill& skill, const std::string& rel, ToolContext& ctx) {
    const std::string fail = "skill " + skill.name + ": " + rel + ": ";
    auto root = RealPath(skill.dir);
    auto real = RealPath(AbsolutePath(skill.dir, rel));
    if (!root.ok() || !real.ok()) return ToolOutput::Error(fail + "cannot resolve the path");
    if (!IsWithin(*real, *root)) return ToolOutput::Error(fail + "not inside the skill's folder");
    auto text = ReadDiskFile(*real, kMaxTextFileBytes, ctx.cancel);
    if (!text.ok()) return ToolOutput::Error(fail + text.error().message);
    if (LooksBinary(std::string_view(*text).substr(0, 8192)))
      return ToolOutput::Error(fail + "a binary file");
    if (text->size() > kMaxToolOutputBytes) {
      text->resize(Utf8Prefix(*text, kMaxToolOutputBytes));
      *text += "\n[cut at " + ByteSize(kMaxToolOutputBytes) + "]";
    }
    return ToolOutput::Text(std::move(*text));
  }

  std::vector<skills::Skill> skills_;
  std::string description_;
};

}  // namespace

std::unique_ptr<Tool> MakeSkillTool(std::vector<skills::Skill> skills) {
  return std::make_unique<SkillTool>(std::move(skills));
}

}  // namespace lousho::agent::tools

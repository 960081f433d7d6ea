// Tests of skills and commands from files: where they are found, front matter (good and bad),
// precedence between folders, the spec's `skills:` switches, the skill tool, argument
// substitution and the order between built-in, spec and file commands.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/builtin_commands.h"
#include "agent/skills/discovery.h"
#include "agent/tools/skill_tool.h"
#include "config/agent_spec.h"

namespace lousho::agent::skills {
namespace {
namespace fs = std::filesystem;

// A fresh folder holding a repository (with .git) and a home, removed at the end.
class SkillsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "lousho-skills-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = fs::canonical(tmpl);
    repo_ = root_ / "repo";
    home_ = root_ / "home";
    fs::create_directories(repo_ / ".git");
    fs::create_directories(repo_ / "sub");
    fs::create_directories(home_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  static void Write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  static std::string SkillText(const std::string& name, const std::string& desc,
                               const std::string& body = "Do it well.") {
    return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n";
  }
  Places At(const fs::path& cwd) const { return Places{cwd, home_, home_ / ".lousho"}; }
  static const Skill* FindSkill(const Found& f, const std::string& name) {
    for (const auto& s : f.skills)
      if (s.name == name) return &s;
    return nullptr;
  }
  static const config::SlashCommand* FindCommand(const Found& f, const std::string& name) {
    for (const auto& c : f.commands)
      if (c.name == name) return &c;
    return nullptr;
  }
  static std::string WhySkipped(const Found& f, const fs::path& path) {
    for (const auto& k : f.skipped)
      if (k.path == path.string()) return k.why;
    return "";
  }

  fs::path root_, repo_, home_;
};

TEST_F(SkillsTest, FindsSkillsOfEveryPeerFolderFromTheWorkingFolderUpToTheRepoRoot) {
  Write(repo_ / ".claude/skills/pdf/SKILL.md", SkillText("pdf", "Fill PDF forms"));
  Write(repo_ / ".agents/skills/lint/SKILL.md", SkillText("lint", "Run the linters"));
  Write(repo_ / "sub/.lousho/skills/deploy/SKILL.md", SkillText("deploy", "Ship it"));
  Write(home_ / ".claude/skills/notes/SKILL.md", SkillText("notes", "Personal notes"));
  Write(home_ / ".lousho/skills/mine/SKILL.md", SkillText("mine", "Lousho's own"));
  // Above the repository root: not the project's.
  Write(root_ / ".claude/skills/outside/SKILL.md", SkillText("outside", "Not read"));

  const Found f = Discover(config::SkillsSpec{}, At(repo_ / "sub"));
  ASSERT_NE(FindSkill(f, "pdf"), nullptr);
  EXPECT_EQ(FindSkill(f, "pdf")->description, "Fill PDF forms");
  EXPECT_EQ(FindSkill(f, "pdf")->origin, "project");
  EXPECT_EQ(FindSkill(f, "pdf")->dir, repo_ / ".claude/skills/pdf");
  EXPECT_NE(FindSkill(f, "lint"), nullptr);
  EXPECT_NE(FindSkill(f, "deploy"), nullptr);
  ASSERT_NE(FindSkill(f, "notes"), nullptr);
  EXPECT_EQ(FindSkill(f, "notes")->origin, "user");
  EXPECT_NE(FindSkill(f, "mine"), nullptr);
  EXPECT_EQ(FindSkill(f, "outside"), nullptr);
  EXPECT_TRUE(f.skipped.empty());
}

TEST_F(SkillsTest, OutsideARepositoryOnlyTheWorkingFolderIsTheProjects) {
  fs::remove_all(repo_ / ".git");
  Write(repo_ / ".claude/skills/up/SKILL.md", SkillText("up", "In a parent"));
  Write(repo_ / "sub/.claude/skills/here/SKILL.md", SkillText("here", "In the working folder"));
  const Found f = Discover(config::SkillsSpec{}, At(repo_ / "sub"));
  EXPECT_NE(FindSkill(f, "here"), nullptr);
  EXPECT_EQ(FindSkill(f, "up"), nullptr);
}

TEST_F(SkillsTest, BadFrontMatterIsSkippedWithTheReasonAndTheRestIsRead) {
  Write(repo_ / ".claude/skills/good/SKILL.md", SkillText("good", "Fine"));
  Write(repo_ / ".claude/skills/yaml/SKILL.md", "---\nname: yaml\ndescription: [unclosed\n---\nb");
  Write(repo_ / ".claude/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody");
  Write(repo_ / ".claude/skills/none/SKILL.md", "just a body");
  Write(repo_ / ".claude/skills/list/SKILL.md", "---\n- a\n- b\n---\nbody");
  Write(repo_ / ".claude/skills/badname/SKILL.md", SkillText("has space", "x"));
  const Found f = Discover(config::SkillsSpec{}, At(repo_));
  ASSERT_EQ(f.skills.size(), 1u);
  EXPECT_EQ(f.skills[0].name, "good");
  const fs::path dir = repo_ / ".claude/skills";
  EXPECT_NE(WhySkipped(f, dir / "yaml/SKILL.md").find("not valid YAML (line "), std::string::npos)
      << WhySkipped(f, dir / "yaml/SKILL.md");
  EXPECT_EQ(WhySkipped(f, dir / "nodesc/SKILL.md"), "no description in the front matter");
  EXPECT_NE(WhySkipped(f, dir / "none/SKILL.md").find("no front matter"), std::string::npos);
  EXPECT_EQ(WhySkipped(f, dir / "list/SKILL.md"), "the front matter is not a mapping of keys");
  EXPECT_NE(WhySkipped(f, dir / "badname/SKILL.md").find("is not 1-64 letters"), std::string::npos);
  EXPECT_EQ(f.skipped.size(), 5u);
}

TEST_F(SkillsTest, NameDefaultsToTheFolderAndTheFirstOfANameWins) {
  Write(repo_ / ".lousho/skills/fmt/SKILL.md", "---\ndescription: Lousho's fmt\n---\nb");
  Write(repo_ / ".claude/skills/fmt/SKILL.md", SkillText("fmt", "Claude's fmt"));
  Write(home_ / ".claude/skills/fmt/SKILL.md", SkillText("fmt", "The user's fmt"));
  const Found f = Discover(config::SkillsSpec{}, At(repo_));
  ASSERT_EQ(f.skills.size(), 1u);
  EXPECT_EQ(f.skills[0].description, "Lousho's fmt");
  EXPECT_NE(WhySkipped(f, repo_ / ".claude/skills/fmt/SKILL.md").find("is taken by"),
            std::string::npos);
  EXPECT_NE(WhySkipped(f, home_ / ".claude/skills/fmt/SKILL.md").find("is taken by"),
            std::string::npos);
}

TEST_F(SkillsTest, LongDescriptionsAreCut) {
  Write(repo_ / ".claude/skills/long/SKILL.md", SkillText("long", std::string(3000, 'd')));
  const Found f = Discover(config::SkillsSpec{}, At(repo_));
  ASSERT_EQ(f.skills.size(), 1u);
  EXPECT_EQ(f.skills[0].description, std::string(kMaxDescriptionChars, 'd') + "…");
}

TEST_F(SkillsTest, TheSpecSwitchesTurnPartsOff) {
  Write(repo_ / ".claude/skills/p/SKILL.md", SkillText("p", "project"));
  Write(home_ / ".claude/skills/u/SKILL.md", SkillText("u", "user"));
  Write(repo_ / ".claude/commands/c.md", "hello");
  Write(root_ / "extra/x/SKILL.md", SkillText("x", "from the spec's paths"));
  config::SkillsSpec spec;
  spec.paths = {(root_ / "extra").string()};
  spec.user = false;
  Found f = Discover(spec, At(repo_));
  EXPECT_NE(FindSkill(f, "p"), nullptr);
  EXPECT_EQ(FindSkill(f, "u"), nullptr);
  ASSERT_NE(FindSkill(f, "x"), nullptr);
  EXPECT_EQ(FindSkill(f, "x")->origin, "spec");
  spec.project = false;
  spec.user = true;
  f = Discover(spec, At(repo_));
  EXPECT_EQ(FindSkill(f, "p"), nullptr);
  EXPECT_NE(FindSkill(f, "u"), nullptr);
  EXPECT_EQ(FindCommand(f, "c"), nullptr);
  spec = config::SkillsSpec{};
  spec.enabled = false;
  f = Discover(spec, At(repo_));
  EXPECT_TRUE(f.skills.empty());
  EXPECT_NE(FindCommand(f, "c"), nullptr);
  spec.commands = false;
  EXPECT_TRUE(Discover(spec, At(repo_)).commands.empty());
}

TEST_F(SkillsTest, CommandsFromEveryPeerFolderWithFrontMatter) {
  Write(repo_ / ".claude/commands/hello.md",
        "---\ndescription: Say hello\nargument-hint: [name] [mood]\n---\nHello $1, you are $2.");
  Write(repo_ / ".claude/commands/frontend/component.md", "# Make a component\nBuild $ARGUMENTS");
  Write(repo_ / ".pi/prompts/review.md", "---\nargument-hint: \"<pr>\"\n---\nReview PR $1");
  Write(home_ / ".codex/prompts/fix.md", "Fix $ARGUMENTS");
  Write(home_ / ".lousho/commands/mine.md", "Mine");
  Write(repo_ / ".claude/commands/notes.txt", "not markdown");
  const Found f = Discover(config::SkillsSpec{}, At(repo_ / "sub"));
  const auto* hello = FindCommand(f, "hello");
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->description, "Say hello");
  EXPECT_EQ(hello->hint, "[name] [mood]");
  EXPECT_EQ(hello->prompt, "Hello $1, you are $2.");
  EXPECT_EQ(hello->file, (repo_ / ".claude/commands/hello.md").string());
  const auto* component = FindCommand(f, "component");
  ASSERT_NE(component, nullptr);
  EXPECT_EQ(component->description, "Make a component (project:frontend)");
  ASSERT_NE(FindCommand(f, "review"), nullptr);
  EXPECT_EQ(FindCommand(f, "review")->hint, "<pr>");
  EXPECT_NE(FindCommand(f, "fix"), nullptr);
  EXPECT_NE(FindCommand(f, "mine"), nullptr);
  EXPECT_EQ(FindCommand(f, "notes"), nullptr);
  EXPECT_EQ(f.commands.size(), 5u);
}

TEST_F(SkillsTest, ACommandWithATakenNameIsSkippedAndFrontMatterIsReadLeniently) {
  Write(repo_ / ".lousho/commands/go.md", "Lousho's go");
  Write(repo_ / ".claude/commands/go.md", "Claude's go");
  // Not YAML (a quote left open): read line by line, as Claude Code does.
  Write(repo_ / ".claude/commands/odd.md",
        "---\ndescription: Use when: \"open\nargument-hint: <a> [b]\n---\nbody");
  const Found f = Discover(config::SkillsSpec{}, At(repo_));
  ASSERT_NE(FindCommand(f, "go"), nullptr);
  EXPECT_EQ(FindCommand(f, "go")->prompt, "Lousho's go");
  EXPECT_NE(WhySkipped(f, repo_ / ".claude/commands/go.md").find("is taken by"), std::string::npos);
  ASSERT_NE(FindCommand(f, "odd"), nullptr);
  EXPECT_EQ(FindCommand(f, "odd")->description, "Use when: \"open");
  EXPECT_EQ(FindCommand(f, "odd")->hint, "<a> [b]");
  EXPECT_EQ(FindCommand(f, "odd")->prompt, "body");
}

TEST_F(SkillsTest, TheSkillToolListsSkillsAndReadsBodiesAndFilesInsideTheFolderOnly) {
  Write(repo_ / ".claude/skills/pdf/SKILL.md", SkillText("pdf", "Fill PDF forms", "Use fill.py."));
  Write(repo_ / ".claude/skills/pdf/scripts/fill.py", "print('fill')\n");
  Write(repo_ / "secret.txt", "secret");
  fs::create_symlink(repo_ / "secret.txt", repo_ / ".claude/skills/pdf/link.txt");
  Found f = Discover(config::SkillsSpec{}, At(repo_));
  auto tool = tools::MakeSkillTool(f.skills);
  EXPECT_EQ(tool->name(), "skill");
  EXPECT_NE(tool->description().find("- pdf: Fill PDF forms"), std::string::npos);
  EXPECT_TRUE(tool->read_only());
  ToolContext ctx;
  ctx.cwd = repo_;
  Json::Value args(Json::objectValue);
  args["name"] = "pdf";
  ToolOutput out = tool->Run(args, ctx);
  ASSERT_FALSE(out.is_error);
  const std::string text = out.content[0].text;
  EXPECT_NE(text.find("Use fill.py."), std::string::npos);
  EXPECT_EQ(text.find("description:"), std::string::npos);  // no front matter
  EXPECT_NE(text.find("- scripts/fill.py"), std::string::npos);
  args["file"] = "scripts/fill.py";
  out = tool->Run(args, ctx);
  ASSERT_FALSE(out.is_error);
  EXPECT_EQ(out.content[0].text, "print('fill')\n");
  for (const char* escape : {"../../../secret.txt", "link.txt", "/etc/passwd"}) {
    args["file"] = escape;
    out = tool->Run(args, ctx);
    EXPECT_TRUE(out.is_error) << escape;
    EXPECT_NE(out.content[0].text.find("not inside the skill's folder"), std::string::npos)
        << out.content[0].text;
  }
  args = Json::Value(Json::objectValue);
  args["name"] = "nope";
  out = tool->Run(args, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(out.content[0].text.find("there are: pdf"), std::string::npos);
  EXPECT_TRUE(tool->Run(Json::Value(Json::objectValue), ctx).is_error);
}

}  // namespace
}  // namespace lousho::agent::skills

namespace lousho::agent {
namespace {

config::SlashCommand Cmd(const std::string& name, const std::string& prompt,
                         const std::string& file = "") {
  config::SlashCommand c;
  c.name = name;
  c.prompt = prompt;
  c.file = file;
  return c;
}

std::string Expand(const std::vector<config::SlashCommand>& commands, const std::string& text) {
  return ExpandPromptCommand(commands, {ContentBlock::Text(text)})[0].text;
}

TEST(FileCommandsTest, ArgumentsArePutInTheirPlaces) {
  EXPECT_EQ(SubstituteArguments("Fix issue #$ARGUMENTS now", "123"), "Fix issue #123 now");
  EXPECT_EQ(SubstituteArguments("All: $@", "a b"), "All: a b");
  EXPECT_EQ(SubstituteArguments("Review $1 with priority $2 ($3)", "456 \"very high\""),
            "Review 456 with priority very high ()");
  EXPECT_EQ(SubstituteArguments("$9$1", "'x y' z"), "x y");
  EXPECT_EQ(SubstituteArguments("No place", "given"), "No place\n\ngiven");
  EXPECT_EQ(SubstituteArguments("No place", ""), "No place");
  EXPECT_EQ(SubstituteArguments("Costs $5 and $ and $X", ""), "Costs  and $ and $X");
}

TEST(FileCommandsTest, ExpandsFileAndSpecCommandsEachInItsOwnSyntax) {
  const std::vector<config::SlashCommand> commands = {
      Cmd("spec", "Spec: {{args}} / $ARGUMENTS"),
      Cmd("file", "File: $ARGUMENTS / {{args}}", "/f.md")};
  EXPECT_EQ(Expand(commands, "/file  two words \n"), "File: two words / {{args}}");
  EXPECT_EQ(Expand(commands, "/spec two"), "Spec: two / $ARGUMENTS");
  EXPECT_EQ(Expand(commands, "/file"), "File:  / {{args}}");
  EXPECT_EQ(Expand(commands, "/other x"), "/other x");
  EXPECT_EQ(Expand(commands, "file x"), "file x");
}

TEST(FileCommandsTest, BuiltinsThenSpecThenFilesAndEveryShadowIsReported) {
  const std::vector<config::SlashCommand> spec = {Cmd("review", "spec review"),
                                                  Cmd("compact", "spec compact")};
  const std::vector<config::SlashCommand> files = {Cmd("review", "file review", "/r.md"),
                                                   Cmd("model", "file model", "/m.md"),
                                                   Cmd("hello", "file hello", "/h.md")};
  std::vector<std::string> shadowed;
  const auto merged = SessionCommands(spec, files, &shadowed);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].name, "review");
  EXPECT_EQ(merged[0].prompt, "spec review");
  EXPECT_EQ(merged[1].name, "hello");
  ASSERT_EQ(shadowed.size(), 3u);
  EXPECT_EQ(shadowed[0], "/compact (the spec) is shadowed by the built-in command of that name");
  EXPECT_EQ(shadowed[1], "/review (/r.md) is shadowed by /review (the spec)");
  EXPECT_EQ(shadowed[2], "/model (/m.md) is shadowed by the built-in command of that name");
}

TEST(FileCommandsTest, TheSpecSkillsBlockIsReadAndChecked) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "lousho-skspec-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path dir = tmpl;
  auto load = [&](const std::string& yaml) {
    std::ofstream(dir / "agent.yaml") << "model: script/echo\n" << yaml;
    return config::LoadAgentSpec((dir / "agent.yaml").string(), {});
  };
  auto spec = load("skills:\n  user: false\n  commands: false\n  paths: [more]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_TRUE(spec->skills.enabled);
  EXPECT_FALSE(spec->skills.user);
  EXPECT_FALSE(spec->skills.commands);
  EXPECT_TRUE(spec->skills.project);
  ASSERT_EQ(spec->skills.paths.size(), 1u);
  EXPECT_EQ(spec->skills.paths[0], (dir / "more").string());
  spec = load("skills: false\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->skills.enabled);
  EXPECT_FALSE(spec->skills.commands);
  spec = load("skills:\n  bogus: 1\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find("bogus"), std::string::npos);
  spec = load("");
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->skills.enabled && spec->skills.commands && spec->skills.user);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lousho::agent

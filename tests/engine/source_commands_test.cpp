// Commands offered by tool sources (MCP prompts): how a door lists them beside the session's
// own, and how a prompt that calls one becomes the user's turn (and links are resolved first).
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "agent/builtin_commands.h"
#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "core/command_source.h"

namespace lousho::agent {
namespace {

config::SlashCommand Spec(const std::string& name) {
  config::SlashCommand c;
  c.name = name;
  c.prompt = "spec " + name + " {{args}}";
  return c;
}

TEST(SourceCommandsTest, SourcesCommandsFollowTheSessionsUnlessShadowed) {
  std::vector<SourceCommand> sources = {{"mcp:s:p", "a prompt", "city"},
                                        {"review", "shadowed by the spec", ""},
                                        {"model", "shadowed by the built-in", ""}};
  auto offered = OfferedCommands({Spec("review")}, sources);
  ASSERT_EQ(offered.size(), 2u);
  EXPECT_EQ(offered[0].name, "review");
  EXPECT_EQ(offered[0].prompt, "spec review {{args}}");
  EXPECT_EQ(offered[1].name, "mcp:s:p");
  EXPECT_EQ(offered[1].description, "a prompt");
  EXPECT_EQ(offered[1].hint, "city");
}

TEST(SourceCommandsTest, OnlyCommandsNoneOfTheSessionsTakeAreSourceCalls) {
  const std::vector<config::SlashCommand> spec = {Spec("review")};
  auto call = ParseSourceCall(spec, {ContentBlock::Text("/mcp:s:p  Paris \"New York\" ")});
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->name, "mcp:s:p");
  EXPECT_EQ(call->args, "Paris \"New York\"");
  EXPECT_EQ(ArgumentWords(call->args), (std::vector<std::string>{"Paris", "New York"}));
  EXPECT_FALSE(ParseSourceCall(spec, {ContentBlock::Text("/review x")}).has_value());
  EXPECT_FALSE(ParseSourceCall(spec, {ContentBlock::Text("/compact")}).has_value());
  EXPECT_FALSE(ParseSourceCall(spec, {ContentBlock::Text("plain text")}).has_value());
  EXPECT_FALSE(ParseSourceCall(spec, {}).has_value());
}

// A source with one command, `mcp:s:greet`, which fails for the word "fail", and which reads
// its one resource `res://one` into prompts that link to it.
class GreetSource : public ToolSource, public CommandSource {
 public:
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken&) override { return {}; }
  void Close() override {}
  std::vector<SourceCommand> Commands() const override {
    return {{"mcp:s:greet", "Greet", "name"}};
  }
  std::optional<Result<std::vector<ContentBlock>>> ExpandCommand(
      const std::string& name, const std::vector<std::string>& words, const CancelToken&) override {
    if (name != "mcp:s:greet") return std::nullopt;
    if (!words.empty() && words[0] == "fail")
      return Result<std::vector<ContentBlock>>(MakeError(ErrorCode::kMcpServer, "server down"));
    std::string who;
    for (const auto& w : words) who += "<" + w + ">";
    return Result<std::vector<ContentBlock>>(
        std::vector<ContentBlock>{ContentBlock::Text("Say hello to " + who)});
  }
  void ResolveLinks(std::vector<ContentBlock>& content, const CancelToken&) override {
    for (auto& b : content)
      if (b.text == "[one](res://one)") b.text += "\nContents of res://one: 1";
  }
};

// The user's message a prompt became, in a session with a GreetSource.
Message UserTurn(std::vector<ContentBlock> prompt) {
  config::Script script;
  script.name = "t";
  config::ScriptStep done;
  done.text = "done";
  script.replies.push_back(config::ScriptReply{"", {done}});
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  SessionOptions o;
  o.id = "s";
  o.cwd = std::filesystem::temp_directory_path();
  auto session = *Session::Create(agent, std::move(o));
  session->tools().AddSource(std::make_shared<GreetSource>());
  std::promise<Result<TurnResult>> p;
  EXPECT_TRUE(
      session->Prompt(std::move(prompt), [&](Result<TurnResult> r) { p.set_value(std::move(r)); })
          .ok());
  auto r = p.get_future().get();
  EXPECT_TRUE(r.ok());
  Message user;
  for (const auto& m : session->transcript().Messages())
    if (m.role == Role::kUser) user = m;
  std::promise<void> closed;
  session->Close([&] { closed.set_value(); });
  closed.get_future().get();
  session->WaitIdle();
  return user;
}

TEST(SourceCommandsTest, ASourcesCommandBecomesTheUsersTurn) {
  Message user =
      UserTurn({ContentBlock::Text("/mcp:s:greet Ada 'B C'"), ContentBlock::Text("and more")});
  ASSERT_EQ(user.content.size(), 2u);
  EXPECT_EQ(user.content[0].text, "Say hello to <Ada><B C>");
  EXPECT_EQ(user.content[1].text, "and more");
}

TEST(SourceCommandsTest, AFailingCommandKeepsWhatTheUserTypedWithTheError) {
  Message user = UserTurn({ContentBlock::Text("/mcp:s:greet fail")});
  ASSERT_EQ(user.content.size(), 2u);
  EXPECT_EQ(user.content[0].text, "/mcp:s:greet fail");
  EXPECT_EQ(user.content[1].text, "[/mcp:s:greet failed: server down. Tell the user.]");
}

TEST(SourceCommandsTest, UnknownCommandsAndPlainPromptsStayAsTyped) {
  Message user = UserTurn({ContentBlock::Text("/mcp:s:other x")});
  ASSERT_EQ(user.content.size(), 1u);
  EXPECT_EQ(user.content[0].text, "/mcp:s:other x");
}

TEST(SourceCommandsTest, LinksAreResolvedBeforeTheModelSeesThem) {
  Message user = UserTurn({ContentBlock::Text("see"), ContentBlock::Text("[one](res://one)")});
  ASSERT_EQ(user.content.size(), 2u);
  EXPECT_EQ(user.content[1].text, "[one](res://one)\nContents of res://one: 1");
}

}  // namespace
}  // namespace lousho::agent

// Tests of the built-in commands' table: parsing a call and each handler against a fake host.
#include "agent/builtin_commands.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace lousho::agent {
namespace {

// A session as a command sees it, recording what was asked of it.
class FakeHost : public CommandHost {
 public:
  void Note(const std::string& text) override { notes.push_back(text); }
  bool Compact(const std::string& instructions) override {
    compacted.push_back(instructions);
    return !cancel;
  }
  std::string CurrentModel() const override { return model; }
  std::vector<std::string> OfferedModels() const override { return offered; }
  Status SelectModel(const std::string& id) override {
    for (const auto& o : offered)
      if (o == id) {
        model = id;
        return Status::Ok();
      }
    return MakeError(ErrorCode::kModelUnknown, "model '" + id + "' is not offered");
  }
  std::string Name() const override { return name; }
  Status SetName(const std::string& n) override {
    name = n;
    return Status::Ok();
  }
  Result<std::filesystem::path> Export(const std::string& path) override {
    if (path == "bad") return MakeError(ErrorCode::kToolIo, "cannot write");
    return std::filesystem::path("/out") / (path.empty() ? "x.html" : path);
  }

  std::vector<std::string> notes, compacted;
  std::string model = "p/m1";
  std::vector<std::string> offered = {"p/m1", "p/m2"};
  std::string name;
  bool cancel = false;
};

bool Call(FakeHost& host, const std::string& prompt) {
  auto call = ParseBuiltinCall({ContentBlock::Text(prompt)});
  EXPECT_TRUE(call.has_value()) << prompt;
  if (!call) return false;
  return call->command->run(host, call->args);
}

TEST(BuiltinCommandsTest, EveryRowHasAHandlerAndAUniqueName) {
  std::set<std::string> names;
  for (const auto& c : kBuiltinCommands) {
    EXPECT_NE(c.run, nullptr) << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(FindBuiltinCommand(c.name), &c);
  }
  EXPECT_EQ(FindBuiltinCommand("nope"), nullptr);
}

TEST(BuiltinCommandsTest, ParsesNameAndTrimmedArguments) {
  auto call = ParseBuiltinCall({ContentBlock::Text("/name   my work \n")});
  ASSERT_TRUE(call.has_value());
  EXPECT_STREQ(call->command->name, "name");
  EXPECT_EQ(call->args, "my work");
  EXPECT_FALSE(ParseBuiltinCall({ContentBlock::Text("/unknown x")}).has_value());
  EXPECT_FALSE(ParseBuiltinCall({ContentBlock::Text("name x")}).has_value());
  EXPECT_FALSE(ParseBuiltinCall({}).has_value());
}

TEST(BuiltinCommandsTest, CompactPassesInstructionsAndReportsACancel) {
  FakeHost host;
  EXPECT_FALSE(Call(host, "/compact keep the API notes"));
  EXPECT_EQ(host.compacted, std::vector<std::string>{"keep the API notes"});
  host.cancel = true;
  EXPECT_TRUE(Call(host, "/compact"));
}

TEST(BuiltinCommandsTest, ModelShowsSwitchesOrRefuses) {
  FakeHost host;
  EXPECT_FALSE(Call(host, "/model"));
  EXPECT_EQ(host.notes.back(), "Current model: p/m1\nAvailable:\n- p/m1\n- p/m2");
  Call(host, "/model p/m2");
  EXPECT_EQ(host.model, "p/m2");
  EXPECT_EQ(host.notes.back(), "Model: p/m2");
  Call(host, "/model q/z");
  EXPECT_EQ(host.notes.back(), "model 'q/z' is not offered\nAvailable:\n- p/m1\n- p/m2");
  host.offered.clear();
  Call(host, "/model");
  EXPECT_EQ(host.notes.back(), "Current model: p/m2");
}

TEST(BuiltinCommandsTest, NameAndExport) {
  FakeHost host;
  Call(host, "/name");
  EXPECT_EQ(host.notes.back(), "This session has no name yet; /name <title> gives it one.");
  Call(host, "/name Release prep");
  EXPECT_EQ(host.name, "Release prep");
  Call(host, "/name");
  EXPECT_EQ(host.notes.back(), "This session is named \"Release prep\".");
  Call(host, "/export a.html");
  EXPECT_EQ(host.notes.back(), "Exported this session to /out/a.html");
  Call(host, "/export bad");
  EXPECT_EQ(host.notes.back(), "/export: cannot write");
}

}  // namespace
}  // namespace lousho::agent

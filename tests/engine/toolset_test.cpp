// Tests of the session's tool set and of the stream control (interrupts, retries).
#include "agent/toolset.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/rule_watch.h"
#include "agent/stream_control.h"

namespace lousho::agent {
namespace {

class NamedTool : public Tool {
 public:
  NamedTool(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  Json::Value parameters() const override { return Json::Value(Json::objectValue); }
  ToolKind kind() const override { return ToolKind::kOther; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value&, const ToolContext&) const override { return name_; }
  std::string PermissionSubject(const Json::Value&) const override { return ""; }
  ToolOutput Run(const Json::Value&, ToolContext&) override { return ToolOutput::Error("unused"); }

 private:
  std::string name_, description_;
};

std::shared_ptr<Tool> Named(const std::string& name, const std::string& description = "") {
  return std::make_shared<NamedTool>(name, description);
}

// A source whose tools the test changes; counts how often it was closed.
class ChangingSource : public ToolSource {
 public:
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken&) override { return now; }
  void Close() override { ++closed; }
  std::vector<std::shared_ptr<Tool>> now;
  int closed = 0;
};

std::vector<std::string> Names(const ToolSet& set) {
  std::vector<std::string> names;
  for (const auto& t : set.List()) names.push_back(t->name());
  return names;
}

TEST(ToolSetTest, AddReplacesByNameAndRemoveTakesOne) {
  std::mutex mu;
  ToolSet set(mu, {Named("read"), Named("bash")});
  set.Add(Named("read", "mine"));
  set.Add(Named("host"));
  EXPECT_EQ(Names(set), (std::vector<std::string>{"read", "bash", "host"}));
  EXPECT_EQ(set.Find("read")->description(), "mine");
  EXPECT_TRUE(set.Remove("bash"));
  EXPECT_FALSE(set.Remove("bash"));
  EXPECT_EQ(set.Find("bash"), nullptr);
}

TEST(ToolSetTest, SourcesReplaceTheirToolsOnRefreshAndCloseOnce) {
  std::mutex mu;
  ToolSet set(mu, {Named("read")});
  auto source = std::make_shared<ChangingSource>();
  source->now = {Named("mcp_a"), Named("read", "from the server")};
  set.AddSource(source);
  EXPECT_EQ(Names(set), (std::vector<std::string>{"read", "mcp_a"}));
  EXPECT_EQ(set.Find("read")->description(), "from the server");
  source->now = {Named("mcp_b")};
  set.Refresh(CancelToken());
  EXPECT_EQ(Names(set), (std::vector<std::string>{"mcp_b"}))
      << "every tool named by the source goes, the new set joins";
  set.CloseSources();
  set.CloseSources();
  EXPECT_EQ(source->closed, 1);
}

struct Stream {
  std::mutex mu;
  Recorder recorder{mu, nullptr};
  NoticeBoard notices{mu, recorder};
  Emitter emitter{nullptr, notices, recorder};
  RuleWatch rules{emitter, recorder};
  StreamControl control{mu, rules};
};

TEST(StreamControlTest, InterruptStopsOnlyAStreamInFlight) {
  Stream s;
  StreamInterrupt steer;
  steer.cause = CancelCause::kSteering;
  steer.reason = "steered";
  s.control.Interrupt(steer);  // nothing in flight: nothing to keep
  StreamControl::Flight f = s.control.Begin();
  EXPECT_FALSE(f.stream->cancelled());
  s.control.Interrupt(steer);
  EXPECT_TRUE(f.stream->cancelled());
  EXPECT_EQ(f.stream->cause(), CancelCause::kSteering);
  std::optional<StreamInterrupt> got = s.control.End();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->reason, "steered");
  EXPECT_FALSE(s.control.End().has_value()) << "taken once";
  EXPECT_EQ(s.control.rules(), nullptr) << "no rules registered";
}

TEST(StreamControlTest, RetriesFollowTheSwitchAndCanBeAborted) {
  Stream s;
  EXPECT_TRUE(s.control.auto_retry());
  s.control.SetAutoRetry(false);
  StreamControl::Flight f = s.control.Begin();
  EXPECT_FALSE(f.retry);
  s.control.AbortRetry();
  EXPECT_TRUE(f.retry_abort->cancelled());
  (void)s.control.End();
  s.control.AbortRetry();  // nothing in flight: harmless
}

}  // namespace
}  // namespace lousho::agent

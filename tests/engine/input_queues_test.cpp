// Tests of the input queues (steering, follow-ups, their modes, context for the next prompt) and
// of the turn gate they consult.
#include "agent/input_queues.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <vector>

#include "agent/recorder.h"
#include "agent/turn_gate.h"

namespace lousho::agent {
namespace {

std::vector<ContentBlock> Text(const std::string& text) { return {ContentBlock::Text(text)}; }

std::string FirstText(const std::vector<ContentBlock>& content) {
  return content.empty() ? "" : content[0].text;
}

// The first taken message's text; empty when none was taken.
std::string FirstTaken(const std::vector<std::vector<ContentBlock>>& taken) {
  return taken.empty() ? "" : FirstText(taken[0]);
}

// A queue with its recorder and gate; posted tasks wait in `posted` until the test runs them
// (the worker).
struct Queues {
  std::mutex mu;
  Recorder recorder{mu, nullptr};
  TurnGate gate{mu};
  InputQueues queues{mu, recorder, gate, "s"};
  std::vector<std::function<void()>> posted;
  Queues() {
    queues.Attach([this](std::function<void()> task) {
      posted.push_back(std::move(task));
      return Status::Ok();
    });
  }
  size_t HistorySize() {
    size_t n = 0;
    recorder.Read([&](const History& h) { n = h.messages().size(); });
    return n;
  }
  void RunPosted() {
    auto tasks = std::move(posted);
    posted.clear();
    for (auto& t : tasks) t();
  }
};

TEST(InputQueuesTest, OnlyAnOpenPromptTakesMessages) {
  Queues q;
  EXPECT_FALSE(q.queues.Enqueue(QueueKind::kSteering, Text("early")));
  q.queues.Open();
  EXPECT_TRUE(q.queues.Enqueue(QueueKind::kSteering, Text("s1")));
  EXPECT_TRUE(q.queues.Enqueue(QueueKind::kFollowUp, Text("f1")));
  EXPECT_EQ(q.queues.Count(), 2u);
  q.queues.Stop();
  EXPECT_FALSE(q.queues.Enqueue(QueueKind::kSteering, Text("late")));
  auto cleared = q.queues.Clear();
  ASSERT_EQ(cleared.size(), 2u);
  EXPECT_EQ(FirstText(cleared[0]), "s1") << "steering first";
  EXPECT_EQ(FirstText(cleared[1]), "f1");
  EXPECT_EQ(q.queues.Count(), 0u);
}

TEST(InputQueuesTest, SteeringBeforeFollowUpsWhichWaitForTheEnd) {
  Queues q;
  q.queues.Open();
  ASSERT_TRUE(q.queues.Enqueue(QueueKind::kFollowUp, Text("f1")));
  ASSERT_TRUE(q.queues.Enqueue(QueueKind::kSteering, Text("s1")));
  ASSERT_TRUE(q.queues.Enqueue(QueueKind::kSteering, Text("s2")));
  auto taken = q.queues.Take(/*ending=*/true);
  ASSERT_EQ(taken.size(), 1u) << "one at a time by default";
  EXPECT_EQ(FirstText(taken[0]), "s1");
  EXPECT_EQ(FirstTaken(q.queues.Take(false)), "s2");
  EXPECT_TRUE(q.queues.Take(false).empty()) << "follow-ups only when the prompt would end";
  EXPECT_FALSE(q.queues.StopIfEmpty()) << "a follow-up waits";
  EXPECT_EQ(FirstTaken(q.queues.Take(true)), "f1");
  EXPECT_TRUE(q.queues.StopIfEmpty());
  EXPECT_FALSE(q.queues.Enqueue(QueueKind::kFollowUp, Text("after")));
}

TEST(InputQueuesTest, AllModeTakesEveryMessage) {
  Queues q;
  q.queues.SetSettings({QueueMode::kAll, QueueMode::kAll, InterruptMode::kWait});
  q.queues.Open();
  for (const char* t : {"a", "b", "c"})
    ASSERT_TRUE(q.queues.Enqueue(QueueKind::kSteering, Text(t)));
  EXPECT_EQ(q.queues.Take(false).size(), 3u);
}

TEST(InputQueuesTest, SteeringIsPendingOnlyInImmediateMode) {
  Queues q;
  q.queues.Open();
  ASSERT_TRUE(q.queues.Enqueue(QueueKind::kSteering, Text("now")));
  EXPECT_FALSE(q.queues.SteeringPending());
  q.queues.SetSettings({QueueMode::kOneAtATime, QueueMode::kOneAtATime, InterruptMode::kImmediate});
  EXPECT_TRUE(q.queues.SteeringPending());
  EXPECT_EQ(q.queues.settings().interrupt, InterruptMode::kImmediate);
}

TEST(InputQueuesTest, ContextJoinsTheHistoryAtOnceWhenIdle) {
  Queues q;
  Message m = Message::Custom("shell", "ls output", true);
  q.queues.AddContext(m);
  EXPECT_EQ(q.HistorySize(), 1u);
  auto announced = q.queues.TakeContext();
  ASSERT_EQ(announced.size(), 1u);
  EXPECT_GT(announced[0].timestamp_ms, 0);
  EXPECT_TRUE(q.queues.TakeContext().empty()) << "announced once";
}

TEST(InputQueuesTest, ContextWaitsForTheRunningPrompt) {
  Queues q;
  ASSERT_TRUE(q.gate.Begin().ok());
  q.queues.AddContext(Message::Custom("shell", "ls output", true));
  EXPECT_EQ(q.HistorySize(), 0u) << "held back while a prompt runs";
  q.gate.End();
  q.RunPosted();  // the worker, once the prompt ended
  EXPECT_EQ(q.HistorySize(), 1u);
  EXPECT_EQ(q.queues.TakeContext().size(), 1u);
}

TEST(TurnGateTest, OneRunAtATimeAndNoneAfterClose) {
  std::mutex mu;
  TurnGate gate(mu);
  auto first = gate.Begin();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(gate.busy());
  auto second = gate.Begin();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kSessionBusy);
  gate.Cancel(CancelCause::kUser);
  EXPECT_TRUE((*first)->cancelled());
  gate.End();
  EXPECT_FALSE(gate.busy());
  gate.Close();
  auto third = gate.Begin();
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code, ErrorCode::kSessionClosed);
}

}  // namespace
}  // namespace lousho::agent

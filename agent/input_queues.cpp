// Steering and follow-up queues, and context for the next prompt.
#include "agent/input_queues.h"

#include "agent/recorder.h"
#include "agent/turn_gate.h"
#include "support/log.h"

namespace lousho::agent {

const char* QueueModeId(QueueMode mode) {
  switch (mode) {
    case QueueMode::kOneAtATime:
      return "one-at-a-time";
    case QueueMode::kAll:
      return "all";
  }
  return "one-at-a-time";
}

std::optional<QueueMode> ParseQueueModeId(const std::string& id) {
  if (id == "one-at-a-time") return QueueMode::kOneAtATime;
  if (id == "all") return QueueMode::kAll;
  return std::nullopt;
}

const char* InterruptModeId(InterruptMode mode) {
  switch (mode) {
    case InterruptMode::kWait:
      return "wait";
    case InterruptMode::kImmediate:
      return "immediate";
  }
  return "wait";
}

std::optional<InterruptMode> ParseInterruptModeId(const std::string& id) {
  if (id == "wait") return InterruptMode::kWait;
  if (id == "immediate") return InterruptMode::kImmediate;
  return std::nullopt;
}

InputQueues::InputQueues(std::mutex& mu, Recorder& recorder, const TurnGate& gate,
                         std::string session_id)
    : mu_(mu), recorder_(recorder), gate_(gate), session_id_(std::move(session_id)) {}

bool InputQueues::Enqueue(QueueKind kind, std::vector<ContentBlock> content) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!accepting_) return false;  // only a running prompt accepts
  switch (kind) {
    case QueueKind::kSteering:
      steering_.push_back(std::move(content));
      break;
    case QueueKind::kFollowUp:
      follow_up_.push_back(std::move(content));
      break;
  }
  return true;
}

std::vector<std::vector<ContentBlock>> InputQueues::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<ContentBlock>> out = std::move(steering_);
  for (auto& m : follow_up_) out.push_back(std::move(m));
  steering_.clear();
  follow_up_.clear();
  return out;
}

size_t InputQueues::Count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steering_.size() + follow_up_.size();
}

QueueSettings InputQueues::settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_;
}

void InputQueues::SetSettings(QueueSettings settings) {
  std::lock_guard<std::mutex> lock(mu_);
  settings_ = settings;
}

void InputQueues::AddContext(Message message) {
  if (message.timestamp_ms == 0) message.timestamp_ms = NowMs();
  // Nothing runs: it joins the history now, as a branch move does; else once the prompt ends.
  recorder_.AppendMessageIf(message, [&] {
    if (gate_.BusyLocked()) {
      held_.push_back(message);
      return false;
    }
    announce_.push_back(message);
    return true;
  });
  recorder_.Flush();
  // What a running prompt holds back joins once it ends (the worker takes tasks in order);
  // without a worker the next prompt records it first.
  Status st = post_([this] { RecordHeldContext(); });
  if (!st.ok())
    log::Warn("session " + session_id_ +
              ": context kept for the next prompt: " + st.error().message);
}

void InputQueues::RecordHeldContext() {
  std::vector<Message> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_);
  }
  if (held.empty()) return;
  for (Message& m : held) {
    recorder_.AppendMessage(m);
    std::lock_guard<std::mutex> lock(mu_);
    announce_.push_back(std::move(m));
  }
  recorder_.Flush();
}

std::vector<Message> InputQueues::TakeContext() {
  RecordHeldContext();  // what no worker could record before
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Message> out;
  out.swap(announce_);
  return out;
}

void InputQueues::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  accepting_ = true;
}

void InputQueues::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  accepting_ = false;
}

std::vector<std::vector<ContentBlock>> InputQueues::Take(bool ending) {
  std::vector<std::vector<ContentBlock>> taken;
  std::lock_guard<std::mutex> lock(mu_);
  auto take = [&](std::vector<std::vector<ContentBlock>>& q, QueueMode mode) {
    const size_t n = mode == QueueMode::kAll ? q.size() : std::min<size_t>(1, q.size());
    for (size_t i = 0; i < n; ++i) taken.push_back(std::move(q[i]));
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(n));
  };
  take(steering_, settings_.steering);
  if (taken.empty() && ending) take(follow_up_, settings_.follow_up);
  return taken;
}

bool InputQueues::StopIfEmpty() {
  // Checking for messages and closing happen under one lock, so none is left behind.
  std::lock_guard<std::mutex> lock(mu_);
  if (!steering_.empty() || !follow_up_.empty()) return false;
  accepting_ = false;
  return true;
}

bool InputQueues::SteeringPending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_.interrupt == InterruptMode::kImmediate && !steering_.empty();
}

}  // namespace lousho::agent

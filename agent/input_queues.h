// What the user sends while a prompt runs (steering and follow-up messages, under the queue and
// interrupt modes), and context added for the next prompt (AddContext).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/outbox.h"
#include "core/content.h"

namespace lousho::agent {

class Recorder;
class TurnGate;

// Messages the user sends while a prompt runs. Steering messages join at the end of the current
// model request (or between tool calls when the interrupt mode is immediate); follow-up messages
// only when the prompt would otherwise end. Either way the same prompt goes on.
enum class QueueKind { kSteering, kFollowUp };
// How many queued messages are taken at once: one per model request, or all of them.
enum class QueueMode { kOneAtATime, kAll };
// When steering is looked at: once the model request and its tool calls are done (kWait), or
// also between tool calls, skipping the calls that remain (kImmediate).
enum class InterruptMode { kWait, kImmediate };
const char* QueueModeId(QueueMode mode);  // "one-at-a-time" | "all"
std::optional<QueueMode> ParseQueueModeId(const std::string& id);
const char* InterruptModeId(InterruptMode mode);  // "wait" | "immediate"
std::optional<InterruptMode> ParseInterruptModeId(const std::string& id);

struct QueueSettings {
  QueueMode steering = QueueMode::kOneAtATime;
  QueueMode follow_up = QueueMode::kOneAtATime;
  InterruptMode interrupt = InterruptMode::kWait;
};

// Thread-safe (the session's mutex). The door's side: Enqueue .. AddContext; the engine's side
// (worker only): Open .. TakeContext.
class InputQueues {
 public:
  InputQueues(std::mutex& mu, Recorder& recorder, const TurnGate& gate, std::string session_id);
  InputQueues(const InputQueues&) = delete;
  InputQueues& operator=(const InputQueues&) = delete;
  void Attach(Poster post) { post_ = std::move(post); }

  // Queues a message for the running prompt. False (nothing queued) when no prompt runs or it is
  // already ending: the caller starts a prompt instead.
  bool Enqueue(QueueKind kind, std::vector<ContentBlock> content);
  // Removes and returns every queued message, steering first.
  std::vector<std::vector<ContentBlock>> Clear();
  size_t Count() const;
  QueueSettings settings() const;
  void SetSettings(QueueSettings settings);
  // A message for the model that the user's next prompt comes after (the output of a command the
  // user ran outside a turn, for example). It joins the history and the session file at once, or
  // when the running prompt ends (a crash before the next prompt loses nothing); the next prompt
  // announces it (its message events, its agent_end) before the user's message.
  void AddContext(Message message);

  // A prompt starts taking messages / stops (it ends, or runs a command).
  void Open();
  void Stop();
  // The queued messages to take now: steering (by its mode), else follow-ups when `ending`.
  std::vector<std::vector<ContentBlock>> Take(bool ending);
  // Stops taking messages unless some wait: then false (take them first).
  bool StopIfEmpty();
  // Immediate interrupt mode and a steering message waits: skip the remaining tool calls.
  bool SteeringPending() const;
  // Records the context a running prompt held back, and returns (once) every context message
  // recorded since the last prompt, for the next prompt to announce.
  std::vector<Message> TakeContext();

 private:
  void RecordHeldContext();

  std::mutex& mu_;
  Recorder& recorder_;
  const TurnGate& gate_;
  std::string session_id_;
  Poster post_;
  std::vector<std::vector<ContentBlock>> steering_, follow_up_;
  bool accepting_ = false;
  QueueSettings settings_;
  std::vector<Message> held_;      // AddContext's, not yet in the history
  std::vector<Message> announce_;  // in the history, announced by the next prompt
};

}  // namespace lousho::agent

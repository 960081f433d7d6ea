// The model stream in flight: stopping it while the turn goes on (a stream rule, a steering
// message), its automatic retries, and the watchers that see every delta first.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/content.h"
#include "core/provider.h"
#include "support/cancel.h"

namespace lousho::agent {

namespace rules {
struct RuleSet;
}
class RuleWatch;

// Stops the model stream in flight while the turn goes on (a stream rule, a steering message).
struct StreamInterrupt {
  CancelCause cause = CancelCause::kStreamRule;
  bool keep_partial = false;    // keep what was streamed in the history (tool calls never)
  std::vector<Message> inject;  // appended before the model is asked again
  std::string reason;           // the aborted message's error_message (empty: none)
  bool silent = false;          // the injected messages get no message_start/end events
  // A pause before the model is asked again; a cancel in it ends the turn (what was to be
  // injected still joins the history, for the next prompt).
  int delay_ms = 0;
  // Stream rules injected: recorded as a ttsr_injection entry with the injected messages.
  std::vector<std::string> ttsr_rules;
};

// Watches every stream delta before it leaves the engine; returning an interrupt aborts the
// stream (the delta is not emitted). Called on the session's worker.
using StreamWatcher =
    std::function<std::optional<StreamInterrupt>(const StreamDelta& delta, const Message& partial)>;

// Thread-safe (the session's mutex): a door interrupts or aborts a retry while the worker streams.
class StreamControl {
 public:
  StreamControl(std::mutex& mu, const RuleWatch& rules);
  StreamControl(const StreamControl&) = delete;
  StreamControl& operator=(const StreamControl&) = delete;

  // Aborts the model stream in flight, if any, and goes on with the turn. Returns at once.
  void Interrupt(StreamInterrupt interrupt);
  // Automatic retries of transient provider failures (on by default). AbortRetry ends the wait
  // before a retry in progress: the request fails with "Retry cancelled".
  void SetAutoRetry(bool enabled);
  bool auto_retry() const;
  void AbortRetry();
  // The stream rules this session registered (null: none).
  const rules::RuleSet* rules() const;

  // A stream starts (worker): its own cancellation (so that it can stop while the turn goes
  // on), the abort of its retry wait, and whether it retries.
  struct Flight {
    std::shared_ptr<CancelSource> stream;
    std::shared_ptr<CancelSource> retry_abort;
    bool retry = true;
  };
  Flight Begin();
  // The stream ended: why Interrupt stopped it, if it did.
  std::optional<StreamInterrupt> End();

 private:
  std::mutex& mu_;
  const RuleWatch& rules_;
  std::shared_ptr<CancelSource> stream_;      // the model stream in flight
  std::optional<StreamInterrupt> interrupt_;  // why stream_ fired, when not the user
  bool auto_retry_ = true;
  std::shared_ptr<CancelSource> retry_abort_;  // the stream in flight's retry wait
};

}  // namespace lousho::agent

// How events leave the engine: in order, on the session's worker. Changes made off the worker (a
// mode switch during a turn) wait on the notice board and go out before the worker's next event.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/history.h"
#include "core/events.h"
#include "support/status.h"

namespace lousho::agent {

class Recorder;

// Runs a task on the session's worker (then flushes notices and saving reports).
using Poster = std::function<Status(std::function<void()>)>;

// Changes made under the session's lock whose events (and entries) the worker sends (and
// records) in order.
class NoticeBoard {
 public:
  // Makes the change under the lock: returns its event (none: it only records entries) and adds
  // the entries to record.
  using Change = std::function<std::optional<Event>(std::vector<Entry>*)>;
  static constexpr size_t kMaxPending = 256;

  NoticeBoard(std::mutex& mu, Recorder& recorder);
  // How to reach the worker (whether this thread is it, how to post to it) and the events' sink.
  void Attach(std::function<bool()> on_worker, Poster post, EventSink sink);

  // Makes the change at once and queues its event; `done` runs on the worker after it. Fails
  // (changing nothing) when kMaxPending changes already wait for a busy worker.
  Status Push(std::function<void()> done, const Change& change);
  // Sends the waiting events and runs their `done`s (worker only; cheap when none wait).
  void Flush();

 private:
  std::mutex& mu_;
  Recorder& recorder_;
  std::function<bool()> on_worker_;
  Poster post_;
  EventSink sink_;
  std::vector<std::pair<std::optional<Event>, std::function<void()>>> notices_;  // under mu_
  // Set with notices_ under mu_; read without it, so the worker takes no lock per stream delta.
  std::atomic<bool> pending_{false};
};

// The one way events leave the session: the notices that wait and the file's saving reports
// first, then the event. Worker only.
class Emitter {
 public:
  Emitter(EventSink sink, NoticeBoard& notices, Recorder& recorder);

  void Emit(const Event& e);
  // What waits (notices, saving reports), without an event of its own.
  void Flush();
  // A whole message: its start and end.
  void ShowMessage(int turn, const Message& m);
  // An assistant message shown to the user but kept out of the history (a command's answer).
  void Note(int turn, const std::string& text);

 private:
  EventSink sink_;
  NoticeBoard& notices_;
  Recorder& recorder_;
};

}  // namespace lousho::agent

// The notice board and the emitter: events in order on the session's worker.
#include "agent/outbox.h"

#include "agent/recorder.h"

namespace lousho::agent {

NoticeBoard::NoticeBoard(std::mutex& mu, Recorder& recorder) : mu_(mu), recorder_(recorder) {}

void NoticeBoard::Attach(std::function<bool()> on_worker, Poster post, EventSink sink) {
  on_worker_ = std::move(on_worker);
  post_ = std::move(post);
  sink_ = std::move(sink);
}

Status NoticeBoard::Push(std::function<void()> done, const Change& change) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (notices_.size() >= kMaxPending)
      return MakeError(ErrorCode::kSessionBusy,
                       "too many changes are waiting for the session's running turn");
    std::vector<Entry> entries;
    std::optional<Event> e = change(&entries);
    if (!entries.empty()) {
      // The entries join the history on the worker, which alone writes it during a turn.
      done = [this, entries = std::move(entries), done = std::move(done)]() mutable {
        for (Entry& entry : entries) recorder_.Append(std::move(entry));
        if (done) done();
      };
    }
    notices_.emplace_back(std::move(e), std::move(done));
    pending_.store(true, std::memory_order_release);
  }
  // From the worker (the switch_mode tool, a command) the notice goes out with the next event;
  // from elsewhere a task flushes it, after the running turn's current step if one is running.
  if (on_worker_ && !on_worker_()) {
    Status st = post_([] {});
    if (!st.ok()) Flush();  // no thread to be had: better out of place than lost
  }
  return Status::Ok();
}

void NoticeBoard::Flush() {
  if (!pending_.load(std::memory_order_acquire)) return;
  std::vector<std::pair<std::optional<Event>, std::function<void()>>> notices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notices.swap(notices_);
    pending_.store(false, std::memory_order_relaxed);
  }
  for (auto& [e, done] : notices) {
    if (e && sink_) sink_(*e);
    if (done) done();
  }
}

Emitter::Emitter(EventSink sink, NoticeBoard& notices, Recorder& recorder)
    : sink_(std::move(sink)), notices_(notices), recorder_(recorder) {}

void Emitter::Flush() {
  notices_.Flush();
  recorder_.TellSaving(sink_);
}

void Emitter::Emit(const Event& e) {
  Flush();
  if (sink_) sink_(e);
}

void Emitter::ShowMessage(int turn, const Message& m) {
  Emit(event::MessageStart{turn, &m});
  Emit(event::MessageEnd{turn, &m});
}

void Emitter::Note(int turn, const std::string& text) {
  Message note;
  note.role = Role::kAssistant;
  note.timestamp_ms = NowMs();
  Emit(event::MessageStart{turn, &note});
  note.content.push_back(ContentBlock::Text(text));
  StreamDelta d;
  d.kind = DeltaKind::kText;
  d.text = text;
  // Never recorded, but its chunks share an id no entry has (the ACP messageId).
  const std::string id = recorder_.NewMessageId();
  Emit(event::MessageUpdate{turn, &d, &note, id});
  Emit(event::MessageEnd{turn, &note});
}

}  // namespace lousho::agent

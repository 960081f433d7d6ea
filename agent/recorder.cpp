// The recorder: appends under the session's lock through the History, which writes each entry
// to the session file as it stores it.
#include "agent/recorder.h"

#include "agent/turn.h"

namespace lousho::agent {

Recorder::Recorder(std::mutex& mu, std::shared_ptr<HistoryRecorder> file)
    : mu_(mu), history_(file), file_(std::move(file)) {}

void Recorder::OnAppend(EntryHook hook) { on_append_.push_back(std::move(hook)); }

void Recorder::OnBranch(BranchHook hook) { on_branch_.push_back(std::move(hook)); }

Status Recorder::Seed(std::vector<Entry> entries, const std::string& leaf,
                      std::vector<std::string>* repaired) {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.Seed(std::move(entries), leaf, repaired);
}

const Entry& Recorder::AppendLocked(Entry entry) {
  const Entry& stored = history_.Append(std::move(entry));
  for (const auto& hook : on_append_) hook(stored);
  return stored;
}

std::string Recorder::Append(Entry entry) {
  std::lock_guard<std::mutex> lock(mu_);
  return AppendLocked(std::move(entry)).id;
}

Entry Recorder::MessageEntry(Message message) {
  if (message.timestamp_ms == 0) message.timestamp_ms = NowMs();
  Entry e;
  e.kind = EntryKind::kMessage;
  e.timestamp_ms = message.timestamp_ms;
  e.message = std::move(message);
  return e;
}

void Recorder::AppendMessage(Message message, std::string id) {
  Entry e = MessageEntry(std::move(message));
  e.id = std::move(id);
  Append(std::move(e));
}

std::string Recorder::NewMessageId() {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.NewId();
}

bool Recorder::AppendMessageIf(Message message, const std::function<bool()>& now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!now()) return false;
  AppendLocked(MessageEntry(std::move(message)));
  return true;
}

Status Recorder::BranchTo(const BranchTarget& target) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::string> entry_id = target(history_);
  if (!entry_id.ok()) return entry_id.error();
  auto moved = history_.BranchTo(*entry_id);  // records the branch summary it appends
  if (!moved.ok()) return moved.error();
  if (*moved != nullptr)
    for (const auto& hook : on_append_) hook(**moved);
  const std::vector<const Entry*> branch = history_.Branch();
  for (const auto& hook : on_branch_) hook(branch);
  return Status::Ok();
}

void Recorder::Restore() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::vector<const Entry*> branch = history_.Branch();
  for (const auto& hook : on_branch_) hook(branch);
}

void Recorder::Read(const std::function<void(const History&)>& fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  fn(history_);
}

void Recorder::Flush() {
  if (file_) file_->Flush();
}

void Recorder::Close() {
  if (file_) file_->Close();
}

void Recorder::TellSaving(const EventSink& sink) {
  if (!file_ || !file_->HasReports()) return;
  for (SaveReport& r : file_->TakeReports()) {
    if (sink)
      sink(event::Warning{"session-file", std::move(r.message), std::move(r.title), r.resumed});
  }
}

const Message& RecordTurnMessage(Recorder& recorder, Turn& turn, Message message, std::string id) {
  if (message.timestamp_ms == 0) message.timestamp_ms = NowMs();
  turn.added.push_back(message);
  recorder.AppendMessage(std::move(message), std::move(id));
  return turn.added.back();
}

}  // namespace lousho::agent

// Naming and branching a session.
#include "agent/branching.h"

#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/turn_gate.h"

namespace lousho::agent {

std::string PromptGist(const std::string& text) {
  std::string line;
  bool space = false;
  for (char c : text) {
    if (c == '\n' && !line.empty()) break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  // Count characters, not bytes, and never cut a UTF-8 sequence.
  size_t chars = 0, cut = std::string::npos;
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (chars == kMaxGistChars) {
      cut = i;
      break;
    }
    ++chars;
  }
  if (cut == std::string::npos) return line;
  size_t at = line.rfind(' ', cut);
  if (at == std::string::npos || at < cut / 2) at = cut;
  return line.substr(0, at) + "\u2026";
}

Branching::Branching(std::mutex& mu, Recorder& recorder, NoticeBoard& notices, const TurnGate& gate,
                     Rewinder* rewinder)
    : mu_(mu), recorder_(recorder), notices_(notices), gate_(gate), rewinder_(rewinder) {}

std::string Branching::Name() const {
  std::lock_guard<std::mutex> lock(mu_);
  return name_;
}

Status Branching::SetName(const std::string& name) {
  if (name.find_first_not_of(" \t\r\n") == std::string::npos)
    return MakeError(ErrorCode::kInvalidParams, "Session name cannot be empty");
  return notices_.Push(nullptr, [&](std::vector<Entry>* entries) -> Event {
    name_ = name;  // at once, like a mode; the entry joins the history on the worker
    Entry entry;
    entry.kind = EntryKind::kSessionInfo;
    entry.more.Edit().name = name;
    entries->push_back(std::move(entry));
    return event::SessionInfoChanged{name};
  });
}

namespace {
Error RunningError() {
  return MakeError(ErrorCode::kSessionBusy, "a prompt is running in this session");
}
}  // namespace

Status Branching::SetLeaf(const std::string& entry_id) {
  return recorder_.BranchTo([&](const History&) -> Result<std::string> {
    if (gate_.BusyLocked()) return RunningError();
    return entry_id;
  });
}

Result<std::string> Branching::BranchFrom(const std::string& entry_id) {
  std::string text;
  Status st = recorder_.BranchTo([&](const History& history) -> Result<std::string> {
    if (gate_.BusyLocked()) return RunningError();
    const Entry* e = history.Find(entry_id);
    if (!e || e->kind != EntryKind::kMessage || e->message.role != Role::kUser ||
        e->message.is_custom())
      return MakeError(ErrorCode::kHistoryInvalid, "no user message with id '" + entry_id + "'");
    text = e->message.TextContent();
    return e->parent_id;
  });
  if (!st.ok()) return st.error();
  return text;
}

std::vector<BranchPoint> Branching::UserMessages() const {
  std::vector<BranchPoint> out;
  recorder_.Read([&](const History& history) {
    for (const Entry* e : history.Branch())
      if (e->kind == EntryKind::kMessage && e->message.role == Role::kUser &&
          !e->message.is_custom())
        out.push_back({e->id, e->message.TextContent()});
  });
  return out;
}

Result<RewindOutcome> Branching::Rewind(const RewindRequest& request) {
  if (!rewinder_) return MakeError(ErrorCode::kHistoryInvalid, "this session cannot rewind");
  return rewinder_->Rewind(request);
}

void Branching::NoteLocked(const Entry& entry) {
  if (entry.kind == EntryKind::kSessionInfo) name_ = entry.more->name;
}

void Branching::RestoreLocked(const std::vector<const Entry*>& branch) {
  for (const Entry* e : branch)
    if (e->kind == EntryKind::kSessionInfo) name_ = e->more->name;
}

}  // namespace lousho::agent

// The history tree, its branch view and timestamps.
#include "agent/history.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>

#include "agent/compaction.h"  // EstimateTokens
#include "support/json_util.h"

namespace lousho::agent {

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IsoTimestamp(long long ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

long long ParseIsoTimestamp(const std::string& s) {
  // The form IsoTimestamp writes, read without sscanf (a session file holds one per entry).
  auto digits = [&](size_t at, size_t n, int* out) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  if (s.size() == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
      s[16] == ':' && s[19] == '.' && s[23] == 'Z') {
    std::tm tm{};
    int ms = 0;
    if (digits(0, 4, &tm.tm_year) && digits(5, 2, &tm.tm_mon) && digits(8, 2, &tm.tm_mday) &&
        digits(11, 2, &tm.tm_hour) && digits(14, 2, &tm.tm_min) && digits(17, 2, &tm.tm_sec) &&
        digits(20, 3, &ms)) {
      tm.tm_year -= 1900;
      tm.tm_mon -= 1;
      return static_cast<long long>(timegm(&tm)) * 1000 + ms;
    }
  }
  std::tm tm{};
  int ms = 0;
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms);
  if (n < 6) return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<long long>(timegm(&tm)) * 1000 + ms;
}

// --- the tree ---

History::History() : table_(MessageTable::Make(0)), rng_(std::random_device{}()) {}

History::History(std::shared_ptr<HistoryRecorder> recorder) : History() {
  recorder_ = std::move(recorder);
}

std::string History::NewId() {
  for (;;) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rng_() & 0xffffffffu));
    if (index_.Find(buf, IdOf()) == IdIndex::kNone) return buf;
  }
}

const Entry& History::Store(Entry entry) {
  const size_t at = seeded_.size() + appended_.size();
  appended_.push_back(std::move(entry));  // a deque: nothing stored before it moves
  const Entry& stored = appended_.back();
  index_.Insert(stored.id, at, IdOf());
  return stored;
}

const Entry& History::Append(Entry entry) {
  if (entry.id.empty() || index_.Find(entry.id, IdOf()) != IdIndex::kNone) entry.id = NewId();
  if (entry.timestamp_ms == 0) entry.timestamp_ms = NowMs();
  entry.parent_id = leaf_;
  const Entry& stored = Store(std::move(entry));
  leaf_ = stored.id;
  if (stored.kind == EntryKind::kMessage) {
    PushMessage(&stored.message, &stored);
  } else if (stored.kind == EntryKind::kBranchSummary && !stored.more->summary.empty()) {
    PushMessage(SummaryOf(stored), &stored);
  } else if (stored.kind == EntryKind::kCompaction) {
    RebuildBranch();  // the context now starts with the summary
  }
  if (recorder_) recorder_->Record(stored);
  return stored;
}

const Entry* History::Find(const std::string& id) const {
  const size_t i = index_.Find(id, IdOf());
  return i == IdIndex::kNone ? nullptr : &At(i);
}

const std::string& History::message_id(size_t i) const {
  static const std::string kNoId;
  const Entry* e = branch_entries_[i];
  return e ? e->id : kNoId;
}

long long History::ContextTokens() const {
  if (reported_ == kNone) return token_prefix_[count_];
  return table_->at(reported_).usage().total() + token_prefix_[count_] -
         token_prefix_[reported_ + 1];
}

Status History::SetLeaf(const std::string& id) {
  if (!id.empty() && Find(id) == nullptr)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + id + "'");
  leaf_ = id;
  RebuildBranch();
  return Status::Ok();
}

Result<const Entry*> History::BranchTo(const std::string& id, const std::string& summary) {
  if (!id.empty() && Find(id) == nullptr)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + id + "'");
  const Entry* leaf = Find(leaf_);
  // Already there: at `id` itself, or at an empty branch summary that marks a move to it.
  const bool there = leaf_ == id || (leaf && leaf->kind == EntryKind::kBranchSummary &&
                                     leaf->more->summary.empty() && leaf->parent_id == id);
  if (there && summary.empty()) return static_cast<const Entry*>(nullptr);
  Entry e;
  e.kind = EntryKind::kBranchSummary;
  e.more.Edit().from_id = id;
  e.more.Edit().summary = summary;
  e.more.Edit().data = Json::Value(Json::objectValue);
  e.more.Edit().data["abandonedLeafId"] = leaf_.empty() ? Json::Value() : Json::Value(leaf_);
  leaf_ = id;
  RebuildBranch();
  return &Append(std::move(e));  // adds the summary's message, if it has one
}

Status History::Seed(std::vector<Entry> entries, const std::string& leaf,
                     std::vector<std::string>* repaired) {
  // Positions in `entries`, whose buffer becomes seeded_ (a move keeps it).
  auto id_of = [&entries](size_t i) -> std::string_view { return entries[i].id; };
  IdIndex index;
  index.Reserve(entries.size(), id_of);  // one allocation, no rehash while a long file is indexed
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    if (e.id.empty())
      return MakeError(ErrorCode::kHistoryInvalid, "entry " + std::to_string(i) + " has no id");
    if (!e.parent_id.empty() && index.Find(e.parent_id, id_of) == IdIndex::kNone) {
      // Older files lost the entries appended without being recorded (a stream rule's injection,
      // a compaction) while the next entry named them: hang it off the entry written before it.
      // The first entry has none before it and becomes a root.
      std::string before = i == 0 ? std::string() : entries[i - 1].id;
      if (repaired)
        repaired->push_back("entry '" + e.id + "' named a parent '" + e.parent_id +
                            "' that is not before it in the file; it now follows " +
                            (before.empty() ? std::string("nothing (a root)")
                                            : "'" + before + "', the entry before it"));
      e.parent_id = std::move(before);
    }
    if (!index.Insert(e.id, i, id_of))
      return MakeError(ErrorCode::kHistoryInvalid, "duplicate entry id '" + e.id + "'");
  }
  if (!leaf.empty() && index.Find(leaf, id_of) == IdIndex::kNone)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + leaf + "'");
  leaf_ = leaf.empty() ? (entries.empty() ? std::string() : entries.back().id) : leaf;
  summaries_.clear();
  appended_.clear();
  index_ = std::move(index);
  seeded_ = std::move(entries);
  RebuildBranch();
  return Status::Ok();
}

std::vector<const Entry*> History::Branch() const {
  std::vector<const Entry*> out;
  const size_t total = seeded_.size() + appended_.size();
  for (const Entry* e = Find(leaf_); e != nullptr; e = Find(e->parent_id)) {
    out.push_back(e);
    if (out.size() > total) break;  // a cycle cannot be built, but never loop
  }
  return {out.rbegin(), out.rend()};
}

const Message* History::SummaryOf(const Entry& e) {
  auto it = summaries_.find(&e);
  if (it == summaries_.end())
    it = summaries_
             .emplace(&e, e.kind == EntryKind::kCompaction ? CompactionSummaryMessage(e)
                                                           : BranchSummaryMessage(e))
             .first;
  return &it->second;  // a node's value never moves
}

void History::ClearView(size_t capacity) {
  // A fresh table: snapshots taken before keep the old one.
  table_ = MessageTable::Make(capacity);
  count_ = 0;
  branch_entries_.clear();
  branch_entries_.reserve(capacity);
  token_prefix_.assign(1, 0);
  token_prefix_.reserve(capacity + 1);
  reported_ = kNone;
  context_start_ = 0;
}

void History::PushMessage(const Message* m, const Entry* from) {
  if (count_ == table_->capacity()) table_ = table_->Grown();
  table_->Set(count_, m);  // past every snapshot's end: no reader sees the slot change
  branch_entries_.push_back(from);
  token_prefix_.push_back(token_prefix_.back() + EstimateTokens(*m));
  if (count_ >= context_start_ && m->role == Role::kAssistant &&
      m->stop_reason != StopReason::kError && m->usage().total() > 0)
    reported_ = count_;
  ++count_;
}

void History::RebuildBranch() {
  const std::vector<const Entry*> branch = Branch();
  ClearView(branch.size() + 1);
  // The last compaction on the branch decides where the context starts.
  size_t compaction = branch.size();
  for (size_t i = branch.size(); i-- > 0;) {
    if (branch[i]->kind == EntryKind::kCompaction) {
      compaction = i;
      break;
    }
  }
  size_t from = 0;
  if (compaction < branch.size()) {
    PushMessage(SummaryOf(*branch[compaction]), nullptr);
    from = compaction;  // nothing kept unless its first kept entry is found before it
    for (size_t i = 0; i < compaction; ++i) {
      if (branch[i]->id == branch[compaction]->more->first_kept_id) {
        from = i;
        break;
      }
    }
  }
  for (size_t i = from; i < branch.size(); ++i) {
    if (i == compaction) {
      context_start_ = count_;
      reported_ = kNone;  // usage from before the compaction describes another context
    }
    const Entry& e = *branch[i];
    if (e.kind == EntryKind::kMessage) {
      PushMessage(&e.message, &e);
    } else if (e.kind == EntryKind::kBranchSummary && !e.more->summary.empty()) {
      // An empty one only marks where the leaf moved: the model never sees it.
      PushMessage(SummaryOf(e), &e);
    }
  }
}

Message CompactionSummaryMessage(const Entry& compaction) {
  Message m = Message::Custom(
      kCompactionSummaryType,
      "The earlier part of this conversation was compacted to save context. Its summary:\n\n"
      "<summary>\n" +
          compaction.more->summary + "\n</summary>",
      false);
  m.timestamp_ms = compaction.timestamp_ms;
  return m;
}

Message BranchSummaryMessage(const Entry& branch_summary) {
  Message m = Message::Custom(kBranchSummaryType,
                              "The conversation went down another path before coming back to "
                              "this point. What happened on that path:\n\n<summary>\n" +
                                  branch_summary.more->summary + "\n</summary>",
                              false);
  m.timestamp_ms = branch_summary.timestamp_ms;
  return m;
}

}  // namespace lousho::agent

// The session's history: a tree of timestamped entries (id / parent id) whose leaf is the current
// branch, with a protocol-free codec to and from JSON (the session file's entry lines).
#pragma once

#include <json/json.h>

#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/history_index.h"
#include "core/content.h"
#include "core/message_view.h"
#include "support/boxed.h"
#include "support/status.h"

namespace lousho::agent {

enum class EntryKind {
  kMessage,         // a message of the conversation (user, assistant, tool result, custom)
  kModelChange,     // provider / model id
  kThinkingChange,  // thinking level
  kModeChange,      // permission mode
  kCustom,          // data of a feature, never sent to the model
  kLabel,           // a label on another entry
  kCompaction,      // a summary that replaces the history before first_kept_id
  kBranchSummary,   // a summary of an abandoned branch
  kSessionInfo,     // the session's name
  kTtsrInjection,   // stream rules injected on this branch
};

const char* EntryKindName(EntryKind kind);
std::optional<EntryKind> ParseEntryKindName(std::string_view name);  // nullopt: not a kind

// One entry. Which fields are used depends on `kind`. Plain value type.
// What only some kinds of entry hold: in an Entry it is one pointer until set, so that the
// messages, most of a history, do not carry every kind's fields (docs/performance.md).
struct EntryDetail {
  std::string provider, model_id;  // kModelChange
  std::string thinking_level;      // kThinkingChange
  std::string mode;                // kModeChange
  std::string custom_type;         // kCustom
  Json::Value data;                // kCustom, kCompaction / kBranchSummary details
  std::string target_id, label;    // kLabel
  std::string summary;             // kCompaction, kBranchSummary
  std::string first_kept_id;       // kCompaction
  long long tokens_before = 0;     // kCompaction
  std::string from_id;             // kBranchSummary
  std::string name;                // kSessionInfo
  std::vector<std::string> rules;  // kTtsrInjection
};

struct Entry {
  EntryKind kind = EntryKind::kMessage;
  std::string id;
  std::string parent_id;  // empty: a root
  long long timestamp_ms = 0;
  Message message;          // kMessage
  Boxed<EntryDetail> more;  // every other kind's fields
};

// A change in saving a session that the user is told of: saving failed (the entries wait in
// memory and every later entry retries), or saving works again after a failure (what was missed
// is written). Each is told once per outage. Plain value type.
struct SaveReport {
  bool resumed = false;  // false: saving failed; true: saving works again
  std::string path;      // the session file
  std::string title;     // a short line that stands alone
  std::string message;   // what happened and what to do, in full
};

// Receives every entry appended to a History, in order, as it is appended: a session's file. Record
// may be called from any thread (always under the session's lock, so never twice at once); Flush
// at every turn end and Close once, when the session closes. Implementations must be thread-safe
// and quick.
class HistoryRecorder {
 public:
  virtual ~HistoryRecorder() = default;
  virtual void Record(const Entry& entry) = 0;
  // Makes what was recorded durable (fsync).
  virtual void Flush() = 0;
  // Flushes and lets go of the file (its lock); later records are dropped.
  virtual void Close() = 0;
  // Whether reports of saving wait (cheap: a session asks before every event it emits).
  virtual bool HasReports() const { return false; }
  // The reports not yet taken, in order (the session tells the user).
  virtual std::vector<SaveReport> TakeReports() { return {}; }
};

// The entries of a History in the order they were added: a view, valid while the History lives
// (appends leave it valid but do not show in it; a Seed ends it). Iterating it is a walk of a
// vector and a deque.
class EntryList {
 public:
  using iterator = IndexIterator<EntryList, Entry>;
  using const_iterator = iterator;
  using value_type = Entry;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Entry& operator[](size_t i) const {
    return i < seeded_->size() ? (*seeded_)[i] : (*appended_)[i - seeded_->size()];
  }
  const Entry& back() const { return (*this)[size_ - 1]; }
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size_}; }
  // A copy of the entries (a Seed of another History, a caller that keeps them).
  std::vector<Entry> ToVector() const { return std::vector<Entry>(begin(), end()); }

 private:
  friend class History;
  EntryList(const std::vector<Entry>* seeded, const std::deque<Entry>* appended)
      : seeded_(seeded), appended_(appended), size_(seeded->size() + appended->size()) {}
  const std::vector<Entry>* seeded_;
  const std::deque<Entry>* appended_;
  size_t size_;
};

// The tree. Not thread-safe (the session guards it). Appends hang off the leaf; moving the leaf
// branches; nothing is ever rewritten. Entries never move once stored (the seeded ones stay in
// the vector Seed was given, appended ones go to a deque), so the current branch's messages are
// kept as pointers to them, in a table that grows with appends: a model request reads a snapshot
// of it (messages()) without walking or copying the tree, and there is one copy of each message.
//
// The branch view is the model's context: after a compaction entry on the branch it holds the
// compaction's summary (a hidden custom message), then the messages from the entry named by
// first_kept_id up to the compaction, then the messages after it. Everything before
// first_kept_id stays in the tree (and the session file) but is no longer sent. A branch summary
// with a summary is sent as a hidden message where it stands; an empty one (it only records that
// the leaf moved there) is not.
//
// Running figures kept with the view, so that nothing a request needs grows with the history:
// the token estimate of every message in the view (prefix sums), and the last assistant message
// after the last compaction with a usage report. ContextTokens() is therefore what
// ContextTokens(messages(), context_start()) in agent/compaction.h counts, at constant cost.
//
// Append is the only way an entry enters the tree after Seed, and it hands every entry it stores
// to the recorder (when one is attached): nothing reaches the history without reaching the file.
class History {
 public:
  History();
  // Records every later append (Append, BranchTo) through `recorder`; null: none.
  explicit History(std::shared_ptr<HistoryRecorder> recorder);
  // The branch view points into the History's own entries.
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Appends at the leaf, moves the leaf to it and records it. Assigns a fresh random id (8 hex
  // digits) and the timestamp when they are empty / 0. Returns the stored entry (its address
  // never changes).
  const Entry& Append(Entry entry);
  // Moves the leaf to `id` (empty: before the first entry), in memory only: a file holding the
  // tree would still end at the old leaf. Fails on an unknown id. Session::SetLeaf is the lasting
  // form (BranchTo).
  Status SetLeaf(const std::string& id);
  // Branches at `id` (empty: before the first entry) so that it lasts: moves the leaf there and
  // appends a branch_summary entry hanging off it (fromId: `id`, the branch point; `summary`,
  // possibly empty; details.abandonedLeafId: the leaf it left), which becomes the leaf. The file's
  // last entry is then on the new branch, so a reload finds the leaf where it was moved. Returns
  // the appended entry; null when the leaf is already there (nothing appended). Fails on an
  // unknown id.
  Result<const Entry*> BranchTo(const std::string& id, const std::string& summary = {});
  // Replaces the tree with stored entries (unique ids, parents before children) and sets the leaf
  // (empty: the last entry). The vector is kept as it is (no entry is copied or moved). Nothing
  // is recorded: they are what the file already holds. An entry whose parent is not among the
  // entries before it (a file written by a lousho that appended entries without recording them)
  // hangs off the entry before it instead (the first becomes a root), and a warning naming both
  // ids is added to *repaired when it is given; an entry without an id, a duplicate id or an
  // unknown leaf fails. Views and snapshots taken before a Seed must not be used after it.
  Status Seed(std::vector<Entry> entries, const std::string& leaf = {},
              std::vector<std::string>* repaired = nullptr);

  const std::shared_ptr<HistoryRecorder>& recorder() const { return recorder_; }

  // A random id no stored entry has (8 hex digits): what Append gives an entry without one.
  std::string NewId();

  const std::string& leaf() const { return leaf_; }
  const Entry* Find(const std::string& id) const;
  EntryList entries() const { return EntryList(&seeded_, &appended_); }
  // The entries from the root to the leaf.
  std::vector<const Entry*> Branch() const;
  // The messages the model sees for the current branch, in order (see above): a snapshot that
  // later appends and branch moves leave as it is, valid while the History lives (until a Seed).
  // Taking it costs the same at any size.
  MessageView messages() const { return MessageView(table_, count_); }
  // The id of the entry messages()[i] comes from (empty for a compaction's summary).
  const std::string& message_id(size_t i) const;
  // The index in messages() of the first message made after the branch's last compaction (0
  // when there is none): usage figures from before it describe a context that no longer is.
  size_t context_start() const { return context_start_; }
  // The tokens the context holds: the usage reported for the last assistant message at or after
  // context_start() (not an error, usage above 0), plus estimates (EstimateTokens) of the
  // messages after it; estimates of all of them when there is no such report.
  long long ContextTokens() const;

 private:
  const Entry& Store(Entry entry);
  void RebuildBranch();
  void ClearView(size_t capacity);
  // Adds a message to the branch view (`from`: its entry; null for a compaction's summary).
  void PushMessage(const Message* m, const Entry* from);
  // The hidden message a compaction or a non-empty branch summary is sent as, made once.
  const Message* SummaryOf(const Entry& e);

  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<Entry> seeded_;  // as Seed took them
  std::deque<Entry> appended_;
  // The entry at a position (seeded first, then appended), and its id.
  const Entry& At(size_t i) const {
    return i < seeded_.size() ? seeded_[i] : appended_[i - seeded_.size()];
  }
  auto IdOf() const {
    return [this](size_t i) -> std::string_view { return At(i).id; };
  }
  IdIndex index_;  // id -> position
  std::string leaf_;
  std::unordered_map<const Entry*, Message> summaries_;
  // The branch view: messages()[i] is table_->at(i), from branch_entries_[i].
  std::shared_ptr<MessageTable> table_;
  size_t count_ = 0;
  std::vector<const Entry*> branch_entries_;
  std::vector<long long> token_prefix_{0};  // [i]: the estimates of messages [0, i)
  size_t reported_ = kNone;                 // see ContextTokens()
  size_t context_start_ = 0;
  std::mt19937_64 rng_;
  std::shared_ptr<HistoryRecorder> recorder_;
};

// Custom entry types the session records for itself: the todo tool's plan and the todo phases
// (data: their JSON), restored when a session is loaded.
inline constexpr char kPlanEntryType[] = "lousho.plan";
inline constexpr char kTodoPhasesEntryType[] = "lousho.todo_phases";

// The custom_type of the message a branch summary is sent as (only a non-empty one is sent).
inline constexpr char kBranchSummaryType[] = "branch_summary";
// The hidden user message that tells the model what happened on an abandoned branch.
Message BranchSummaryMessage(const Entry& branch_summary);
// The custom_type of the message a compaction's summary is sent as.
inline constexpr char kCompactionSummaryType[] = "compaction_summary";
// The hidden user message that stands for the history a compaction summarized.
Message CompactionSummaryMessage(const Entry& compaction);

long long NowMs();
std::string IsoTimestamp(long long ms);             // 2026-12-01T04:31:10.123Z
long long ParseIsoTimestamp(const std::string& s);  // 0 when not a timestamp

// JSON codec (the shapes of docs/session-format.md). Decoding never throws: malformed input is an
// error naming the path (`where`, then the members: "file:3.message.role: required").
Json::Value ContentBlockToJson(const ContentBlock& block);
Result<ContentBlock> ContentBlockFromJson(const Json::Value& v, const std::string& where);
Json::Value MessageToJson(const Message& message);
Json::Value EntryToJson(const Entry& entry);
// One entry line of a session file, decoded straight from its text (the hot path of loading a
// session: no Json::Value is built but for free-form members).
Result<Entry> EntryFromText(std::string_view line, const std::string& where);
// The same into *out (a fresh Entry), so a reader can decode in place.
Status DecodeEntryLine(std::string_view line, const std::string& where, Entry* out);
// The same from a value (written out and read by EntryFromText).
Result<Entry> EntryFromJson(const Json::Value& v, const std::string& where);

const char* StopReasonId(StopReason reason);  // "stop" | "length" | "toolUse" | ...
std::optional<StopReason> ParseStopReasonId(const std::string& id);
const char* ToolKindId(ToolKind kind);  // "read" | "edit" | ... (the protocols' names)
ToolKind ParseToolKindId(const std::string& id);

}  // namespace lousho::agent

// Rewinding a session and its files.
#include "agent/rewind.h"

#include <sys/stat.h>

#include <map>
#include <set>
#include <system_error>

#include "agent/branching.h"
#include "agent/checkpoints.h"
#include "agent/git_snapshot.h"
#include "agent/recorder.h"
#include "agent/turn_gate.h"
#include "support/files.h"
#include "support/sha256.h"
#include "support/text.h"

namespace lousho::agent {
namespace fs = std::filesystem;

// What a rewind plans per path (named, not file-local: Rewinder::Plan holds them).
namespace rewind_plan {

// A state and, for a git blob, where to find it.
struct Located {
  FileState state;
  std::string repo;
  std::string rel;
};

struct PathPlan {
  std::string path;
  Located target;  // what it held before the first change after the message
  Located left;    // what the agent's last change after the message left
};

}  // namespace rewind_plan

using rewind_plan::Located;
using rewind_plan::PathPlan;

namespace {

bool RewindPathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Whether `path` holds `want` now; nullopt when that cannot be told.
std::optional<bool> HoldsNow(const std::string& path, const Located& want, uint64_t cap) {
  switch (want.state.kind) {
    case FileState::Kind::kAbsent:
      return !RewindPathExists(path);
    case FileState::Kind::kStored: {
      auto now = ReadDiskFile(path, cap, {}, false);
      return now.ok() && Sha256Hex(*now) == want.state.id;
    }
    case FileState::Kind::kGitBlob: {
      if (!RewindPathExists(path)) return false;
      auto blob = GitHashFile(want.repo, want.rel);
      if (!blob.ok()) return std::nullopt;
      return *blob == want.state.id;
    }
    case FileState::Kind::kUnknown:
    case FileState::Kind::kNotKept:
      break;
  }
  return std::nullopt;
}

Status RewindWrite(const std::string& path, const std::string& content, bool executable) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  Status st = WriteDiskFile(path, content);
  if (st.ok() && executable)
    fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ec);
  return st;
}

// Puts one file back as `target` says.
Status RestoreFile(const PathPlan& p, CheckpointStore& store) {
  const FileState& s = p.target.state;
  switch (s.kind) {
    case FileState::Kind::kAbsent: {
      std::error_code ec;
      fs::remove(p.path, ec);
      if (ec) return MakeError(ErrorCode::kToolIo, "cannot remove " + p.path + ": " + ec.message());
      return Status::Ok();
    }
    case FileState::Kind::kStored: {
      auto content = store.Object(s.id);
      if (!content.ok()) return content.error();
      return RewindWrite(p.path, *content, false);
    }
    case FileState::Kind::kGitBlob: {
      auto content = GitReadBlob(p.target.repo, s.id, p.target.rel, store.max_file_bytes());
      if (!content.ok()) return content.error();
      return RewindWrite(p.path, *content, s.mode == "100755");
    }
    case FileState::Kind::kNotKept:
      return MakeError(ErrorCode::kToolIo, "its earlier content was not kept (" +
                                               (s.note.empty() ? std::string("unknown") : s.note) +
                                               ")");
    case FileState::Kind::kUnknown:
      break;
  }
  return MakeError(ErrorCode::kToolIo, "its earlier content is unknown");
}

std::string JoinPaths(const std::vector<std::string>& paths) { return JoinStrings(paths, ", "); }

// Releases the session's run at the end of a rewind that claimed it.
class GateClaim {
 public:
  explicit GateClaim(TurnGate* gate) : gate_(gate) {}
  ~GateClaim() {
    if (gate_) gate_->End();
  }
  GateClaim(const GateClaim&) = delete;
  GateClaim& operator=(const GateClaim&) = delete;

 private:
  TurnGate* gate_;
};

}  // namespace

struct Rewinder::Plan {
  std::string entry_id;
  std::string parent_id;
  std::string text;
  std::vector<PathPlan> paths;  // in the order of their first change
  std::vector<std::string> notes;

  void Add(const std::string& path, Located before, Located after) {
    for (PathPlan& p : paths)
      if (p.path == path) {
        p.left = std::move(after);
        return;
      }
    paths.push_back(PathPlan{path, std::move(before), std::move(after)});
  }
  void AddGit(const CheckpointRecord& r) {
    if (!r.error.empty()) {
      notes.push_back("a command's changes in " + r.repo + " were not recorded: " + r.error);
      return;
    }
    if (r.tree_before == r.tree_after) return;
    auto changes = GitTreeChanges(r.repo, r.tree_before, r.tree_after);
    if (!changes.ok()) {
      notes.push_back("a command's changes in " + r.repo +
                      " cannot be read back: " + changes.error().message);
      return;
    }
    for (GitChange& c : *changes)
      Add((fs::path(r.repo) / c.path).string(), Located{std::move(c.before), r.repo, c.path},
          Located{std::move(c.after), r.repo, c.path});
  }
};

std::string DescribeRewind(const RewindOutcome& o) {
  std::string text = "Rewound to before \"" + PromptGist(o.text) + "\".";
  if (!o.restored.empty())
    text += "\nRestored " + std::to_string(o.restored.size()) +
            (o.restored.size() == 1 ? " file: " : " files: ") + JoinPaths(o.restored);
  if (!o.kept.empty())
    text += "\nKept as they are (changed since the agent wrote them): " + JoinPaths(o.kept);
  for (const std::string& n : o.notes) text += "\nNot restored: " + n;
  return text;
}

Rewinder::Rewinder(Recorder& recorder, TurnGate& gate, CheckpointStore* store,
                   ClientServices services, std::string session_id)
    : recorder_(recorder),
      gate_(gate),
      store_(store),
      services_(services),
      session_id_(std::move(session_id)) {}

Result<Rewinder::Plan> Rewinder::MakePlan(const RewindRequest& request) {
  Plan plan;
  std::set<std::string> after;
  std::optional<Error> bad;
  recorder_.Read([&](const History& history) {
    const Entry* e = history.Find(request.entry_id);
    if (!e || e->kind != EntryKind::kMessage || e->message.role != Role::kUser ||
        e->message.is_custom()) {
      bad = MakeError(ErrorCode::kHistoryInvalid,
                      "no user message with id '" + request.entry_id + "'");
      return;
    }
    // The message itself: what its prompt's hooks changed (recorded under its id).
    bool seen = false;
    for (const Entry* b : history.Branch()) {
      seen = seen || b == e;
      if (seen) after.insert(b->id);
    }
    if (!seen)
      bad = MakeError(ErrorCode::kHistoryInvalid,
                      "message '" + request.entry_id + "' is not on the current branch");
    plan.entry_id = e->id;
    plan.parent_id = e->parent_id;
    plan.text = e->message.TextContent();
  });
  if (bad) return *bad;
  if (!request.restore_files || !store_) return plan;
  auto records = store_->Records();
  if (!records.ok()) return records.error();
  for (const CheckpointRecord& r : *records) {
    if (after.count(r.entry_id) == 0) continue;
    if (r.kind == CheckpointRecord::Kind::kGit)
      plan.AddGit(r);
    else
      plan.Add(r.path, Located{r.before, {}, {}}, Located{r.after, {}, {}});
  }
  return plan;
}

Result<bool> Rewinder::AskOverwrite(const std::vector<std::string>& changed,
                                    const CancelToken& cancel) {
  const std::string message =
      "These files changed since the agent last wrote them: " + JoinPaths(changed) +
      ". Put back the agent's earlier version anyway?";
  if (services_.dialogs) {
    auto answer = services_.dialogs->Confirm(session_id_, "Rewind", message, cancel);
    if (!answer.ok()) return answer.error();
    if (!answer->has_value()) return MakeError(ErrorCode::kCancelled, "the rewind was cancelled");
    return **answer;
  }
  if (services_.permissions) {
    PermissionRequest req;
    req.tool_call_id = "rewind";
    req.tool_name = "rewind";
    req.title = "Rewind: overwrite " + JoinPaths(changed) + " (changed since the agent wrote them)";
    req.kind = ToolKind::kEdit;
    for (const std::string& p : changed) req.locations.push_back(ToolLocation{p, 0});
    switch (services_.permissions->RequestPermission(session_id_, req, cancel)) {
      case PermissionDecision::kAllowOnce:
      case PermissionDecision::kAllowAlways:
        return true;
      case PermissionDecision::kRejectOnce:
      case PermissionDecision::kRejectAlways:
        return false;
      case PermissionDecision::kCancelled:
        break;
    }
    return MakeError(ErrorCode::kCancelled, "the rewind was cancelled");
  }
  return false;  // nobody to ask: what someone else wrote stays
}

Result<RewindOutcome> Rewinder::Rewind(const RewindRequest& request) {
  TurnGate* claimed = nullptr;
  if (!request.in_turn) {
    auto begun = gate_.Begin(false);
    if (!begun.ok()) return begun.error();
    claimed = &gate_;
  }
  GateClaim claim(claimed);
  auto plan = MakePlan(request);
  if (!plan.ok()) return plan.error();
  RewindOutcome out;
  out.entry_id = plan->entry_id;
  out.text = plan->text;
  out.notes = plan->notes;
  const uint64_t cap = store_ ? store_->max_file_bytes() : kMaxCheckpointFileBytes;
  std::vector<const PathPlan*> todo;
  std::vector<std::string> changed;
  for (const PathPlan& p : plan->paths) {
    if (HoldsNow(p.path, p.target, cap) == std::optional<bool>(true)) continue;  // already so
    todo.push_back(&p);
    if (HoldsNow(p.path, p.left, cap) == std::optional<bool>(false)) changed.push_back(p.path);
  }
  bool overwrite = true;
  if (!changed.empty()) {
    auto answer = AskOverwrite(changed, request.cancel);
    if (!answer.ok()) return answer.error();
    overwrite = *answer;
  }
  Status moved = recorder_.BranchTo([&](const History& history) -> Result<std::string> {
    if (!history.Find(plan->entry_id))
      return MakeError(ErrorCode::kHistoryInvalid, "the message is gone");
    return plan->parent_id;
  });
  if (!moved.ok()) return moved.error();
  for (const PathPlan* p : todo) {
    if (!overwrite && std::find(changed.begin(), changed.end(), p->path) != changed.end()) {
      out.kept.push_back(p->path);
      continue;
    }
    Status st = RestoreFile(*p, *store_);
    if (st.ok())
      out.restored.push_back(p->path);
    else
      out.notes.push_back(p->path + ": " + st.error().message);
  }
  if (request.prefill_editor && services_.dialogs)
    services_.dialogs->SetEditorText(session_id_, out.text);
  return out;
}

}  // namespace lousho::agent

// Git snapshots of a working tree through a temporary index.
#include "agent/git_snapshot.h"

#include <unistd.h>

#include <atomic>
#include <system_error>

#include "support/subprocess.h"

namespace lousho::agent {
namespace fs = std::filesystem;

namespace {

constexpr char kNoBlob[] = "0000000000000000000000000000000000000000";

struct GitRun {
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  size_t max_output = size_t{1} << 20;
};

// Runs git in `dir` without automatic housekeeping; the output on success, else an error with
// git's words.
Result<std::string> RunGitIn(const std::string& dir, const GitRun& run) {
  SubprocessOptions o;
  o.argv = {"git", "-C", dir, "-c", "gc.auto=0", "-c", "core.quotepath=false"};
  o.argv.insert(o.argv.end(), run.args.begin(), run.args.end());
  o.env = run.env;
  o.env.emplace_back("GIT_TERMINAL_PROMPT", "0");
  o.env.emplace_back("GIT_OPTIONAL_LOCKS", "0");
  o.max_output_bytes = run.max_output + 1;
  o.timeout_ms = kGitSnapshotTimeoutMs;
  o.drain_after_exit_ms = 0;
  auto r = RunSubprocess(o);
  if (!r.ok()) return r.error();
  const std::string what = "git " + (run.args.empty() ? std::string() : run.args[0]);
  if (r->timed_out)
    return MakeError(ErrorCode::kTimeout, what + " took longer than " +
                                              std::to_string(kGitSnapshotTimeoutMs / 1000) + " s");
  if (r->truncated || r->output.size() > run.max_output)
    return MakeError(ErrorCode::kToolTooLarge, what + ": the output is over the limit");
  if (r->exit_code != 0)
    return MakeError(ErrorCode::kSubprocess, what + " failed: " + r->output.substr(0, 400));
  return std::move(r->output);
}

std::string LastLine(const std::string& out) {
  size_t end = out.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  size_t start = out.rfind('\n', end);
  return out.substr(start == std::string::npos ? 0 : start + 1,
                    end + 1 - (start == std::string::npos ? 0 : start + 1));
}

bool IsObjectId(const std::string& s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s)
    if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) return false;
  return true;
}

FileState BlobState(const std::string& mode, const std::string& blob) {
  FileState s;
  if (mode == "000000" || blob == kNoBlob || blob.find_first_not_of('0') == std::string::npos) {
    s.kind = FileState::Kind::kAbsent;
  } else if (mode == "100644" || mode == "100755") {
    s.kind = FileState::Kind::kGitBlob;
    s.id = blob;
    s.mode = mode;
  } else {
    s.kind = FileState::Kind::kNotKept;
    s.note = mode == "120000" ? "a symbolic link" : "a submodule";
  }
  return s;
}

fs::path TempIndexPath() {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return dir / ("lousho-snapshot-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter.fetch_add(1)) + ".index");
}

}  // namespace

std::optional<std::string> GitTopLevel(const fs::path& cwd) {
  auto out = RunGitIn(cwd.string(), {{"rev-parse", "--show-toplevel"}, {}, 4096});
  if (!out.ok()) return std::nullopt;
  std::string top = LastLine(*out);
  if (top.empty() || top[0] != '/') return std::nullopt;
  return top;
}

Result<std::string> GitSnapshotTree(const std::string& repo) {
  const fs::path index = TempIndexPath();
  // Starting from a copy of the user's index lets git skip the files whose stat is unchanged.
  if (auto user_index = RunGitIn(repo, {{"rev-parse", "--git-path", "index"}, {}, 8192});
      user_index.ok()) {
    fs::path from = LastLine(*user_index);
    if (from.is_relative()) from = fs::path(repo) / from;
    std::error_code ec;
    fs::copy_file(from, index, fs::copy_options::overwrite_existing, ec);
    // With the index's own time: git trusts an entry's stat only when the file's time is older
    // than its index's (racy-git), and a copy made now would vouch for a file changed within
    // the same second as the entry was recorded (same size: the change went unseen).
    if (!ec) {
      const fs::file_time_type written = fs::last_write_time(from, ec);
      if (!ec) fs::last_write_time(index, written, ec);
    }
  }
  const std::vector<std::pair<std::string, std::string>> env = {{"GIT_INDEX_FILE", index.string()}};
  auto added = RunGitIn(repo, {{"add", "-A", "--", ":/"}, env});
  Result<std::string> tree =
      added.ok() ? RunGitIn(repo, {{"write-tree"}, env, 4096}) : Result<std::string>(added.error());
  std::error_code ec;
  fs::remove(index, ec);
  fs::remove(index.string() + ".lock", ec);
  if (!tree.ok()) return tree.error();
  std::string id = LastLine(*tree);
  if (!IsObjectId(id))
    return MakeError(ErrorCode::kSubprocess, "git write-tree gave no tree id: " + id);
  return id;
}

Result<std::vector<GitChange>> GitTreeChanges(const std::string& repo, const std::string& tree_a,
                                              const std::string& tree_b) {
  if (!IsObjectId(tree_a) || !IsObjectId(tree_b))
    return MakeError(ErrorCode::kSessionFile, "a git snapshot record names no tree");
  auto out = RunGitIn(
      repo, {{"diff-tree", "-r", "-z", "--no-renames", tree_a, tree_b}, {}, size_t{64} << 20});
  if (!out.ok()) return out.error();
  // Each change: ":<mode a> <mode b> <blob a> <blob b> <status>\0<path>\0".
  std::vector<GitChange> changes;
  size_t at = 0;
  while (at < out->size()) {
    const size_t meta_end = out->find('\0', at);
    if (meta_end == std::string::npos) break;
    const size_t path_end = out->find('\0', meta_end + 1);
    if (path_end == std::string::npos) break;
    const std::string meta = out->substr(at, meta_end - at);
    at = path_end + 1;
    if (meta.size() < 2 || meta[0] != ':') continue;
    std::vector<std::string> f;
    size_t p = 1;
    for (size_t sp; (sp = meta.find(' ', p)) != std::string::npos; p = sp + 1)
      f.push_back(meta.substr(p, sp - p));
    f.push_back(meta.substr(p));
    if (f.size() < 5) continue;
    changes.push_back(GitChange{out->substr(meta_end + 1, path_end - meta_end - 1),
                                BlobState(f[0], f[2]), BlobState(f[1], f[3])});
  }
  return changes;
}

Result<std::string> GitReadBlob(const std::string& repo, const std::string& blob,
                                const std::string& path, uint64_t max_bytes) {
  return RunGitIn(
      repo,
      {{"cat-file", "--filters", "--path=" + path, blob}, {}, static_cast<size_t>(max_bytes)});
}

Result<std::string> GitHashFile(const std::string& repo, const std::string& path) {
  auto out = RunGitIn(repo, {{"hash-object", "--", path}, {}, 4096});
  if (!out.ok()) return out.error();
  return LastLine(*out);
}

CommandSnapshot CommandSnapshot::Begin(CheckpointStore* store, std::string entry_id,
                                       const fs::path& cwd) {
  CommandSnapshot snap;
  if (!store) return snap;
  std::optional<std::string> top = GitTopLevel(cwd);
  if (!top) return snap;
  snap.store_ = store;
  snap.entry_id_ = std::move(entry_id);
  snap.repo_ = *top;
  auto tree = GitSnapshotTree(snap.repo_);
  if (tree.ok())
    snap.before_ = *tree;
  else
    snap.error_ = tree.error().message;
  return snap;
}

void CommandSnapshot::End() {
  if (!store_) return;
  std::string after;
  if (error_.empty()) {
    auto tree = GitSnapshotTree(repo_);
    if (tree.ok())
      after = *tree;
    else
      error_ = tree.error().message;
  }
  if (error_.empty() && after == before_) return;  // the command changed nothing git sees
  (void)store_->AddGit(entry_id_, repo_, before_, after, error_);
  store_ = nullptr;
}

}  // namespace lousho::agent

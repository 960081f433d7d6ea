// File checkpoints: what a file held before the agent changed it, kept on disk beside the session
// file so that a rewind (agent/rewind.h) can put it back, also after a restart. One store per
// session; the layout is docs/session-format.md, "Checkpoints".
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace lousho::agent {

// The largest file whose content a checkpoint keeps; a larger one is recorded as "not kept" (a
// rewind says it cannot restore it). The same as the most `write` and `edit` handle.
inline constexpr uint64_t kMaxCheckpointFileBytes = 10ULL * 1024 * 1024;

// A file's state at one moment.
struct FileState {
  enum class Kind {
    kUnknown,  // not told (a hook changed the file)
    kAbsent,   // no file
    kStored,   // content in the store, `id` its SHA-256
    kGitBlob,  // content in the repository's object database, `id` the blob, `mode` its mode
    kNotKept,  // over the cap, or not a regular file; `size` what it had
  };
  Kind kind = Kind::kUnknown;
  std::string id;
  std::string mode;
  uint64_t size = 0;
  std::string note;  // kNotKept: why
};

// One change the agent made. A file record is one file changed by a tool (write, edit, the
// editor's fs/write_text_file, a hook); a git record is the working tree of a repository around
// a command (agent/git_snapshot.h), whose changed files come from comparing the two trees.
struct CheckpointRecord {
  enum class Kind { kFile, kGit };
  Kind kind = Kind::kFile;
  std::string entry_id;  // the history entry whose tool call made the change
  // kFile
  std::string path;  // absolute
  FileState before;
  FileState after;  // kUnknown when the new content was not told
  // kGit
  std::string repo;  // the work tree's top folder
  std::string tree_before;
  std::string tree_after;
  std::string error;  // the snapshot failed: what was not recorded
};

// "<folder>/<name>.checkpoints" for "<folder>/<name>.jsonl".
std::filesystem::path CheckpointDirFor(const std::filesystem::path& session_file);
// Removes a session's checkpoints (with its file: session/delete). No folder is not an error.
Status RemoveCheckpoints(const std::filesystem::path& session_file);

// Thread-safe. Nothing touches the disk until the first change is kept; the index is read back at
// the first use. Objects are named by the SHA-256 of their content, so a content is stored once.
class CheckpointStore {
 public:
  // `dir` empty: kept in memory only (a session without a file).
  explicit CheckpointStore(std::filesystem::path dir,
                           uint64_t max_file_bytes = kMaxCheckpointFileBytes);
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  // Keeps what `path` holds now (or that it does not exist) under `entry_id`, before it changes;
  // `after` is the content about to be written (null: not known).
  Status KeepBefore(const std::string& entry_id, const std::filesystem::path& path,
                    const std::string* after);
  // Records a repository's working tree around a command (`error`: the snapshot failed).
  Status AddGit(const std::string& entry_id, const std::string& repo,
                const std::string& tree_before, const std::string& tree_after,
                const std::string& error);
  // Every record, oldest first. A corrupt index fails with an error naming the line.
  Result<std::vector<CheckpointRecord>> Records();
  // A kept content, checked against its name.
  Result<std::string> Object(const std::string& sha);
  uint64_t max_file_bytes() const { return max_file_bytes_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  Status LoadLocked();
  Result<FileState> StateLocked(const std::filesystem::path& path);
  Status PutObjectLocked(const std::string& sha, const std::string& content);
  Status AppendLocked(const CheckpointRecord& record);

  const std::filesystem::path dir_;
  const uint64_t max_file_bytes_;
  std::mutex mu_;
  bool loaded_ = false;
  std::optional<Error> load_error_;
  std::vector<CheckpointRecord> records_;
  std::vector<std::pair<std::string, std::string>> memory_objects_;  // dir_ empty only
};

}  // namespace lousho::agent

// The checkpoint store: objects by SHA-256 and an append-only index of records, beside the
// session file.
#include "agent/checkpoints.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "support/files.h"
#include "support/json_util.h"
#include "support/sha256.h"

namespace lousho::agent {
namespace fs = std::filesystem;

namespace {

constexpr char kIndexName[] = "index.jsonl";
constexpr char kObjectsName[] = "objects";
// The index is small (one line per change); a larger one is not a checkpoint index.
constexpr uint64_t kMaxIndexBytes = 64ULL << 20;

const char* StateKindName(FileState::Kind k) {
  switch (k) {
    case FileState::Kind::kAbsent:
      return "absent";
    case FileState::Kind::kStored:
      return "stored";
    case FileState::Kind::kGitBlob:
      return "git";
    case FileState::Kind::kNotKept:
      return "not_kept";
    case FileState::Kind::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<FileState::Kind> StateKindOf(const std::string& name) {
  for (auto k : {FileState::Kind::kUnknown, FileState::Kind::kAbsent, FileState::Kind::kStored,
                 FileState::Kind::kGitBlob, FileState::Kind::kNotKept})
    if (name == StateKindName(k)) return k;
  return std::nullopt;
}

Json::Value StateJson(const FileState& s) {
  Json::Value v(Json::objectValue);
  v["kind"] = StateKindName(s.kind);
  if (!s.id.empty()) v["id"] = s.id;
  if (!s.mode.empty()) v["mode"] = s.mode;
  if (s.kind == FileState::Kind::kNotKept) v["size"] = static_cast<Json::UInt64>(s.size);
  if (!s.note.empty()) v["note"] = s.note;
  return v;
}

std::optional<FileState> StateFromJson(const Json::Value& v) {
  if (!v.isObject()) return std::nullopt;
  auto kind = StateKindOf(StringOr(v, "kind"));
  if (!kind) return std::nullopt;
  FileState s;
  s.kind = *kind;
  s.id = StringOr(v, "id");
  s.mode = StringOr(v, "mode");
  s.size = AsUInt64(MemberOrNull(v, "size")).value_or(0);
  s.note = StringOr(v, "note");
  if (s.kind == FileState::Kind::kStored && s.id.size() != 64) return std::nullopt;
  return s;
}

std::string RecordLine(const CheckpointRecord& r) {
  Json::Value v(Json::objectValue);
  v["entry"] = r.entry_id;
  if (r.kind == CheckpointRecord::Kind::kFile) {
    v["kind"] = "file";
    v["path"] = r.path;
    v["before"] = StateJson(r.before);
    v["after"] = StateJson(r.after);
  } else {
    v["kind"] = "git";
    v["repo"] = r.repo;
    v["treeBefore"] = r.tree_before;
    v["treeAfter"] = r.tree_after;
    if (!r.error.empty()) v["error"] = r.error;
  }
  return WriteJson(v) + "\n";
}

Result<CheckpointRecord> RecordFromLine(std::string_view line) {
  auto v = ParseJson(line);
  if (!v.ok()) return v.error();
  CheckpointRecord r;
  r.entry_id = StringOr(*v, "entry");
  const std::string kind = StringOr(*v, "kind");
  if (r.entry_id.empty()) return MakeError(ErrorCode::kSessionFile, "a record without \"entry\"");
  if (kind == "file") {
    r.path = StringOr(*v, "path");
    auto before = StateFromJson(MemberOrNull(*v, "before"));
    auto after = StateFromJson(MemberOrNull(*v, "after"));
    if (r.path.empty() || !before || !after)
      return MakeError(ErrorCode::kSessionFile, "a file record needs path, before and after");
    r.before = *before;
    r.after = *after;
    return r;
  }
  if (kind == "git") {
    r.kind = CheckpointRecord::Kind::kGit;
    r.repo = StringOr(*v, "repo");
    r.tree_before = StringOr(*v, "treeBefore");
    r.tree_after = StringOr(*v, "treeAfter");
    r.error = StringOr(*v, "error");
    if (r.repo.empty()) return MakeError(ErrorCode::kSessionFile, "a git record needs \"repo\"");
    return r;
  }
  return MakeError(ErrorCode::kSessionFile, "unknown record kind '" + kind + "'");
}

bool IsHexName(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) return false;
  return true;
}

Status AppendToFile(const fs::path& file, const std::string& line) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return MakeError(ErrorCode::kSessionFile,
                     "cannot open " + file.string() + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return MakeError(ErrorCode::kSessionFile,
                       "cannot write " + file.string() + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace

fs::path CheckpointDirFor(const fs::path& session_file) {
  fs::path dir = session_file;
  dir.replace_extension(".checkpoints");
  return dir;
}

Status RemoveCheckpoints(const fs::path& session_file) {
  std::error_code ec;
  fs::remove_all(CheckpointDirFor(session_file), ec);
  if (ec)
    return MakeError(ErrorCode::kSessionFile, "cannot remove the checkpoints of " +
                                                  session_file.string() + ": " + ec.message());
  return Status::Ok();
}

CheckpointStore::CheckpointStore(fs::path dir, uint64_t max_file_bytes)
    : dir_(std::move(dir)), max_file_bytes_(max_file_bytes) {}

Status CheckpointStore::LoadLocked() {
  if (loaded_) return load_error_ ? Status(*load_error_) : Status::Ok();
  loaded_ = true;
  if (dir_.empty()) return Status::Ok();
  const fs::path index = dir_ / kIndexName;
  std::error_code ec;
  if (!fs::exists(index, ec)) return Status::Ok();
  auto text = ReadDiskFile(index, kMaxIndexBytes);
  if (!text.ok()) {
    load_error_ =
        MakeError(ErrorCode::kSessionFile, "checkpoint index " + index.string() +
                                               " cannot be read: " + text.error().message);
    return *load_error_;
  }
  size_t start = 0;
  for (size_t line_no = 1; start < text->size(); ++line_no) {
    const size_t end = text->find('\n', start);
    // A last line without its newline was cut short by a crash: what it held was never used.
    if (end == std::string::npos) break;
    auto rec = RecordFromLine(std::string_view(*text).substr(start, end - start));
    if (!rec.ok()) {
      load_error_ = MakeError(ErrorCode::kSessionFile, "checkpoint index " + index.string() + ":" +
                                                           std::to_string(line_no) +
                                                           " is corrupt: " + rec.error().message);
      records_.clear();
      return *load_error_;
    }
    records_.push_back(std::move(*rec));
    start = end + 1;
  }
  return Status::Ok();
}

Status CheckpointStore::PutObjectLocked(const std::string& sha, const std::string& content) {
  if (dir_.empty()) {
    for (const auto& [name, body] : memory_objects_)
      if (name == sha) return Status::Ok();
    memory_objects_.emplace_back(sha, content);
    return Status::Ok();
  }
  const fs::path objects = dir_ / kObjectsName;
  const fs::path file = objects / sha;
  std::error_code ec;
  if (fs::exists(file, ec)) return Status::Ok();  // the same content, kept before
  fs::create_directories(objects, ec);
  if (ec)
    return MakeError(ErrorCode::kSessionFile,
                     "cannot create " + objects.string() + ": " + ec.message());
  return WriteDiskFile(file, content);
}

Result<FileState> CheckpointStore::StateLocked(const fs::path& path) {
  FileState s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR)
      return MakeError(ErrorCode::kToolIo,
                       "cannot look at " + path.string() + ": " + std::strerror(errno));
    s.kind = FileState::Kind::kAbsent;
    return s;
  }
  s.size = static_cast<uint64_t>(st.st_size);
  if (!S_ISREG(st.st_mode)) {
    s.kind = FileState::Kind::kNotKept;
    s.note = "not a regular file";
    return s;
  }
  if (s.size > max_file_bytes_) {
    s.kind = FileState::Kind::kNotKept;
    s.note = ByteSize(s.size) + ", over the " + ByteSize(max_file_bytes_) + " checkpoint limit";
    return s;
  }
  auto content = ReadDiskFile(path, max_file_bytes_, {}, false);
  if (!content.ok()) {
    s.kind = FileState::Kind::kNotKept;
    s.note = content.error().message;
    return s;
  }
  s.kind = FileState::Kind::kStored;
  s.id = Sha256Hex(*content);
  Status put = PutObjectLocked(s.id, *content);
  if (!put.ok()) return put.error();
  return s;
}

Status CheckpointStore::AppendLocked(const CheckpointRecord& record) {
  if (!dir_.empty()) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec)
      return MakeError(ErrorCode::kSessionFile,
                       "cannot create " + dir_.string() + ": " + ec.message());
    Status st = AppendToFile(dir_ / kIndexName, RecordLine(record));
    if (!st.ok()) return st;
  }
  records_.push_back(record);
  return Status::Ok();
}

Status CheckpointStore::KeepBefore(const std::string& entry_id, const fs::path& path,
                                   const std::string* after) {
  std::lock_guard<std::mutex> lock(mu_);
  (void)LoadLocked();  // a corrupt index still takes new records; a rewind reports it
  CheckpointRecord r;
  r.entry_id = entry_id;
  r.path = path.string();
  auto before = StateLocked(path);
  if (!before.ok()) return before.error();
  r.before = std::move(*before);
  if (after != nullptr) {
    if (after->size() > max_file_bytes_) {
      r.after.kind = FileState::Kind::kNotKept;
      r.after.size = after->size();
    } else {
      r.after.kind = FileState::Kind::kStored;
      r.after.id = Sha256Hex(*after);
    }
  }
  return AppendLocked(r);
}

Status CheckpointStore::AddGit(const std::string& entry_id, const std::string& repo,
                               const std::string& tree_before, const std::string& tree_after,
                               const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  (void)LoadLocked();
  CheckpointRecord r;
  r.kind = CheckpointRecord::Kind::kGit;
  r.entry_id = entry_id;
  r.repo = repo;
  r.tree_before = tree_before;
  r.tree_after = tree_after;
  r.error = error;
  return AppendLocked(r);
}

Result<std::vector<CheckpointRecord>> CheckpointStore::Records() {
  std::lock_guard<std::mutex> lock(mu_);
  Status st = LoadLocked();
  if (!st.ok()) return st.error();
  return records_;
}

Result<std::string> CheckpointStore::Object(const std::string& sha) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dir_.empty()) {
    for (const auto& [name, body] : memory_objects_)
      if (name == sha) return body;
    return MakeError(ErrorCode::kSessionFile, "checkpoint object " + sha + " is missing");
  }
  if (!IsHexName(sha))
    return MakeError(ErrorCode::kSessionFile, "'" + sha + "' is not a checkpoint object name");
  const fs::path file = dir_ / kObjectsName / sha;
  auto content = ReadDiskFile(file, max_file_bytes_);
  if (!content.ok())
    return MakeError(ErrorCode::kSessionFile,
                     "checkpoint object " + file.string() + ": " + content.error().message);
  if (Sha256Hex(*content) != sha)
    return MakeError(ErrorCode::kSessionFile,
                     "checkpoint object " + file.string() + " is corrupt (its content changed)");
  return std::move(*content);
}

}  // namespace lousho::agent

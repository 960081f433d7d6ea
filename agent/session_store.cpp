// Session files: header codec, the locked appender, the store's layout and listing (reading:
// session_read.cpp).
#include "agent/session_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "support/files.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent {
namespace fs = std::filesystem;

namespace {
Error FileError(const std::string& message) { return MakeError(ErrorCode::kSessionFile, message); }
}  // namespace

Json::Value SessionHeaderToJson(const SessionHeader& h) {
  Json::Value j(Json::objectValue);
  j["type"] = "session";
  j["version"] = h.version;
  j["id"] = h.id;
  j["timestamp"] = IsoTimestamp(h.timestamp_ms);
  j["cwd"] = h.cwd;
  j["agent"] = h.agent;
  if (!h.parent_session.empty()) j["parentSession"] = h.parent_session;
  return j;
}

Result<SessionHeader> SessionHeaderFromJson(const Json::Value& v, const std::string& path) {
  FieldReader r(v, path);
  auto type = r.String("type", true);
  auto version = r.Int("version", true);
  auto id = r.String("id", true);
  auto ts = r.String("timestamp", false);
  auto cwd = r.String("cwd", false);
  auto agent = r.String("agent", false);
  auto parent = r.String("parentSession", false);
  if (!r.ok()) return FileError(r.error());
  if (*type != "session") return FileError(r.Path("type") + ": expected \"session\"");
  if (*version < 1 || *version > kSessionFormatVersion)
    return FileError(r.Path("version") + ": format version " + std::to_string(*version) +
                     " is not known to this lousho (it reads versions 1 to " +
                     std::to_string(kSessionFormatVersion) + ")");
  SessionHeader h;
  h.version = static_cast<int>(*version);
  h.id = *id;
  h.timestamp_ms = ts ? ParseIsoTimestamp(*ts) : 0;
  h.cwd = cwd.value_or("");
  h.agent = agent.value_or("");
  h.parent_session = parent.value_or("");
  return h;
}

// --- the writer ---

SessionWriter::SessionWriter(fs::path path, std::optional<SessionHeader> header, int fd)
    : path_(std::move(path)), header_(std::move(header)), fd_(fd) {}

SessionWriter::~SessionWriter() { Close(); }

std::shared_ptr<SessionWriter> SessionWriter::ForNew(fs::path path, SessionHeader header) {
  return std::shared_ptr<SessionWriter>(new SessionWriter(std::move(path), std::move(header), -1));
}

namespace {
// Takes the exclusive advisory lock without waiting.
Status Lock(int fd, const fs::path& path) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return Status::Ok();
  if (errno == EWOULDBLOCK)
    return MakeError(ErrorCode::kSessionLocked,
                     "session file " + path.string() +
                         " is in use by another lousho process (it holds the file's lock)");
  return FileError("cannot lock " + path.string() + ": " + std::strerror(errno));
}
}  // namespace

Status DeleteSessionFile(const fs::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return MakeError(ErrorCode::kSessionNotFound, "no session file " + path.string());
    return FileError("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  // Under the lock: no session opens the file between the check and the removal (an opening
  // takes the lock too, and finds no file after it).
  Status st = Lock(fd, path);
  if (st.ok() && unlink(path.c_str()) != 0)
    st = FileError("cannot delete " + path.string() + ": " + std::strerror(errno));
  close(fd);
  return st;
}

Result<std::pair<std::shared_ptr<SessionWriter>, SessionFileContents>> SessionWriter::OpenExisting(
    const fs::path& path) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return MakeError(ErrorCode::kSessionNotFound, "no session file " + path.string());
    return FileError("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return FileError(path.string() + " is not a regular file");
  }
  if (Status locked = Lock(fd, path); !locked.ok()) {
    close(fd);
    return locked.error();
  }
  // Read under the lock: nobody else appends now.
  auto contents = ReadSessionFile(path);
  if (!contents.ok()) {
    close(fd);
    return contents.error();
  }
  for (const auto& w : contents->warnings) log::Warn(w);
  if (contents->valid_bytes < static_cast<uint64_t>(st.st_size)) {
    if (ftruncate(fd, static_cast<off_t>(contents->valid_bytes)) != 0) {
      close(fd);
      return FileError("cannot cut the torn last line of " + path.string() + ": " +
                       std::strerror(errno));
    }
  }
  std::shared_ptr<SessionWriter> w(new SessionWriter(path, std::nullopt, fd));
  // A last line that parsed but has no newline: the next entry must start a line of its own.
  if (contents->valid_bytes > 0) {
    char c = 0;
    if (pread(fd, &c, 1, static_cast<off_t>(contents->valid_bytes - 1)) == 1 && c != '\n') {
      std::lock_guard<std::mutex> lock(w->mu_);
      w->pending_ = "\n";
      w->SaveLocked();
    }
  }
  return std::make_pair(std::move(w), std::move(*contents));
}

bool SessionWriter::created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fd_ >= 0;
}

namespace {
// The folder itself, else its nearest parent that exists: where the user can act.
fs::path NearestExisting(fs::path dir) {
  std::error_code ec;
  while (dir.has_parent_path() && dir != dir.parent_path() && !fs::exists(dir, ec))
    dir = dir.parent_path();
  return dir;
}

// What the user can do about a save failure, by its OS error.
std::string SaveAdvice(int err, const fs::path& folder) {
  const fs::path dir = NearestExisting(folder);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return "Free some disk space there (or raise the quota)";
    case EACCES:
    case EPERM:
    case EROFS:
      return "Make " + dir.string() + " writable";
    case ENOTDIR:
    case EEXIST:
      return "A file stands where that folder (or one of its parents) should be: move it away";
    default:
      return "Check that " + dir.string() + " is a writable folder";
  }
}
}  // namespace

void SessionWriter::FailedLocked(const std::string& what, int err) {
  if (failing_) return;  // told once per outage
  failing_ = true;
  const std::string why = std::strerror(err);
  SaveReport r;
  r.path = path_.string();
  r.title = "This session is not being saved (" + why + ")";
  r.message = "This session is not being saved: " + what + ": " + why + ". " +
              SaveAdvice(err, path_.parent_path()) +
              ". The conversation goes on; lousho will retry with every new entry and then "
              "write everything missed to " +
              path_.string() + ".";
  log::Warn("session file: " + r.message);
  ReportLocked(std::move(r));
}

void SessionWriter::SavedLocked(size_t entries) {
  failing_ = false;
  SaveReport r;
  r.resumed = true;
  r.path = path_.string();
  r.title = "Saving this session works again";
  r.message = "Saving this session works again: " + std::to_string(entries) +
              (entries == 1 ? " entry" : " entries") + " not saved before " +
              (entries == 1 ? "is" : "are") + " now in " + path_.string() + ".";
  log::Info("session file: " + r.message);
  ReportLocked(std::move(r));
}

void SessionWriter::ReportLocked(SaveReport r) {
  if (closed_) return;  // a closing session tells nobody
  reports_.push_back(std::move(r));
  has_reports_.store(true, std::memory_order_release);
}

std::vector<SaveReport> SessionWriter::TakeReports() {
  std::lock_guard<std::mutex> lock(mu_);
  has_reports_.store(false, std::memory_order_relaxed);
  return std::exchange(reports_, {});
}

bool SessionWriter::CreateLocked() {
  const fs::path dir = path_.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    FailedLocked("cannot create the folder " + dir.string(), ec.value());
    return false;
  }
  int fd =
      open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    FailedLocked("cannot create " + path_.string(), errno);
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // The file was created just now, empty: it goes, so that the next try can create it.
    const int err = errno;
    close(fd);
    unlink(path_.c_str());
    FailedLocked("cannot lock " + path_.string(), err);
    return false;
  }
  fd_ = fd;
  pending_.insert(0, WriteJson(SessionHeaderToJson(*header_)) + "\n");
  header_.reset();
  return true;
}

bool SessionWriter::DrainLocked() {
  // One write for all that waits: a crash leaves whole lines and at most one torn last line. What
  // a failed write leaves (the rest of a line written in part, then whole lines) stays in order.
  size_t done = 0;
  while (done < pending_.size()) {
    ssize_t n = write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      pending_.erase(0, done);
      dirty_ = dirty_ || done > 0;
      FailedLocked("cannot write to " + path_.string(), err);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  pending_.clear();
  dirty_ = true;
  return true;
}

bool SessionWriter::SaveLocked() {
  if (fd_ < 0) {
    if (!due_ || !header_) return true;  // the file starts with the first message
    if (!CreateLocked()) return false;
  }
  const size_t entries = pending_entries_;
  if (!pending_.empty() && !DrainLocked()) return false;
  pending_entries_ = 0;
  if (failing_) SavedLocked(entries);
  return true;
}

void SessionWriter::Record(const Entry& entry) {
  std::string line = WriteJson(EntryToJson(entry)) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  pending_ += line;
  ++pending_entries_;
  if (entry.kind == EntryKind::kMessage) due_ = true;
  SaveLocked();
}

void SessionWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  if (failing_ && !SaveLocked()) return;  // a turn's end tries again too
  if (fd_ < 0 || !dirty_) return;
  if (fsync(fd_) != 0) log::Warn("session file " + path_.string() + ": fsync failed");
  dirty_ = false;
}

void SessionWriter::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  if (failing_) SaveLocked();  // a last try
  if (failing_ && pending_entries_ > 0)
    log::Warn("session file " + path_.string() + ": " + std::to_string(pending_entries_) +
              " entries of this session were never saved");
  if (fd_ < 0) return;
  if (dirty_ && fsync(fd_) != 0) log::Warn("session file " + path_.string() + ": fsync failed");
  close(fd_);  // releases the lock
  fd_ = -1;
}

// --- the store ---

std::optional<fs::path> SessionStore::DefaultRoot(const EnvLookup& env) {
  if (auto home = env("LOUSHO_HOME"); home && !home->empty()) return fs::path(*home) / "sessions";
  if (auto home = env("HOME"); home && !home->empty())
    return fs::path(*home) / ".lousho" / "sessions";
  return std::nullopt;
}

fs::path SessionStore::DirFor(const std::string& cwd) const {
  std::string name = cwd;
  if (!name.empty() && name[0] == '/') name.erase(0, 1);
  for (char& c : name)
    if (c == '/' || c == '\\' || c == ':') c = '-';
  return root_ / ("--" + name + "--");
}

fs::path SessionStore::PathFor(const SessionHeader& header) const {
  std::string ts = IsoTimestamp(header.timestamp_ms);
  for (char& c : ts)
    if (c == ':' || c == '.') c = '-';
  return DirFor(header.cwd) / (ts + "_" + header.id + ".jsonl");
}

namespace {
// Whether a file name is "<timestamp>_<id>.jsonl".
bool NamesSession(const std::string& filename, const std::string& id) {
  const std::string tail = "_" + id + ".jsonl";
  return filename.size() > tail.size() &&
         filename.compare(filename.size() - tail.size(), tail.size(), tail) == 0;
}

std::optional<fs::path> FindIn(const fs::path& dir, const std::string& id) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  for (const auto& e : it)
    if (NamesSession(e.path().filename().string(), id)) return e.path();
  return std::nullopt;
}

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 200) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}
}  // namespace

Result<fs::path> SessionStore::Find(const std::string& id, const std::string& cwd) const {
  if (ValidId(id)) {
    if (auto p = FindIn(DirFor(cwd), id)) return *p;
    std::error_code ec;
    fs::directory_iterator it(root_, ec);
    if (!ec)
      for (const auto& d : it)
        if (auto p = FindIn(d.path(), id)) return *p;
  }
  return MakeError(ErrorCode::kSessionNotFound, "no saved session with id '" + id + "'");
}

Result<SessionSummary> SummarizeSessionFile(const fs::path& path) {
  auto text = ReadDiskFile(path, kMaxSessionFileBytes);
  if (!text.ok()) return text.error();
  SessionSummary s;
  s.path = path;
  size_t nl = text->find('\n');
  auto head = ParseJson(std::string_view(*text).substr(0, nl));
  if (!head.ok()) return FileError(path.string() + ":1: " + head.error().message);
  auto header = SessionHeaderFromJson(*head, path.string() + ":1");
  if (!header.ok()) return header.error();
  s.id = header->id;
  s.cwd = header->cwd;
  s.created_ms = header->timestamp_ms;
  // Only session_info lines are decoded: a list must not parse every message of every file.
  const std::string_view needle = "\"session_info\"";
  for (size_t at = text->find(needle); at != std::string::npos;
       at = text->find(needle, at + needle.size())) {
    size_t begin = text->rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    size_t end = text->find('\n', at);
    auto line = ParseJson(std::string_view(*text).substr(
        begin, end == std::string::npos ? std::string::npos : end - begin));
    if (!line.ok() || StringOr(*line, "type") != "session_info") continue;
    s.title = StringOr(*line, "name");
  }
  std::error_code ec;
  auto mtime = fs::last_write_time(path, ec);
  if (!ec) {
    auto sys = std::chrono::file_clock::to_sys(mtime);
    s.updated_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
  }
  return s;
}

std::vector<SessionSummary> SessionStore::List(const std::string& cwd) const {
  std::vector<fs::path> dirs;
  std::error_code ec;
  if (!cwd.empty()) {
    dirs.push_back(DirFor(cwd));
  } else {
    fs::directory_iterator it(root_, ec);
    if (!ec)
      for (const auto& d : it)
        if (d.is_directory(ec)) dirs.push_back(d.path());
  }
  std::vector<SessionSummary> out;
  for (const auto& dir : dirs) {
    fs::directory_iterator it(dir, ec);
    if (ec) continue;
    for (const auto& f : it) {
      if (f.path().extension() != ".jsonl") continue;
      auto s = SummarizeSessionFile(f.path());
      if (!s.ok()) {
        log::Warn("session list: skipped " + s.error().message);
        continue;
      }
      if (!cwd.empty() && s->cwd != cwd) continue;
      out.push_back(std::move(*s));
    }
  }
  std::sort(out.begin(), out.end(), [](const SessionSummary& a, const SessionSummary& b) {
    if (a.updated_ms != b.updated_ms) return a.updated_ms > b.updated_ms;
    return a.path > b.path;
  });
  return out;
}

}  // namespace lousho::agent

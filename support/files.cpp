// Local files: kind checks before and after opening, chunked reads that stop on cancel.
#include "support/files.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

namespace lousho {
namespace fs = std::filesystem;

Error FileTooLarge(const fs::path& path, uint64_t size, uint64_t max_bytes) {
  return MakeError(ErrorCode::kToolTooLarge, path.string() + " is " + ByteSize(size) +
                                                 ", more than the " + ByteSize(max_bytes) +
                                                 " limit");
}

std::string ByteSize(uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024 && unit < 3) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  // Whole numbers read better without ".0" ("10 MiB", the documented caps).
  if (v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[unit]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  std::string out = buf;
  // "10.0 MiB" for 10 MiB + 1 would hide that it is over a 10 MiB cap.
  if (out.find(".0 ") != std::string::npos) out += " (" + std::to_string(bytes) + " bytes)";
  return out;
}

std::string FileKindName(fs::file_type type) {
  switch (type) {
    case fs::file_type::regular:
      return "a regular file";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::symlink:
      return "a symbolic link";
    default:
      return "a special file";
  }
}

std::string SpecialFileMessage(const fs::path& real, const std::string& shown) {
  std::error_code ec;
  fs::file_type type = fs::symlink_status(real, ec).type();
  if (ec || type == fs::file_type::not_found || type == fs::file_type::regular ||
      type == fs::file_type::directory)
    return {};
  return shown + " is " + FileKindName(type) + ", not a regular file";
}

namespace {

fs::file_type TypeOfMode(mode_t mode) {
  if (S_ISREG(mode)) return fs::file_type::regular;
  if (S_ISDIR(mode)) return fs::file_type::directory;
  if (S_ISFIFO(mode)) return fs::file_type::fifo;
  if (S_ISCHR(mode)) return fs::file_type::character;
  if (S_ISBLK(mode)) return fs::file_type::block;
  if (S_ISSOCK(mode)) return fs::file_type::socket;
  if (S_ISLNK(mode)) return fs::file_type::symlink;
  return fs::file_type::unknown;
}

Error NotRegular(const fs::path& path, mode_t mode) {
  return MakeError(ErrorCode::kToolIo, path.string() + " is " + FileKindName(TypeOfMode(mode)) +
                                           ", not a regular file");
}

Error OpenError(const fs::path& path, int err, const char* verb) {
  if (err == ENOENT) return MakeError(ErrorCode::kToolIo, "file not found: " + path.string());
  if (err == ELOOP)
    return MakeError(ErrorCode::kToolIo, path.string() + " became a symbolic link; not followed");
  // ENXIO: a FIFO without a reader, opened for writing without blocking.
  if (err == ENXIO) return MakeError(ErrorCode::kToolIo, path.string() + " is not a regular file");
  return MakeError(ErrorCode::kToolIo,
                   std::string("cannot ") + verb + " " + path.string() + ": " + std::strerror(err));
}

// The lstat (or stat) check made before opening: refuses special files without opening them.
Status CheckBeforeOpen(const fs::path& path, bool follow_symlink) {
  struct stat st {};
  int rc = follow_symlink ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc != 0) {
    if (errno == ENOENT) return Status::Ok();  // the open reports it (or creates the file)
    return OpenError(path, errno, "open");
  }
  if (S_ISLNK(st.st_mode))
    return MakeError(ErrorCode::kToolIo, path.string() + " became a symbolic link; not followed");
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  return Status::Ok();
}

}  // namespace

Result<DiskFile> DiskFile::Open(const fs::path& path, bool follow_symlink) {
  if (Status pre = CheckBeforeOpen(path, follow_symlink); !pre.ok()) return pre.error();
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (!follow_symlink) flags |= O_NOFOLLOW;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return OpenError(path, errno, "open");
  // Between the lstat and the open the path may have become a FIFO or a device; the descriptor
  // tells what was really opened.
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return OpenError(path, err, "stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotRegular(path, st.st_mode);
  }
  return DiskFile(fd, static_cast<uint64_t>(st.st_size), path.string());
}

DiskFile::DiskFile(DiskFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

DiskFile& DiskFile::operator=(DiskFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
  }
  return *this;
}

DiskFile::~DiskFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<size_t> DiskFile::Read(char* buf, size_t max) {
  size_t got = 0;
  while (got < max) {
    ssize_t n = ::read(fd_, buf + got, max - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      return MakeError(ErrorCode::kToolIo, "cannot read " + path_ + ": " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

Status DiskFile::Seek(uint64_t offset) {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
    int err = errno;
    return MakeError(ErrorCode::kToolIo, "cannot seek in " + path_ + ": " + std::strerror(err));
  }
  return Status::Ok();
}

Result<size_t> DiskFile::ReadChunk(std::string* out, size_t max) {
  size_t old_size = out->size();
  out->resize(old_size + max);
  auto got = Read(out->data() + old_size, max);
  out->resize(old_size + (got.ok() ? *got : 0));
  return got;
}

Status DiskFile::ReadRest(std::string* out, uint64_t max_bytes, const CancelToken& cancel) {
  if (size_ > max_bytes) return FileTooLarge(path_, size_, max_bytes);
  out->reserve(static_cast<size_t>(size_));
  for (;;) {
    if (cancel.cancelled())
      return MakeError(ErrorCode::kCancelled, "reading " + path_ + " was cancelled");
    // One byte past the cap tells a file that grew since the fstat from one that did not.
    uint64_t room = max_bytes + 1 - std::min<uint64_t>(out->size(), max_bytes + 1);
    if (room == 0) return FileTooLarge(path_, out->size(), max_bytes);
    // What fstat saw and one byte more (to see the end), then a one-byte probe for the end;
    // full chunks only for a file that grew or reports no size (procfs): a small file does not
    // zero and fault in a 64 KiB buffer it never fills (start-up reads the spec this way).
    const uint64_t have = out->size();
    const uint64_t want = have < size_ ? size_ - have + 1 : have == size_ ? 1 : kReadChunkBytes;
    auto n = ReadChunk(out, static_cast<size_t>(std::min({room, want, uint64_t{kReadChunkBytes}})));
    if (!n.ok()) return n.error();
    if (*n == 0) break;
  }
  if (out->size() > max_bytes) return FileTooLarge(path_, out->size(), max_bytes);
  return Status::Ok();
}

Result<std::string> ReadDiskFile(const fs::path& path, uint64_t max_bytes,
                                 const CancelToken& cancel, bool follow_symlink) {
  auto file = DiskFile::Open(path, follow_symlink);
  if (!file.ok()) return file.error();
  std::string text;
  Status st = file->ReadRest(&text, max_bytes, cancel);
  if (!st.ok()) return st.error();
  return text;
}

namespace {

// Writes all of `content` at the descriptor's offset (or at `offset` when >= 0). 0, or an errno.
int WriteFully(int fd, const std::string& content, off_t offset = -1) {
  size_t done = 0;
  while (done < content.size()) {
    const char* at = content.data() + done;
    const size_t left = content.size() - done;
    ssize_t n = offset >= 0 ? ::pwrite(fd, at, left, offset + static_cast<off_t>(done))
                            : ::write(fd, at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The file a write replaces: `path` itself, or with follow_symlink the file its chain of
// symlinks names (which need not exist yet).
Result<fs::path> WriteTarget(const fs::path& path, bool follow_symlink) {
  fs::path p = path;
  for (int hops = 0; follow_symlink && hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    fs::path next = fs::read_symlink(p, ec);
    if (ec) return MakeError(ErrorCode::kToolIo, "cannot read the link " + p.string());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  if (follow_symlink)
    return MakeError(ErrorCode::kToolIo, path.string() + ": too many levels of symbolic links");
  return p;
}

// What a replacement needs to know about the file it replaces (nothing when it is new).
struct Original {
  bool exists = false;
  struct stat st {};
};

Error WriteError(const fs::path& path, const Original& original, int err) {
  return MakeError(ErrorCode::kToolIo,
                   "cannot write " + path.string() + ": " + std::strerror(err) +
                       (original.exists ? " (the file is unchanged)" : " (nothing was written)"));
}

// Rewrites an existing file through its own descriptor, for the cases a replacement cannot
// serve (WriteDiskFile). The space is reserved first where the file system can (fallocate), so a
// full disk fails before the first byte changes; the new content is then written over the old
// and the rest cut off.
Status WriteInPlace(const fs::path& path, const std::string& content, const char* why) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0) return OpenError(path, errno, "write");
  Original original{true, {}};
  if (::fstat(fd, &original.st) != 0) {
    int err = errno;
    ::close(fd);
    return WriteError(path, original, err);
  }
  if (!S_ISREG(original.st.st_mode)) {
    ::close(fd);
    return NotRegular(path, original.st.st_mode);
  }
  // A process limited in file size (RLIMIT_FSIZE) would fail halfway; fallocate ignores it.
  struct rlimit fsize {};
  if (::getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
      content.size() > fsize.rlim_cur) {
    ::close(fd);
    return WriteError(path, original, EFBIG);
  }
#ifdef __linux__
  if (!content.empty() &&
      ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(content.size())) != 0 &&
      errno != EOPNOTSUPP && errno != ENOSYS) {
    int err = errno;
    ::close(fd);
    return WriteError(path, original, err);
  }
#endif
  int err = WriteFully(fd, content, 0);
  if (err == 0 && ::ftruncate(fd, static_cast<off_t>(content.size())) != 0) err = errno;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0) return Status::Ok();
  return MakeError(ErrorCode::kToolIo, "cannot write " + path.string() + ": " + std::strerror(err) +
                                           "; it was rewritten in place (" + why +
                                           "), so it may now be incomplete");
}

// A new file beside `path` that nobody else can have open (O_EXCL): a name taken is retried.
// Mode 0600 when it replaces a file (the original's mode follows), else 0666 less the umask,
// as a plain create would get.
int CreateTemp(const fs::path& path, bool replaces, std::string* tmp) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  // Short enough for a name of NAME_MAX (255) bytes to get a temporary name too.
  std::string base = path.filename().string();
  if (base.size() > 200) base.resize(200);
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = (dir / ("." + base + ".lousho-" + std::to_string(::getpid()) + "-" +
                   std::to_string(counter.fetch_add(1))))
               .string();
    int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    replaces ? 0600 : 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Gives the new file the original's owner, group and mode. 0, or an errno (EPERM: this user
// cannot give a file that owner or group).
int KeepOwnerAndMode(int fd, const Original& original) {
  if (!original.exists) return 0;
  struct stat now {};
  if (::fstat(fd, &now) != 0) return errno;
  if ((now.st_uid != original.st.st_uid || now.st_gid != original.st.st_gid) &&
      ::fchown(fd, original.st.st_uid, original.st.st_gid) != 0)
    return errno;
  // After the chown, which clears set-user-ID and set-group-ID bits.
  if (::fchmod(fd, original.st.st_mode & 07777) != 0) return errno;
  return 0;
}

// Makes the rename itself survive a crash; a folder that cannot be synced is not an error.
void SyncFolder(const fs::path& path) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);  // best effort: the data itself was synced before the rename
  ::close(fd);
}

}  // namespace

namespace {

// What is at `file` now: nothing, or a regular file (anything else is refused).
Result<Original> LookAtOriginal(const fs::path& file) {
  Original original;
  if (::lstat(file.c_str(), &original.st) != 0) {
    if (errno != ENOENT) return OpenError(file, errno, "open");
    return original;
  }
  original.exists = true;
  if (S_ISLNK(original.st.st_mode))
    return MakeError(ErrorCode::kToolIo, file.string() + " became a symbolic link; not followed");
  if (!S_ISREG(original.st.st_mode)) return NotRegular(file, original.st.st_mode);
  return original;
}

// Syncs and closes the temporary file `fd` (also when `err`, an earlier step's errno, is set) and
// renames it over `file`. 0, or an errno with *renaming telling whether the rename failed.
int CloseAndRename(int fd, int err, const std::string& tmp, const fs::path& file, bool* renaming) {
  *renaming = false;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return err;
  *renaming = true;
  return ::rename(tmp.c_str(), file.c_str()) == 0 ? 0 : errno;
}

}  // namespace

Status WriteDiskFile(const fs::path& path, const std::string& content, bool follow_symlink) {
  auto target = WriteTarget(path, follow_symlink);
  if (!target.ok()) return target.error();
  const fs::path& file = *target;
  auto looked = LookAtOriginal(file);
  if (!looked.ok()) return looked.error();
  const Original& original = *looked;
  // Other names of the same file must see the new content too.
  if (original.exists && original.st.st_nlink > 1)
    return WriteInPlace(file, content, "it has other hard links");
  std::string tmp;
  int fd = CreateTemp(file, original.exists, &tmp);
  if (fd < 0) {
    int err = errno;
    // A file that may be written in a folder that may not: only in place.
    if (original.exists && (err == EACCES || err == EPERM))
      return WriteInPlace(file, content, "its folder is not writable");
    return WriteError(file, original, err);
  }
  // Not cancellable on purpose: content is capped, and the original stays whole until the
  // rename anyway.
  int err = WriteFully(fd, content);
  // After the write, which clears the set-ID bits of a file written without CAP_FSETID.
  if (err == 0) err = KeepOwnerAndMode(fd, original);
  if (err == EPERM) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return WriteInPlace(file, content, "its owner could not be kept otherwise");
  }
  bool renaming = false;
  if (err = CloseAndRename(fd, err, tmp, file, &renaming); err != 0) {
    ::unlink(tmp.c_str());
    // A file mounted on its own (a container's bind mount) cannot be renamed over.
    if (renaming && original.exists && (err == EBUSY || err == EXDEV))
      return WriteInPlace(file, content, "it is a mount point");
    return WriteError(file, original, err);
  }
  SyncFolder(file);
  return Status::Ok();
}

Status WritePrivateFile(const fs::path& path, const std::string& content) {
  auto fail = [&](const std::string& what, int err) {
    return MakeError(ErrorCode::kToolIo, what + ": " + std::strerror(err));
  };
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      return MakeError(ErrorCode::kToolIo, "cannot create " + dir.string() + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  std::string tmp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  // mkstemp creates the file 0600 with O_EXCL: nobody else can have it open.
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fail("cannot create a file in " + dir.string(), errno);
  if (int err = WriteFully(fd, content); err != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail("cannot write " + tmp, err);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail("cannot write " + tmp, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail("cannot replace " + path.string(), err);
  }
  return Status::Ok();
}

std::filesystem::path RepositoryRoot(const std::filesystem::path& dir) {
  for (std::filesystem::path d = dir; !d.empty(); d = d.parent_path()) {
    std::error_code ec;
    if (std::filesystem::exists(d / ".git", ec)) return d;
    if (d == d.parent_path()) break;
  }
  return {};
}

}  // namespace lousho

// Local files: kind checks before and after opening, chunked reads that stop on cancel.
#include "support/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

Status WriteDiskFile(const fs::path& path, const std::string& content) {
  if (Status pre = CheckBeforeOpen(path, false); !pre.ok()) return pre;
  // No O_TRUNC: a path swapped for something else after the lstat must not be truncated before
  // the fstat below has seen what it is. O_NONBLOCK makes a FIFO fail (ENXIO) instead of
  // waiting for a reader.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
                  0666);
  if (fd < 0) return OpenError(path, errno, "write");
  auto fail = [&](int err) {
    ::close(fd);
    return MakeError(ErrorCode::kToolIo,
                     "cannot write " + path.string() + ": " + std::strerror(err));
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(errno);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotRegular(path, st.st_mode);
  }
  if (::ftruncate(fd, 0) != 0) return fail(errno);
  // Not cancellable on purpose: content is capped, and stopping halfway would leave a
  // truncated file behind.
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    return MakeError(ErrorCode::kToolIo,
                     "cannot write " + path.string() + ": " + std::strerror(err));
  }
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
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail("cannot write " + tmp, err);
    }
    done += static_cast<size_t>(n);
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

}  // namespace lousho

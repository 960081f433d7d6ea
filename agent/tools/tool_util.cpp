// Helpers shared by the built-in tools.
#include "agent/tools/tool_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>

namespace lousho::agent::tools {

namespace fs = std::filesystem;

Args::Args(const Json::Value& args) : args_(args) {
  if (!args_.isObject() && !args_.isNull()) Fail("arguments: expected an object");
}

std::optional<std::string> Args::String(const char* key, bool required) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) {
    if (required) Fail(std::string(key) + ": required");
    return std::nullopt;
  }
  if (v->isString()) return AsString(*v);
  if (v->isNumeric() || v->isBool()) return WriteJson(*v);  // 42, 1.5, true as text
  Fail(std::string(key) + ": expected string");
  return std::nullopt;
}

std::optional<long long> Args::Int(const char* key, long long min_value) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return std::nullopt;
  long long n = 0;
  const std::string s = StringOr(args_, key);
  if (auto whole = AsInt64(*v)) {  // integers, and whole doubles within int64
    n = *whole;
  } else if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    n = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') {
      Fail(std::string(key) + ": expected integer");
      return std::nullopt;
    }
  } else {
    Fail(std::string(key) + ": expected integer");
    return std::nullopt;
  }
  if (n < min_value) {
    Fail(std::string(key) + ": must be at least " + std::to_string(min_value));
    return std::nullopt;
  }
  return n;
}

std::optional<double> Args::Number(const char* key, double min_value) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return std::nullopt;
  double d = 0;
  const std::string s = StringOr(args_, key);
  if (auto number = AsDouble(*v)) {
    d = *number;
  } else if (!s.empty()) {
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (*end != '\0') {
      Fail(std::string(key) + ": expected number");
      return std::nullopt;
    }
  } else {
    Fail(std::string(key) + ": expected number");
    return std::nullopt;
  }
  if (!(d >= min_value)) {
    Fail(std::string(key) + ": must be at least " + std::to_string(min_value));
    return std::nullopt;
  }
  return d;
}

bool Args::Bool(const char* key, bool fallback) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return fallback;
  if (auto b = AsBool(*v)) return *b;
  const std::string s = StringOr(args_, key);
  if (s == "true") return true;
  if (s == "false") return false;
  Fail(std::string(key) + ": expected boolean");
  return fallback;
}

const Json::Value* Args::Array(const char* key, bool required) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) {
    if (required) Fail(std::string(key) + ": required");
    return nullptr;
  }
  if (!v->isArray()) {
    Fail(std::string(key) + ": expected array");
    return nullptr;
  }
  return v;
}

Json::Value ObjectSchema(std::initializer_list<std::pair<const char*, Json::Value>> properties,
                         std::initializer_list<const char*> required) {
  Json::Value s(Json::objectValue);
  s["type"] = "object";
  s["properties"] = Json::Value(Json::objectValue);
  for (const auto& [name, schema] : properties) s["properties"][name] = schema;
  s["required"] = Json::Value(Json::arrayValue);
  for (const char* r : required) s["required"].append(r);
  s["additionalProperties"] = false;
  return s;
}

Json::Value PropSchema(const char* type, const char* description) {
  Json::Value p(Json::objectValue);
  p["type"] = type;
  p["description"] = description;
  return p;
}

size_t Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  size_t n = max_bytes;
  // Step back over continuation bytes so the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

size_t Utf8SuffixStart(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return 0;
  size_t start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
  return start;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

bool LooksBinary(std::string_view head) {
  return head.substr(0, 8192).find('\0') != std::string_view::npos;
}

std::string Shorten(std::string_view s, size_t max_bytes) {
  size_t nl = s.find('\n');
  bool cut = nl != std::string_view::npos;
  std::string_view first = s.substr(0, nl);
  if (first.size() > max_bytes) {
    first = first.substr(0, Utf8Prefix(first, max_bytes));
    cut = true;
  }
  std::string out(first);
  if (cut) out += "…";
  return out;
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

Error TooLarge(const fs::path& path, uint64_t size, uint64_t max_bytes) {
  return MakeError(ErrorCode::kToolTooLarge, path.string() + " is " + ByteSize(size) +
                                                 ", more than the " + ByteSize(max_bytes) +
                                                 " limit");
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
  if (size_ > max_bytes) return TooLarge(path_, size_, max_bytes);
  out->reserve(static_cast<size_t>(size_));
  for (;;) {
    if (cancel.cancelled())
      return MakeError(ErrorCode::kCancelled, "reading " + path_ + " was cancelled");
    // One byte past the cap tells a file that grew since the fstat from one that did not.
    uint64_t room = max_bytes + 1 - std::min<uint64_t>(out->size(), max_bytes + 1);
    if (room == 0) return TooLarge(path_, out->size(), max_bytes);
    auto n = ReadChunk(out, static_cast<size_t>(std::min<uint64_t>(room, kReadChunkBytes)));
    if (!n.ok()) return n.error();
    if (*n == 0) break;
  }
  if (out->size() > max_bytes) return TooLarge(path_, out->size(), max_bytes);
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

Result<std::string> ReadTextForTool(ToolContext& ctx, const ResolvedPath& path,
                                    uint64_t max_bytes) {
  if (ctx.services.files && ctx.services.files->CanReadTextFile()) {
    // line/limit 0: the whole buffer; slicing happens here so totals are known.
    auto text =
        ctx.services.files->ReadTextFile(ctx.session_id, path.abs.string(), 0, 0, ctx.cancel);
    if (text.ok() && text->size() > max_bytes) return TooLarge(path.abs, text->size(), max_bytes);
    return text;
  }
  return ReadDiskFile(path.real, max_bytes, ctx.cancel, false);
}

Status WriteTextForTool(ToolContext& ctx, const ResolvedPath& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.real.parent_path(), ec);
  if (ec)
    return MakeError(
        ErrorCode::kToolIo,
        "cannot create directory " + path.real.parent_path().string() + ": " + ec.message());
  if (ctx.services.files && ctx.services.files->CanWriteTextFile())
    return ctx.services.files->WriteTextFile(ctx.session_id, path.abs.string(), text, ctx.cancel);
  return WriteDiskFile(path.real, text);
}

std::string PathSubject(const Json::Value& args) {
  std::string p = StringOr(args, "path");
  if (!p.empty() && p[0] == '@') p.erase(0, 1);
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  return p;
}

std::vector<ToolLocation> FolderTool::Locations(const Json::Value& args,
                                                const ToolContext& ctx) const {
  std::string path = StringOr(args, "path");
  return {ToolLocation{AbsolutePath(ctx.cwd, path.empty() ? "." : path).string(), 0}};
}

std::string SearchTitle(const std::string& verb, const Json::Value& args) {
  std::string t = verb + " " + Shorten(StringOr(args, "pattern"), 60);
  std::string path = PathSubject(args);
  if (!path.empty()) t += " in " + path;
  return t;
}

}  // namespace lousho::agent::tools

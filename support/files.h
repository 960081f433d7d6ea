// Reading and writing local files safely: regular files only, bounded, cancellable. The one file
// reader of the program (tools, specs, .gitignore files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "support/cancel.h"
#include "support/status.h"

namespace lousho {

// Local file access. Only regular files are read or written: a FIFO blocks whoever opens or
// reads it, a device such as /dev/zero never ends, and a socket cannot be opened at all. The
// kind is checked with lstat before opening and again with fstat on the open descriptor (the
// path may have been swapped in between); opening uses O_NONBLOCK, so even a swapped-in FIFO
// cannot block the open. Reads go in chunks of kReadChunkBytes and stop with LOUSHO_CANCELLED
// between chunks once the token fires.

// The most that edit loads, that write writes, and the largest file write replaces: files this
// big are not something to rewrite through a model's tool call.
inline constexpr uint64_t kMaxTextFileBytes = 10ULL * 1024 * 1024;
inline constexpr size_t kReadChunkBytes = 64UL * 1024;

// "512 bytes", "64 KiB", "1.5 MiB", "2 GiB": sizes for messages.
std::string ByteSize(uint64_t bytes);

// The folder holding `.git` (a folder or a file) at or above `dir`; empty when none.
std::filesystem::path RepositoryRoot(const std::filesystem::path& dir);

// "a FIFO (named pipe)", "a character device", ... for anything that is not a regular file.
std::string FileKindName(std::filesystem::file_type type);
// "<shown> is a FIFO (named pipe), not a regular file" when the path exists (looked at with
// lstat) and is neither a regular file nor a directory; "" otherwise.
std::string SpecialFileMessage(const std::filesystem::path& real, const std::string& shown);

// A regular file open for reading; closed on destruction. Move-only, not thread-safe.
class DiskFile {
 public:
  // Refuses anything but a regular file (see above). The final component must not be a symlink
  // unless follow_symlink: tool paths are already resolved, so a symlink there is a swap.
  static Result<DiskFile> Open(const std::filesystem::path& path, bool follow_symlink = false);
  DiskFile(DiskFile&& other) noexcept;
  DiskFile& operator=(DiskFile&& other) noexcept;
  DiskFile(const DiskFile&) = delete;
  DiskFile& operator=(const DiskFile&) = delete;
  ~DiskFile();

  // The size fstat reported at open.
  uint64_t size() const { return size_; }
  // Reads up to `max` bytes from the current position into buf, stopping early only at the
  // end; returns how many were read (0 at the end).
  Result<size_t> Read(char* buf, size_t max);
  // Moves the position to `offset` bytes from the start.
  Status Seek(uint64_t offset);
  // The same, appended to `out`.
  Result<size_t> ReadChunk(std::string* out, size_t max);
  // Appends everything up to the end to `out`, failing when `out` would exceed max_bytes
  // (kToolTooLarge) or when cancel fires (LOUSHO_CANCELLED).
  Status ReadRest(std::string* out, uint64_t max_bytes, const CancelToken& cancel);

 private:
  DiskFile(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;  // for messages
};

// "<path> is 12 MiB, more than the 10 MiB limit" (kToolTooLarge).
Error FileTooLarge(const std::filesystem::path& path, uint64_t size, uint64_t max_bytes);

// The whole of a regular file of at most max_bytes (larger: kToolTooLarge, without
// reading it), read in chunks that check cancel.
Result<std::string> ReadDiskFile(const std::filesystem::path& path,
                                 uint64_t max_bytes = kMaxTextFileBytes,
                                 const CancelToken& cancel = {}, bool follow_symlink = true);
// Creates or replaces a regular file (never a FIFO, device or socket). A failure, a full disk
// included, leaves the original byte for byte as it was: the content goes to a temporary file
// beside it (".NAME.lousho-PID-N", created with O_EXCL), which is given the original's owner,
// group and mode, synced, and renamed over it; on failure the temporary file is removed (only a
// kill in the middle leaves it behind). A new file gets 0666 less the umask, as a plain create.
// The final component must not be a symlink unless follow_symlink (tool paths are already
// resolved, so a symlink there is a swap); with it, the file the link names is replaced and the
// link stays. Rewritten in place instead, with the space reserved first where the file system
// allows (fallocate), so a full disk still fails before a byte changes, but without the
// all-or-nothing guarantee when the disk fails otherwise: a file with several hard links (all
// its names keep showing the same, new content), a file in a folder this user may not write, a
// file whose owner or group this user could not give a new file, and a file that is a mount
// point of its own. Extended attributes and ACLs
// of a replaced file are not carried over.
Status WriteDiskFile(const std::filesystem::path& path, const std::string& content,
                     bool follow_symlink = false);

// Replaces `path` with `content`, readable by its owner only (0600) from the first byte: the
// content goes to a new file created 0600 beside it, which is then renamed over `path`. Missing
// parent folders are created 0700. For secrets (stored credentials).
Status WritePrivateFile(const std::filesystem::path& path, const std::string& content);

}  // namespace lousho

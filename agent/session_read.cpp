// Session files, reading: the file is read a chunk at a time and each line decoded as it comes
// (the whole text is never held), with the repairs and errors docs/session-format.md gives (zeros
// at the end, a torn last line, a line or a file over its limit).
#include <algorithm>
#include <cstring>
#include <functional>
#include <new>
#include <utility>

#include "agent/session_store.h"
#include "support/files.h"
#include "support/json_util.h"

namespace lousho::agent {

namespace {
Error ReadFileError(const std::string& message) {
  return MakeError(ErrorCode::kSessionFile, message);
}

// Fills a buffer with the next bytes of the file (or text) in order: how many (0 at the end).
using ReadBytes = std::function<Result<size_t>(char* buf, size_t max)>;

// One line of a session file as it is read: valid during the call it is handed to.
struct SessionLine {
  std::string_view text;
  int number = 0;     // 1-based
  uint64_t next = 0;  // the offset after it (and its newline)
  bool last = false;  // no newline follows it: the end of the file
  bool blank = false;
};

// Splits bytes read a chunk at a time into lines, handing each one over as soon as it is whole.
// A line inside a chunk is handed over where it lies; one that runs across chunks is gathered in
// a buffer of its own, which grows to the longest such line (at most max_line bytes: a longer
// line is counted to its end, not held, and is an error naming its length). Zero bytes (NUL)
// that end the input are not part of any line: they are counted (zero_tail) and the last line
// ends before them; zeros with more bytes after them belong to their line.
class LineSplitter {
 public:
  using OnLine = std::function<Status(const SessionLine&)>;
  LineSplitter(std::string name, uint64_t max_line) : name_(std::move(name)), max_line_(max_line) {}

  // Reads everything, handing each line to on_line (which may stop the read with an error); the
  // last line (without a newline) is handed over after before_last has been called.
  Status Run(const ReadBytes& read, size_t chunk_bytes, const std::function<void()>& before_last,
             const OnLine& on_line);
  uint64_t zero_tail() const { return zeros_; }
  // The offset where the zeros that end the input begin.
  uint64_t end_of_text() const { return start_ + length_; }

 private:
  Status Chunk(const char* data, size_t n, const OnLine& on_line);
  // Adds bytes to the line being gathered; `whole`: its newline follows them.
  void Gather(const char* data, size_t n, bool whole);
  Status Emit(std::string_view text, bool last, const OnLine& on_line);
  Status TooLong() const;

  static constexpr size_t kKeptBuffer = 1 << 20;
  std::string name_;
  uint64_t max_line_;
  std::string gathered_;  // the line so far when it runs across chunks
  uint64_t length_ = 0;   // its length so far (zeros pending excluded), held or not
  uint64_t zeros_ = 0;    // zero bytes that end what was read so far, not yet in the line
  uint64_t start_ = 0;    // the offset where the line begins
  int number_ = 0;
};

Status LineSplitter::TooLong() const {
  return ReadFileError(name_ + ":" + std::to_string(number_ + 1) + ": a line of " +
                       ByteSize(length_) + ", more than the " + ByteSize(max_line_) +
                       " a session file line may hold; lousho writes none that long, so the "
                       "file was changed by something else: it is left as it is");
}

void LineSplitter::Gather(const char* data, size_t n, bool whole) {
  size_t keep = n;  // bytes up to the last that is not a zero (all of them before a newline)
  if (!whole)
    while (keep > 0 && data[keep - 1] == '\0') --keep;
  if (keep == 0 && !whole) {
    zeros_ += n;
    return;
  }
  // Zeros followed by more bytes are the line's own.
  const uint64_t grown = length_ + zeros_ + keep;
  if (grown <= max_line_) {
    gathered_.append(static_cast<size_t>(zeros_), '\0');
    gathered_.append(data, keep);
  } else {
    std::string().swap(gathered_);  // too long: counted to its end, never held
  }
  length_ = grown;
  zeros_ = n - keep;
}

Status LineSplitter::Emit(std::string_view text, bool last, const OnLine& on_line) {
  if (length_ > max_line_) return TooLong();
  SessionLine l;
  l.text = text;
  l.number = ++number_;
  l.last = last;
  l.next = start_ + length_ + (last ? 0 : 1);
  l.blank = text.find_first_not_of(" \t\r") == std::string_view::npos;
  Status st = on_line(l);
  start_ = l.next;
  length_ = 0;
  if (gathered_.capacity() > kKeptBuffer)
    std::string().swap(gathered_);  // a long line's buffer goes with it
  else
    gathered_.clear();
  return st;
}

Status LineSplitter::Chunk(const char* data, size_t n, const OnLine& on_line) {
  size_t pos = 0;
  while (pos < n) {
    const void* nl = std::memchr(data + pos, '\n', n - pos);
    if (nl == nullptr) {
      Gather(data + pos, n - pos, false);
      return Status::Ok();
    }
    const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - data);
    Status st;
    if (length_ == 0 && zeros_ == 0) {
      length_ = end - pos;  // the whole line lies in this chunk: read where it is
      st = Emit(std::string_view(data + pos, end - pos), false, on_line);
    } else {
      Gather(data + pos, end - pos, true);
      st = Emit(gathered_, false, on_line);
    }
    if (!st.ok()) return st;
    pos = end + 1;
  }
  return Status::Ok();
}

Status LineSplitter::Run(const ReadBytes& read, size_t chunk_bytes,
                         const std::function<void()>& before_last, const OnLine& on_line) {
  std::string buf(chunk_bytes, '\0');
  for (;;) {
    auto n = read(buf.data(), buf.size());
    if (!n.ok()) return n.error();
    if (*n == 0) break;
    if (Status st = Chunk(buf.data(), *n, on_line); !st.ok()) return st;
  }
  before_last();
  if (length_ == 0) return Status::Ok();  // the text ended with a newline (then zeros, perhaps)
  return Emit(gathered_, true, on_line);
}

// Builds a session file's contents from its lines: the header (after blank lines), then one entry
// per line that is not blank.
class SessionBuilder {
 public:
  SessionBuilder(const std::string& name, SessionFileContents* out) : name_(name), out_(out) {}

  Status Line(const SessionLine& l);
  Status Finish() const {
    if (!header_seen_) return ReadFileError(name_ + ": no session header");
    return Status::Ok();
  }

 private:
  const std::string& Where(int number) {
    where_.assign(name_).append(":").append(std::to_string(number));
    return where_;
  }
  Status Header(const SessionLine& l);
  Status Decode(const SessionLine& l, Entry* e);

  const std::string& name_;
  SessionFileContents* out_;
  std::string where_;  // "<name>:<line>", reused
  bool header_seen_ = false;
};

Status SessionBuilder::Header(const SessionLine& l) {
  const std::string& where = Where(l.number);
  auto json = ParseJson(l.text);
  if (!json.ok()) {
    if (l.last) return ReadFileError(name_ + ": no session header");
    return ReadFileError(where + ": " + json.error().message);
  }
  auto header = SessionHeaderFromJson(*json, where);
  if (!header.ok()) return header.error();
  out_->header = std::move(*header);
  header_seen_ = true;
  out_->valid_bytes = l.next;
  return Status::Ok();
}

// Reads an entry line of an older format version, brought to the current one. Version 1 is the
// current version; a later version adds its step here (on the line's JSON), so old files keep
// loading.
Status UpgradeEntry(int version, std::string_view line, const std::string& where, Entry* out) {
  auto json = ParseJson(line);
  if (!json.ok()) return MakeError(ErrorCode::kHistoryInvalid, where + ": " + json.error().message);
  (void)version;
  return DecodeEntryLine(WriteJson(*json), where, out);
}

Status SessionBuilder::Decode(const SessionLine& l, Entry* e) {
  const std::string& where = Where(l.number);
  const int version = out_->header.version;
  if (version == kSessionFormatVersion) return DecodeEntryLine(l.text, where, e);
  return UpgradeEntry(version, l.text, where, e);
}

Status SessionBuilder::Line(const SessionLine& l) {
  if (!header_seen_) return l.blank ? Status::Ok() : Header(l);
  if (l.blank) {
    // A whole line ends in a newline; a blank last line without one counts for nothing.
    if (!l.last) out_->valid_bytes = l.next;
    return Status::Ok();
  }
  std::vector<Entry>& entries = out_->entries;
  entries.emplace_back();  // decoded in place
  Status read = Decode(l, &entries.back());
  if (read.ok()) {
    // A last line without a newline that parses is kept; the next append starts a new line.
    out_->valid_bytes = l.next;
    return read;
  }
  entries.pop_back();
  const bool json = ParseJson(l.text).ok();
  if (!l.last || json) {
    if (json) return read.error();
    return ReadFileError(read.error().message);
  }
  // A crash cut the last write short: everything before it stands.
  out_->warnings.push_back(where_ + ": skipped a torn last line (" + std::to_string(l.text.size()) +
                           " bytes)");
  return Status::Ok();
}

// Reads a session file's bytes through `read`. `lines` is how many lines it has at most (the
// entry vector is sized once: growing it would hold two copies of it for a moment).
Result<SessionFileContents> ReadSessionBytes(const ReadBytes& read, const std::string& name,
                                             uint64_t max_line, size_t chunk_bytes, size_t lines) {
  SessionFileContents out;
  try {
    out.entries.reserve(lines);
  } catch (const std::bad_alloc&) {
    // Address space only (pages are not touched until entries land there); without it the
    // vector grows as entries come.
  }
  LineSplitter splitter(name, max_line);
  SessionBuilder builder(name, &out);
  auto zeros = [&] {
    // Where a crash left the file longer than what had reached the disk (the file system extends
    // it with zeros). No line lousho writes holds one.
    if (splitter.zero_tail() == 0) return;
    out.warnings.push_back(name + ": skipped " + ByteSize(splitter.zero_tail()) +
                           " of zero bytes (NUL) at its end, after byte " +
                           std::to_string(splitter.end_of_text()) +
                           ": a crash left the file longer than what was written; they hold "
                           "nothing of the session");
  };
  Status st = splitter.Run(read, std::max<size_t>(chunk_bytes, 1), zeros,
                           [&](const SessionLine& l) { return builder.Line(l); });
  if (st.ok()) st = builder.Finish();
  if (!st.ok()) return st.error();
  return out;  // room reserved for lines that held no entry was never touched: no memory
}

// Counts the lines that could hold an entry (no entry line is shorter than kMinEntryLine bytes:
// `{"type":"label","id":""}` has 24), over text handed over in pieces: a bound for the entry
// vector that blank lines and short junk do not inflate.
class EntryLineCounter {
 public:
  static constexpr uint64_t kMinEntryLine = 16;
  void Add(std::string_view text) {
    const char* p = text.data();
    const char* end = p + text.size();
    while (const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p))) {
      const char* at = static_cast<const char*>(nl);
      run_ += static_cast<uint64_t>(at - p);
      if (run_ >= kMinEntryLine) ++lines_;
      run_ = 0;
      p = at + 1;
    }
    run_ += static_cast<uint64_t>(end - p);
  }
  size_t lines() const { return lines_ + (run_ >= kMinEntryLine ? 1 : 0); }

 private:
  size_t lines_ = 0;
  uint64_t run_ = 0;  // the length of the line not ended yet
};

// The number of lines of a file that could hold an entry, read once through (the bytes are in
// the page cache for the real read that follows). 0 when it cannot be read (that read says why).
size_t CountFileLines(const std::filesystem::path& path, size_t chunk_bytes) {
  auto file = DiskFile::Open(path, true);
  if (!file.ok()) return 0;
  std::string buf(chunk_bytes, '\0');
  EntryLineCounter counter;
  uint64_t total = 0;
  for (;;) {
    auto got = file->Read(buf.data(), buf.size());
    if (!got.ok() || *got == 0) break;
    counter.Add(std::string_view(buf.data(), *got));
    total += *got;
    if (total > kMaxSessionFileBytes) break;
  }
  return counter.lines();
}

size_t CountTextLines(std::string_view text) {
  EntryLineCounter counter;
  counter.Add(text);
  return counter.lines();
}
}  // namespace

Result<SessionFileContents> ParseSessionText(std::string_view text, const std::string& name,
                                             uint64_t max_line, size_t chunk_bytes) {
  size_t at = 0;
  ReadBytes read = [&](char* buf, size_t max) -> Result<size_t> {
    const size_t n = std::min(max, text.size() - at);
    std::memcpy(buf, text.data() + at, n);
    at += n;
    return n;
  };
  return ReadSessionBytes(read, name, max_line, chunk_bytes, CountTextLines(text));
}

Result<SessionFileContents> ReadSessionFile(const std::filesystem::path& path, size_t chunk_bytes) {
  auto file = DiskFile::Open(path, true);
  if (!file.ok()) return ReadFileError(path.string() + ": " + file.error().message);
  auto too_large = [&](uint64_t size) {
    return ReadFileError("session file " + FileTooLarge(path, size, kMaxSessionFileBytes).message +
                         " of a session file that lousho reads back; it is left as it is: start "
                         "a new session");
  };
  if (file->size() > kMaxSessionFileBytes) return too_large(file->size());
  uint64_t total = 0;
  ReadBytes read = [&](char* buf, size_t max) -> Result<size_t> {
    auto n = file->Read(buf, max);
    if (!n.ok()) return ReadFileError(path.string() + ": " + n.error().message);
    total += *n;
    if (total > kMaxSessionFileBytes) return too_large(total);  // it grew since it was opened
    return n;
  };
  return ReadSessionBytes(read, path.string(), kMaxSessionLineBytes, chunk_bytes,
                          CountFileLines(path, chunk_bytes));
}

}  // namespace lousho::agent

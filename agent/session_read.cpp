// Session files, reading: the file is read a chunk at a time and each line decoded as it comes
// (the whole text is never held), with the repairs and errors docs/session-format.md gives (zeros
// at the end, a torn last line, a line or a file over its limit). A large file is read as two
// halves, cut at a line's end, each on its own thread, into one entry vector.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <thread>
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
  // `start`: the offset of the first byte read; `lines_before`: how many lines come before it.
  LineSplitter(std::string name, uint64_t max_line, uint64_t start = 0, int lines_before = 0)
      : name_(std::move(name)), max_line_(max_line), start_(start), number_(lines_before) {}

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

// Where decoded entries go: appended to a vector, or into a fixed run of slots (a half of a file
// read on two threads), which can run out (the file changed since its lines were counted).
class EntrySink {
 public:
  explicit EntrySink(std::vector<Entry>* grow) : grow_(grow) {}
  EntrySink(Entry* slots, size_t room) : slots_(slots), room_(room) {}

  // The entry to decode the next line into; nullptr when the slots are all used.
  Entry* Next() {
    if (grow_ != nullptr) return &grow_->emplace_back();
    return used_ < room_ ? &slots_[used_++] : nullptr;
  }
  // Gives back the entry Next returned last (its line did not decode).
  void DropLast() {
    if (grow_ != nullptr)
      grow_->pop_back();
    else
      slots_[--used_] = Entry();
  }
  size_t used() const { return used_; }

 private:
  std::vector<Entry>* grow_ = nullptr;
  Entry* slots_ = nullptr;
  size_t room_ = 0;
  size_t used_ = 0;
};

// Builds a session file's contents from its lines: the header (after blank lines), then one entry
// per line that is not blank.
class SessionBuilder {
 public:
  SessionBuilder(const std::string& name, SessionFileContents* out, EntrySink* sink)
      : name_(name), out_(out), sink_(sink) {}

  Status Line(const SessionLine& l);
  Status Finish() const {
    if (!header_seen_) return ReadFileError(name_ + ": no session header");
    return Status::Ok();
  }
  // For the second half of a file: its lines are entries of a file of the current version (the
  // first half's header is checked to be one when the halves are joined).
  void AssumeHeader() { header_seen_ = true; }
  bool header_seen() const { return header_seen_; }
  // The sink ran out of room (then Line fails).
  bool out_of_room() const { return out_of_room_; }

 private:
  const std::string& Where(int number) {
    where_.assign(name_).append(":").append(std::to_string(number));
    return where_;
  }
  Status Header(const SessionLine& l);
  Status Decode(const SessionLine& l, Entry* e);

  const std::string& name_;
  SessionFileContents* out_;
  EntrySink* sink_;
  std::string where_;  // "<name>:<line>", reused
  bool header_seen_ = false;
  bool out_of_room_ = false;
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
  Entry* entry = sink_->Next();  // decoded in place
  if (entry == nullptr) {
    out_of_room_ = true;
    return ReadFileError(name_ + ": more entries than lines counted (the file changed)");
  }
  Status read = Decode(l, entry);
  if (read.ok()) {
    // A last line without a newline that parses is kept; the next append starts a new line.
    out_->valid_bytes = l.next;
    return read;
  }
  sink_->DropLast();
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
  EntrySink sink(&out.entries);
  SessionBuilder builder(name, &out, &sink);
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
      ++newlines_;
      run_ = 0;
      p = at + 1;
    }
    run_ += static_cast<uint64_t>(end - p);
  }
  size_t lines() const { return lines_ + (run_ >= kMinEntryLine ? 1 : 0); }
  uint64_t newlines() const { return newlines_; }

 private:
  size_t lines_ = 0;
  uint64_t newlines_ = 0;
  uint64_t run_ = 0;  // the length of the line not ended yet
};

// A file's lines counted once through (the bytes are in the page cache for the real read that
// follows), and where it is cut in two to be read on two threads: after the first newline at or
// past `middle` (0: no cut).
struct FileLines {
  size_t entries = 0;  // lines that could hold an entry (a bound for the entry vector)
  uint64_t split = 0;  // the offset where the second half begins; 0: not cut
  uint64_t lines_before_split = 0;
  size_t entries_before_split = 0;
};

// Counts a file's lines (see FileLines); what cannot be read counts as nothing (the read that
// follows says why). middle = 0: no cut.
FileLines CountFileLines(const std::filesystem::path& path, size_t chunk_bytes, uint64_t middle) {
  FileLines out;
  auto file = DiskFile::Open(path, true);
  if (!file.ok()) return out;
  std::string buf(chunk_bytes, '\0');
  EntryLineCounter first;
  EntryLineCounter second;
  uint64_t total = 0;
  for (;;) {
    auto got = file->Read(buf.data(), buf.size());
    if (!got.ok() || *got == 0) break;
    std::string_view text(buf.data(), *got);
    if (middle > 0 && out.split == 0 && total + *got > middle) {
      const size_t nl = text.find('\n', middle > total ? middle - total : 0);
      if (nl != std::string_view::npos) {
        first.Add(text.substr(0, nl + 1));
        out.split = total + nl + 1;
        text.remove_prefix(nl + 1);
      }
    }
    (out.split == 0 ? first : second).Add(text);
    total += *got;
    if (total > kMaxSessionFileBytes) break;
  }
  out.entries_before_split = first.lines();
  out.lines_before_split = first.newlines();
  out.entries = first.lines() + second.lines();
  if (out.split >= total) out.split = 0;  // nothing after the cut
  return out;
}

// One half of a file read on its own thread.
struct HalfRead {
  SessionFileContents part;  // its header (the first half), warnings and valid_bytes
  Status status;
  bool header_seen = false;
  bool out_of_room = false;
  size_t used = 0;  // entries decoded into its slots
};

// What a half reads: the file's bytes from `start` to `end` (0: to the end of the file).
struct HalfSpan {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t lines_before = 0;
  size_t chunk_bytes = kSessionReadChunkBytes;
};

using TooLarge = std::function<Error(uint64_t size)>;

// Reads one half into `slots` (room for `room` entries); `stop` set: stop early (the other half
// failed before it). The second half (start > 0) decodes its lines as of the current version.
HalfRead ReadHalf(const std::filesystem::path& path, const HalfSpan& span, Entry* slots,
                  size_t room, const TooLarge& too_large, const std::atomic<bool>& stop) {
  HalfRead h;
  const std::string name = path.string();
  auto file = DiskFile::Open(path, true);
  if (!file.ok()) {
    h.status = ReadFileError(name + ": " + file.error().message);
    return h;
  }
  if (Status at = file->Seek(span.start); !at.ok()) {
    h.status = ReadFileError(name + ": " + at.error().message);
    return h;
  }
  uint64_t total = span.start;
  ReadBytes read = [&](char* buf, size_t max) -> Result<size_t> {
    if (span.end > 0) max = static_cast<size_t>(std::min<uint64_t>(max, span.end - total));
    auto n = file->Read(buf, max);
    if (!n.ok()) return ReadFileError(name + ": " + n.error().message);
    total += *n;
    if (total > kMaxSessionFileBytes) return too_large(total);  // it grew since it was opened
    return n;
  };
  h.part.valid_bytes = span.start;  // every line of the first half ends with a newline
  LineSplitter splitter(name, kMaxSessionLineBytes, span.start,
                        static_cast<int>(span.lines_before));
  EntrySink sink(slots, room);
  SessionBuilder builder(name, &h.part, &sink);
  if (span.start > 0) builder.AssumeHeader();
  auto zeros = [&] {
    if (splitter.zero_tail() == 0) return;
    h.part.warnings.push_back(name + ": skipped " + ByteSize(splitter.zero_tail()) +
                              " of zero bytes (NUL) at its end, after byte " +
                              std::to_string(splitter.end_of_text()) +
                              ": a crash left the file longer than what was written; they hold "
                              "nothing of the session");
  };
  h.status = splitter.Run(read, std::max<size_t>(span.chunk_bytes, 1), zeros,
                          [&](const SessionLine& l) -> Status {
                            if (stop.load(std::memory_order_relaxed))
                              return ReadFileError(name + ": stopped");
                            return builder.Line(l);
                          });
  if (h.status.ok() && span.end > 0 && total != span.end) h.out_of_room = true;  // it shrank
  h.header_seen = builder.header_seen();
  h.out_of_room = h.out_of_room || builder.out_of_room();
  h.used = sink.used();
  return h;
}

// Joins the halves read into `entries` (the first half's slots first): the file's contents, or
// nullopt when it must be read again on one thread (the file changed while it was read, the
// first half holds no header, or an older version's).
std::optional<Result<SessionFileContents>> JoinHalves(HalfRead& a, HalfRead& b,
                                                      std::vector<Entry> entries,
                                                      size_t first_room) {
  if (a.out_of_room || b.out_of_room) return std::nullopt;
  if (!a.status.ok()) return Result<SessionFileContents>(a.status.error());
  if (!a.header_seen || a.part.header.version != kSessionFormatVersion) return std::nullopt;
  if (!b.status.ok()) return Result<SessionFileContents>(b.status.error());
  SessionFileContents out = std::move(a.part);
  const auto gap = entries.begin() + static_cast<std::ptrdiff_t>(a.used);
  entries.erase(gap, gap + static_cast<std::ptrdiff_t>(first_room - a.used));
  entries.resize(a.used + b.used);
  out.entries = std::move(entries);
  for (auto& w : b.part.warnings) out.warnings.push_back(std::move(w));
  out.valid_bytes = b.part.valid_bytes;
  out.decode_threads = 2;
  return Result<SessionFileContents>(std::move(out));
}

// Reads a file cut in two (lines.split) on two threads; nullopt: read it on one thread instead.
std::optional<Result<SessionFileContents>> ReadInHalves(const std::filesystem::path& path,
                                                        const FileLines& lines, size_t chunk_bytes,
                                                        const TooLarge& too_large) {
  const size_t first_room = lines.entries_before_split;
  std::vector<Entry> entries;
  try {
    // One more than the lines counted: a torn last line, too short to be counted, takes a slot
    // while it is tried.
    entries.resize(lines.entries + 1);
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
  std::atomic<bool> stop{false};
  HalfRead a;
  HalfRead b;
  std::exception_ptr second_failed;
  std::thread second;
  try {
    second = std::thread([&] {
      try {
        b = ReadHalf(path, {lines.split, 0, lines.lines_before_split, chunk_bytes},
                     entries.data() + first_room, entries.size() - first_room, too_large, stop);
      } catch (...) {
        second_failed = std::current_exception();
      }
    });
  } catch (const std::system_error&) {
    return std::nullopt;  // no thread to be had
  }
  try {
    a = ReadHalf(path, {0, lines.split, 0, chunk_bytes}, entries.data(), first_room, too_large,
                 stop);
  } catch (...) {
    stop = true;
    second.join();
    throw;
  }
  if (!a.status.ok()) stop = true;
  second.join();
  if (second_failed) std::rethrow_exception(second_failed);
  return JoinHalves(a, b, std::move(entries), first_room);
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

Result<SessionFileContents> ReadSessionFile(const std::filesystem::path& path, size_t chunk_bytes,
                                            uint64_t two_thread_bytes) {
  auto file = DiskFile::Open(path, true);
  if (!file.ok()) return ReadFileError(path.string() + ": " + file.error().message);
  TooLarge too_large = [&](uint64_t size) {
    return ReadFileError("session file " + FileTooLarge(path, size, kMaxSessionFileBytes).message +
                         " of a session file that lousho reads back; it is left as it is: start "
                         "a new session");
  };
  if (file->size() > kMaxSessionFileBytes) return too_large(file->size());
  const bool halves = two_thread_bytes > 0 && file->size() > two_thread_bytes;
  const FileLines lines = CountFileLines(path, chunk_bytes, halves ? file->size() / 2 : 0);
  if (lines.split > 0) {
    auto read = ReadInHalves(path, lines, chunk_bytes, too_large);
    if (read) return std::move(*read);
  }
  uint64_t total = 0;
  ReadBytes read = [&](char* buf, size_t max) -> Result<size_t> {
    auto n = file->Read(buf, max);
    if (!n.ok()) return ReadFileError(path.string() + ": " + n.error().message);
    total += *n;
    if (total > kMaxSessionFileBytes) return too_large(total);  // it grew since it was opened
    return n;
  };
  return ReadSessionBytes(read, path.string(), kMaxSessionLineBytes, chunk_bytes, lines.entries);
}

}  // namespace lousho::agent

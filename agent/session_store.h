// Session files: one append-only JSONL file per session (a header line, then the history's
// entries), where they live, how they are listed, read back and appended to under a lock.
// Protocol-free; the format is docs/session-format.md.
#pragma once

#include <json/json.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/history.h"
#include "support/env.h"
#include "support/status.h"

namespace lousho::agent {

// The version written in every new header. Files of this version or older load; newer ones are
// refused with an error naming the version.
inline constexpr int kSessionFormatVersion = 1;
// The largest session file read back, and the longest line in one (docs/session-format.md,
// "Limits"): a larger file or a longer line is refused with an error naming it, and the file is
// left as it is. No entry lousho writes comes near the line limit: the longest comes from one
// input line of the ACP door (64 MiB by default), whose text JSON escaping makes at most three
// times longer.
inline constexpr uint64_t kMaxSessionFileBytes = 512ULL << 20;
inline constexpr uint64_t kMaxSessionLineBytes = 192ULL << 20;

// The first line of a session file. Plain value type.
struct SessionHeader {
  int version = kSessionFormatVersion;
  std::string id;
  long long timestamp_ms = 0;  // when the session began
  std::string cwd;             // absolute
  std::string agent;           // the agent's name
  std::string parent_session;  // the file this session continues; empty: none
};
Json::Value SessionHeaderToJson(const SessionHeader& header);
Result<SessionHeader> SessionHeaderFromJson(const Json::Value& v, const std::string& path);

// A session file read back: its header and entries in file order (parents before children).
struct SessionFileContents {
  SessionHeader header;
  std::vector<Entry> entries;
  std::vector<std::string> warnings;  // what was skipped (zeros at the end, a torn last line)
  uint64_t valid_bytes = 0;           // the length of the file up to the last whole line kept
  int decode_threads = 1;             // how many threads decoded its lines (2: read in halves)
};

// How much of a session file is read at a time.
inline constexpr size_t kSessionReadChunkBytes = 256UL * 1024;
// Files over this size are decoded on two threads (see ReadSessionFile).
inline constexpr uint64_t kSessionTwoThreadBytes = 32ULL << 20;

// Reads a session file, a chunk at a time (chunk_bytes), decoding each line as it comes: what it
// holds at any time is the entries so far and one chunk, or the line being read when it runs
// across chunks. Zero bytes (NUL) at the end, which a crash can leave where a write had not
// reached the disk, are skipped with a warning saying so; a last line cut short by a crash (no
// newline, not JSON) is skipped with a warning and everything before it kept; any other malformed
// line fails with "<file>:<line>: ...", and so does a line over kMaxSessionLineBytes (counted to
// its end, never held); a file over kMaxSessionFileBytes is refused before it is read.
// A file over two_thread_bytes (0: none) is read as two halves, cut at the end of the line that
// passes its middle, each decoded on its own thread into one vector (same contents, errors and
// warnings); a file whose first half holds no header or one of an older version is read again on
// one thread.
Result<SessionFileContents> ReadSessionFile(const std::filesystem::path& path,
                                            size_t chunk_bytes = kSessionReadChunkBytes,
                                            uint64_t two_thread_bytes = kSessionTwoThreadBytes);
// The same over text already in memory (`name` is used in messages); `max_line` is the longest
// line accepted.
Result<SessionFileContents> ParseSessionText(std::string_view text, const std::string& name,
                                             uint64_t max_line = kMaxSessionLineBytes,
                                             size_t chunk_bytes = kSessionReadChunkBytes);

// HistoryRecorder (agent/history.h) is what a session records its entries through.

// Appends a session's entries to its file, one whole line per write. A new session's file is
// created with its header at the first message (a session nobody spoke in leaves no file);
// until then entries wait in memory. The file is held under an exclusive advisory lock (flock)
// from creation or opening until Close or destruction, so no second process appends to it.
// Thread-safe. When the file cannot be created or written (a read-only folder, a folder path
// that is a file, a full disk), the session goes on in memory: the bytes not on disk wait, in
// order, and every later entry (and Flush) tries again, creating the file if it is not there
// yet; once a write succeeds everything missed is on disk and the file reloads complete. The
// failure and the recovery each make one SaveReport per outage (and a log line).
class SessionWriter : public HistoryRecorder {
 public:
  // A new file at `path` (not created yet).
  static std::shared_ptr<SessionWriter> ForNew(std::filesystem::path path, SessionHeader header);
  // An existing file, opened and locked now, then read. A torn last line is cut off (it holds
  // nothing kept), so the next entry starts on a line of its own. Fails with
  // LOUSHO_SESSION_LOCKED when another process holds the file, LOUSHO_SESSION_FILE when it
  // cannot be read.
  static Result<std::pair<std::shared_ptr<SessionWriter>, SessionFileContents>> OpenExisting(
      const std::filesystem::path& path);
  ~SessionWriter() override;

  void Record(const Entry& entry) override;
  void Flush() override;
  void Close() override;
  bool HasReports() const override { return has_reports_.load(std::memory_order_acquire); }
  std::vector<SaveReport> TakeReports() override;

  const std::filesystem::path& path() const { return path_; }
  // Whether the file exists on disk yet.
  bool created() const;

 private:
  SessionWriter(std::filesystem::path path, std::optional<SessionHeader> header, int fd);
  // With mu_ held: creates the file when it is due and writes what waits; false on failure.
  bool SaveLocked();
  bool CreateLocked();
  bool DrainLocked();
  void FailedLocked(const std::string& what, int err);
  void SavedLocked(size_t entries);
  // Queues a report for TakeReports (none once closed).
  void ReportLocked(SaveReport r);

  const std::filesystem::path path_;
  mutable std::mutex mu_;
  std::optional<SessionHeader> header_;  // set until the file is created
  // The bytes not on disk yet, in order: entries waiting for the first message, or missed by a
  // failed write (then it may start with the rest of a line written in part).
  std::string pending_;
  size_t pending_entries_ = 0;  // entries in pending_
  bool due_ = false;            // a message came: the file is to exist
  int fd_ = -1;
  bool dirty_ = false;
  bool failing_ = false;  // the last attempt failed (and was reported)
  bool closed_ = false;
  std::vector<SaveReport> reports_;
  std::atomic<bool> has_reports_{false};
};

// What a session list shows of one file.
struct SessionSummary {
  std::filesystem::path path;
  std::string id;
  std::string cwd;
  std::string title;         // the last session name; empty: none
  long long updated_ms = 0;  // the file's modification time
  long long created_ms = 0;  // the header's timestamp
};

// Where session files live: <root>/<encoded cwd>/<timestamp>_<id>.jsonl. Nothing touches the
// disk until a method reads or a writer writes. Immutable; thread-safe.
class SessionStore {
 public:
  explicit SessionStore(std::filesystem::path root) : root_(std::move(root)) {}

  // $LOUSHO_HOME/sessions, else $HOME/.lousho/sessions; nullopt when neither is set.
  static std::optional<std::filesystem::path> DefaultRoot(const EnvLookup& env);

  const std::filesystem::path& root() const { return root_; }
  // The folder of one working directory: "/a/b c" -> "--a-b c--" ("/", "\" and ":" become "-").
  std::filesystem::path DirFor(const std::string& cwd) const;
  // A new session's file.
  std::filesystem::path PathFor(const SessionHeader& header) const;
  // The file of session `id`: looked for in cwd's folder first, then in every folder.
  Result<std::filesystem::path> Find(const std::string& id, const std::string& cwd) const;
  // Sessions whose header names `cwd` (empty: every session), most recently updated first.
  // Unreadable files are skipped.
  std::vector<SessionSummary> List(const std::string& cwd) const;

 private:
  std::filesystem::path root_;
};

// Deletes the session file at `path` for good (ACP session/delete): takes the file's lock first,
// so a file another session holds (in this process or another) is refused with
// LOUSHO_SESSION_LOCKED and left as it is; a missing file is LOUSHO_SESSION_NOT_FOUND.
Status DeleteSessionFile(const std::filesystem::path& path);

// Reads what a list shows of one file: the header and the last session name, without decoding
// the messages.
Result<SessionSummary> SummarizeSessionFile(const std::filesystem::path& path);

}  // namespace lousho::agent

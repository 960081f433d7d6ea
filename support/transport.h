// Line transports: one message per line, over stdio or in memory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace lousho {

enum class ReadStatus { kLine, kTooLong, kEof };

// Reads and writes whole lines. ReadLine is called from one reader thread; WriteLine is
// thread-safe and writes each line whole, in the order of the calls.
class LineTransport {
 public:
  virtual ~LineTransport() = default;
  // Reads the next line (without its terminator; a trailing '\r' is dropped). A line longer
  // than the limit is skipped whole and reported as kTooLong with its size in *line_size, and
  // its first bytes (at most kTooLongHeadBytes; a transport may give none) in *line, enough to
  // tell which request it answers.
  virtual ReadStatus ReadLine(std::string* line, size_t* line_size) = 0;
  static constexpr size_t kTooLongHeadBytes = 4096;
  virtual void WriteLine(std::string line) = 0;
  // Writes the lines in order, none of another writer's lines among them (a transport may write
  // them at once).
  virtual void WriteLines(std::vector<std::string> lines) {
    for (auto& line : lines) WriteLine(std::move(line));
  }
  // The longest line ReadLine returns whole; 0 when unknown (for messages).
  virtual size_t max_line_bytes() const { return 0; }
};

// File-descriptor transport (stdin/stdout in production). Lines written while another thread is
// writing join a queue that thread writes before it returns, all ready lines in one writev: no
// line waits for a later one. A caller finding more than kMaxQueuedBytes queued waits for the
// writer, so a client that stops reading holds the writers back rather than growing memory.
// The thread reading (the last to call ReadLine) never waits in a write, so that it keeps
// reading whatever the other side does: its lines join the queue, a helper thread (started on
// first need) writes them when no one else is, and past kMaxReaderQueuedBytes waiting they are
// dropped (logged once), as the other side has long stopped reading. When stop_fd (>= 0) becomes
// readable (a signal handler writes to a self-pipe), input ends as if in_fd had reached EOF: a
// blocked ReadLine wakes and returns kEof, and so does every later call. Lines already buffered
// before that are still returned.
class FdTransport : public LineTransport {
 public:
  FdTransport(int in_fd, int out_fd, size_t max_line_bytes, int stop_fd = -1);
  ~FdTransport() override;
  ReadStatus ReadLine(std::string* line, size_t* line_size) override;
  void WriteLine(std::string line) override;
  // Queued together and written by as few writev calls as they fill (a replay of many updates
  // costs a system call per batch, not per line).
  void WriteLines(std::vector<std::string> lines) override;
  size_t max_line_bytes() const override { return max_line_bytes_; }
  static constexpr size_t kMaxQueuedBytes = size_t{4} << 20;
  static constexpr size_t kMaxReaderQueuedBytes = size_t{16} << 20;

 private:
  int in_fd_;
  int out_fd_;
  int stop_fd_;
  size_t max_line_bytes_;
  // The read buffer, left uninitialised: zeroing it would fault in all its pages at start-up,
  // where the first request touches one.
  static constexpr size_t kReadBufferBytes = size_t{1} << 16;
  std::unique_ptr<char[]> buf_;
  size_t start_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  // The line ReadLine is reading: an over-long one is skipped after its head is kept.
  struct LineProgress {
    size_t skipped = 0;  // bytes of an over-long line already thrown away
    bool skipping = false;
  };
  // The line ended by a newline in the buffer, if there is one.
  std::optional<ReadStatus> TakeBufferedLine(std::string* line, size_t* line_size,
                                             const LineProgress& progress);
  // No newline buffered: the buffered bytes join the partial line (or are counted as skipped).
  void SetAsideBuffered(std::string* line, LineProgress* progress);
  // At the end of the input: the last line, unless it is empty.
  static ReadStatus LastLine(std::string* line, size_t* line_size, const LineProgress& progress);
  enum class InputWait { kReady, kInterrupted, kStopped };
  // Waits for input or the stop request (with a stop descriptor), whichever comes first.
  InputWait WaitForInput();
  // Reads into the empty buffer; sets eof_ at the end of the input.
  void FillBuffer();
  // Writes the lines, each followed by a newline; false once the peer is gone.
  bool WriteBatch(const std::vector<std::string>& lines);
  // Writes what is queued until the queue is empty, then clears writing_ (which the caller set).
  void Drain(std::unique_lock<std::mutex>& lock);
  // A writer that is not the reading thread: waits while kMaxQueuedBytes are queued, queues the
  // `n` lines together (moved from), and writes the queue unless another thread is writing it.
  void Enqueue(std::unique_lock<std::mutex>& lock, std::string* lines, size_t n);
  // A line of the reading thread: queued, and written by the helper when no one is writing.
  void QueueFromReader(std::unique_lock<std::mutex>& lock, std::string line);
  void HelperLoop();
  std::atomic<std::thread::id> reader_{};
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::vector<std::string> queued_;  // lines waiting for the writing thread
  size_t queued_bytes_ = 0;
  bool writing_ = false;  // a thread is in WriteBatch
  bool broken_ = false;   // the peer is gone: lines are dropped
  std::thread helper_;    // writes the reading thread's lines
  bool helper_turn_ = false;
  bool stopping_ = false;
  bool told_dropped_ = false;
};

// In-memory transport for tests: Push() feeds input lines, Close() ends input, written lines are
// collected. Thread-safe.
class MemoryTransport : public LineTransport {
 public:
  void Push(std::string line);
  void Close();
  ReadStatus ReadLine(std::string* line, size_t* line_size) override;
  void WriteLine(std::string line) override;
  // Waits up to timeout_ms for at least n written lines; returns a copy of all written lines.
  std::vector<std::string> WaitForOutput(size_t n, long timeout_ms);
  std::vector<std::string> Output();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> in_;
  bool closed_ = false;
  std::vector<std::string> out_;
};

}  // namespace lousho

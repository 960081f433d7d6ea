// Line transports: one message per line, over stdio or in memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lousho {

enum class ReadStatus { kLine, kTooLong, kEof };

// Reads and writes whole lines. ReadLine is called from one reader thread; WriteLine is
// thread-safe and writes each line whole, in the order of the calls.
class LineTransport {
 public:
  virtual ~LineTransport() = default;
  // Reads the next line (without its terminator; a trailing '\r' is dropped). A line longer
  // than the limit is skipped whole and reported as kTooLong with its size in *line_size.
  virtual ReadStatus ReadLine(std::string* line, size_t* line_size) = 0;
  virtual void WriteLine(std::string line) = 0;
};

// File-descriptor transport (stdin/stdout in production). Lines written while another thread is
// writing join a queue that thread writes before it returns, all ready lines in one writev: no
// line waits for a later one, and no thread is added. A caller finding more than
// kMaxQueuedBytes queued waits for the writer, so a client that stops reading holds the
// writers back rather than growing memory. When stop_fd (>= 0) becomes readable
// (a signal handler writes to a self-pipe), input ends as if in_fd had reached EOF: a blocked
// ReadLine wakes and returns kEof, and so does every later call. Lines already buffered before
// that are still returned.
class FdTransport : public LineTransport {
 public:
  FdTransport(int in_fd, int out_fd, size_t max_line_bytes, int stop_fd = -1);
  ~FdTransport() override;
  ReadStatus ReadLine(std::string* line, size_t* line_size) override;
  void WriteLine(std::string line) override;
  static constexpr size_t kMaxQueuedBytes = size_t{4} << 20;

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
  // Writes the lines, each followed by a newline; false once the peer is gone.
  bool WriteBatch(const std::vector<std::string>& lines);
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::vector<std::string> queued_;  // lines waiting for the writing thread
  size_t queued_bytes_ = 0;
  bool writing_ = false;  // a thread is in WriteBatch
  bool broken_ = false;   // the peer is gone: lines are dropped
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

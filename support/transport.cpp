// Line transports over file descriptors and memory.
#include "support/transport.h"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

#include "support/log.h"

namespace lousho {

namespace {
// What a skipped line keeps: its first kTooLongHeadBytes, from the part read so far and `more`.
void KeepHead(std::string* line, const char* more, size_t len) {
  const size_t head = LineTransport::kTooLongHeadBytes;
  if (line->size() < head) line->append(more, std::min(len, head - line->size()));
  line->resize(std::min(line->size(), head));
  line->shrink_to_fit();
}
}  // namespace

FdTransport::FdTransport(int in_fd, int out_fd, size_t max_line_bytes, int stop_fd)
    : in_fd_(in_fd),
      out_fd_(out_fd),
      stop_fd_(stop_fd),
      max_line_bytes_(max_line_bytes),
      buf_(new char[kReadBufferBytes]) {}

ReadStatus FdTransport::ReadLine(std::string* line, size_t* line_size) {
  reader_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  line->clear();
  LineProgress progress;
  for (;;) {
    if (auto status = TakeBufferedLine(line, line_size, progress)) return *status;
    SetAsideBuffered(line, &progress);
    if (eof_) return LastLine(line, line_size, progress);
    const InputWait wait = WaitForInput();
    if (wait == InputWait::kStopped) {
      // A stop drops any partial line, as the sender is being told to go away.
      line->clear();
      eof_ = true;
      return ReadStatus::kEof;
    }
    if (wait == InputWait::kReady) FillBuffer();
  }
}

std::optional<ReadStatus> FdTransport::TakeBufferedLine(std::string* line, size_t* line_size,
                                                        const LineProgress& progress) {
  void* nl = end_ > start_ ? std::memchr(buf_.get() + start_, '\n', end_ - start_) : nullptr;
  if (nl == nullptr) return std::nullopt;
  size_t pos = static_cast<char*>(nl) - buf_.get();
  size_t len = pos - start_;
  if (progress.skipping || line->size() + len > max_line_bytes_) {
    if (line_size) *line_size = progress.skipped + (progress.skipping ? 0 : line->size()) + len;
    if (!progress.skipping) KeepHead(line, buf_.get() + start_, len);
    start_ = pos + 1;
    return ReadStatus::kTooLong;
  }
  line->append(buf_.get() + start_, len);
  start_ = pos + 1;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  if (line_size) *line_size = line->size();
  return ReadStatus::kLine;
}

void FdTransport::SetAsideBuffered(std::string* line, LineProgress* progress) {
  size_t len = end_ - start_;
  if (progress->skipping) {
    progress->skipped += len;
  } else if (line->size() + len > max_line_bytes_) {
    progress->skipping = true;
    progress->skipped = line->size() + len;
    KeepHead(line, buf_.get() + start_, len);
  } else {
    line->append(buf_.get() + start_, len);
  }
  start_ = end_ = 0;
}

ReadStatus FdTransport::LastLine(std::string* line, size_t* line_size,
                                 const LineProgress& progress) {
  if (progress.skipping) {
    if (line_size) *line_size = progress.skipped;
    return ReadStatus::kTooLong;
  }
  if (line->empty()) return ReadStatus::kEof;
  if (line->back() == '\r') line->pop_back();
  if (line_size) *line_size = line->size();
  return ReadStatus::kLine;
}

FdTransport::InputWait FdTransport::WaitForInput() {
  if (stop_fd_ < 0) return InputWait::kReady;
  pollfd fds[2] = {{in_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  if (::poll(fds, 2, -1) < 0) return errno == EINTR ? InputWait::kInterrupted : InputWait::kReady;
  return fds[1].revents != 0 ? InputWait::kStopped : InputWait::kReady;
}

void FdTransport::FillBuffer() {
  ssize_t n = ::read(in_fd_, buf_.get(), kReadBufferBytes);
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    eof_ = true;
    return;
  }
  end_ = static_cast<size_t>(n);
}

FdTransport::~FdTransport() {
  // A line queued by another thread is written by the thread writing now; wait for it.
  std::unique_lock<std::mutex> lock(write_mu_);
  write_cv_.wait(lock, [&] { return !writing_; });
  stopping_ = true;
  write_cv_.notify_all();
  lock.unlock();
  if (helper_.joinable()) helper_.join();
}

void FdTransport::WriteLine(std::string line) {
  const bool from_reader = std::this_thread::get_id() == reader_.load();
  std::unique_lock<std::mutex> lock(write_mu_);
  if (broken_) return;
  if (from_reader) {
    QueueFromReader(lock, std::move(line));
    return;
  }
  Enqueue(lock, &line, 1);
}

void FdTransport::WriteLines(std::vector<std::string> lines) {
  if (lines.empty()) return;
  if (std::this_thread::get_id() == reader_.load()) {
    // The reading thread never waits on the queue: its lines go one by one, as WriteLine's.
    LineTransport::WriteLines(std::move(lines));
    return;
  }
  std::unique_lock<std::mutex> lock(write_mu_);
  if (broken_) return;
  Enqueue(lock, lines.data(), lines.size());
}

void FdTransport::Enqueue(std::unique_lock<std::mutex>& lock, std::string* lines, size_t n) {
  write_cv_.wait(lock, [&] { return !writing_ || queued_bytes_ < kMaxQueuedBytes; });
  if (broken_) return;
  for (size_t i = 0; i < n; ++i) {
    queued_bytes_ += lines[i].size() + 1;
    queued_.push_back(std::move(lines[i]));
  }
  if (writing_) return;  // the writing thread takes them, in order, before it returns
  writing_ = true;
  Drain(lock);
}

void FdTransport::Drain(std::unique_lock<std::mutex>& lock) {
  std::vector<std::string> batch;
  while (!queued_.empty() && !broken_) {
    batch.clear();
    batch.swap(queued_);
    queued_bytes_ = 0;
    write_cv_.notify_all();
    lock.unlock();
    const bool ok = WriteBatch(batch);
    lock.lock();
    if (!ok) broken_ = true;
  }
  queued_.clear();
  queued_bytes_ = 0;
  writing_ = false;
  write_cv_.notify_all();
}

void FdTransport::QueueFromReader(std::unique_lock<std::mutex>& lock, std::string line) {
  if (queued_bytes_ > kMaxReaderQueuedBytes) {
    if (!told_dropped_)
      log::Warn("the other side has not read " + std::to_string(queued_bytes_) +
                " bytes of output; dropping the answers it does not read");
    told_dropped_ = true;
    return;
  }
  queued_bytes_ += line.size() + 1;
  queued_.push_back(std::move(line));
  if (writing_) return;  // the writing thread takes it
  writing_ = true;
  if (!helper_.joinable()) {
    try {
      helper_ = std::thread([this] { HelperLoop(); });
    } catch (const std::system_error&) {
      Drain(lock);  // no thread to spare: written here, as before
      return;
    }
  }
  helper_turn_ = true;
  write_cv_.notify_all();
}

void FdTransport::HelperLoop() {
  std::unique_lock<std::mutex> lock(write_mu_);
  for (;;) {
    write_cv_.wait(lock, [&] { return helper_turn_ || stopping_; });
    if (!helper_turn_) return;
    helper_turn_ = false;
    Drain(lock);
  }
}

bool FdTransport::WriteBatch(const std::vector<std::string>& lines) {
  static const char kNewline = '\n';
  // Bounded by IOV_MAX (1024 on Linux): 2 entries per line.
  constexpr size_t kMaxIov = 1024;
  std::vector<iovec> iov;
  iov.reserve(std::min(lines.size() * 2, kMaxIov));
  size_t next = 0;
  while (next < lines.size()) {
    iov.clear();
    for (; next < lines.size() && iov.size() + 2 <= kMaxIov; ++next) {
      iov.push_back({const_cast<char*>(lines[next].data()), lines[next].size()});
      iov.push_back({const_cast<char*>(&kNewline), 1});
    }
    size_t first = 0;
    while (first < iov.size()) {
      ssize_t n = ::writev(out_fd_, iov.data() + first, static_cast<int>(iov.size() - first));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        // A descriptor someone made non-blocking: wait until the peer reads.
        pollfd out = {out_fd_, POLLOUT, 0};
        ::poll(&out, 1, -1);
        continue;
      }
      if (n <= 0) return false;  // peer gone: this line and every later one are dropped
      // Skip what was written; a partly written entry keeps its rest.
      auto left = static_cast<size_t>(n);
      while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
      if (left > 0) {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
      }
    }
  }
  return true;
}

void MemoryTransport::Push(std::string line) {
  std::lock_guard<std::mutex> lock(mu_);
  in_.push_back(std::move(line));
  cv_.notify_all();
}

void MemoryTransport::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

ReadStatus MemoryTransport::ReadLine(std::string* line, size_t* line_size) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !in_.empty() || closed_; });
  if (in_.empty()) return ReadStatus::kEof;
  *line = std::move(in_.front());
  in_.pop_front();
  if (line_size) *line_size = line->size();
  return ReadStatus::kLine;
}

void MemoryTransport::WriteLine(std::string line) {
  std::lock_guard<std::mutex> lock(mu_);
  out_.push_back(std::move(line));
  cv_.notify_all();
}

std::vector<std::string> MemoryTransport::WaitForOutput(size_t n, long timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return out_.size() >= n; });
  return out_;
}

std::vector<std::string> MemoryTransport::Output() {
  std::lock_guard<std::mutex> lock(mu_);
  return out_;
}

}  // namespace lousho

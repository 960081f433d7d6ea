// The one cut of tool output for the model (head and tail, the notice naming the saved file) and
// the saved outputs (tool_util.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "agent/tools/tool_util.h"
#include "support/log.h"

namespace lousho::agent::tools {

namespace fs = std::filesystem;

namespace {

// The first cap.max_lines lines of `text` within cap.max_bytes (one huge first line: its head),
// ending after a newline when a whole line was kept. Returns how many bytes are kept.
size_t HeadBytes(std::string_view text, OutputCap cap) {
  size_t end = 0;
  size_t lines = 0;
  while (lines < cap.max_lines && end < text.size()) {
    const size_t nl = text.find('\n', end);
    const size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
    if (next > cap.max_bytes) break;
    end = next;
    ++lines;
  }
  if (end == 0) return Utf8Prefix(text, std::min(cap.max_bytes, text.size()));
  return end;
}

size_t CountLines(std::string_view text) {
  if (text.empty()) return 0;
  const auto n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? n : n + 1;
}

// `lines`: how many lines were left out, when known.
std::string CutNotice(uint64_t left_out, std::optional<size_t> lines, uint64_t total,
                      const std::string& saved) {
  std::string notice = "[Output truncated: " + ByteSize(left_out);
  if (lines) notice += " (" + std::to_string(*lines) + " lines)";
  notice += " of " + ByteSize(total) + " not shown here";
  if (!saved.empty())
    notice += "; the whole output is saved in " + saved +
              " (read it with offset/limit or grep it for the part you need)";
  return notice + "]";
}

}  // namespace

std::string TailLines(std::string_view text, OutputCap cap, size_t* kept_lines,
                      size_t* total_lines) {
  std::vector<std::string_view> lines = SplitLines(text);
  *total_lines = lines.size();
  size_t bytes = 0, n = 0;
  for (auto it = lines.rbegin(); it != lines.rend() && n < cap.max_lines; ++it) {
    if (bytes + it->size() + 1 > cap.max_bytes) {
      if (n == 0) {
        // One huge line: keep its tail.
        std::string_view l = *it;
        *kept_lines = 1;
        return std::string(l.substr(Utf8SuffixStart(l, cap.max_bytes)));
      }
      break;
    }
    bytes += it->size() + 1;
    ++n;
  }
  *kept_lines = n;
  std::string out;
  for (size_t i = lines.size() - n; i < lines.size(); ++i) {
    out.append(lines[i]);
    if (i + 1 < lines.size()) out += '\n';
  }
  return out;
}

std::string CutForModel(std::string_view start, std::string_view end, uint64_t total_bytes,
                        OutputCap cap, const std::string& saved, bool* cut) {
  const bool whole = start.size() == total_bytes;
  if (whole && start.size() <= cap.max_bytes && CountLines(start) <= cap.max_lines) {
    if (cut) *cut = false;
    return std::string(start);
  }
  if (cut) *cut = true;
  const OutputCap head_cap{cap.max_bytes / 5, std::max<size_t>(1, cap.max_lines / 5)};
  const size_t head = HeadBytes(start, head_cap);
  // Where `end` begins in the output; the tail never repeats what the head shows.
  const uint64_t end_at = total_bytes - end.size();
  std::string_view tail_source = end;
  if (end_at < head) tail_source.remove_prefix(static_cast<size_t>(head - end_at));
  const OutputCap tail_cap{cap.max_bytes - head_cap.max_bytes,
                           cap.max_lines - std::min(cap.max_lines, head_cap.max_lines)};
  size_t kept = 0, total = 0;
  std::string tail = TailLines(tail_source, tail_cap, &kept, &total);
  const uint64_t left_out =
      total_bytes - head - std::min<uint64_t>(tail.size(), total_bytes - head);
  std::optional<size_t> lines;
  if (whole) lines = total - kept;  // the lines after the head, but the tail's
  std::string body(start.substr(0, head));
  if (!body.empty() && body.back() != '\n') body += '\n';
  body += CutNotice(left_out, lines, total_bytes, saved);
  if (!tail.empty()) body += "\n" + tail;
  return body;
}

// --- saved outputs ---

SavedOutputs::SavedOutputs(fs::path dir) : SavedOutputs(std::move(dir), Limits{}) {}

SavedOutputs::SavedOutputs(fs::path dir, Limits limits) : dir_(std::move(dir)), limits_(limits) {}

std::unique_ptr<SavedOutputs::Writer> SavedOutputs::Begin(std::string_view tool) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    log::Warn("saved outputs: cannot create " + dir_.string() + ": " + ec.message());
    return nullptr;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = ++counter_;
    }
    fs::path path =
        dir_ / (std::string(tool) + "-" + std::to_string(ms) + "-" + std::to_string(n) + ".log");
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return std::unique_ptr<Writer>(new Writer(*this, std::move(path), fd));
    if (errno != EEXIST) {
      log::Warn("saved outputs: cannot create " + path.string() + ": " + std::strerror(errno));
      return nullptr;
    }
  }
  return nullptr;
}

std::string SavedOutputs::Save(std::string_view tool, std::string_view text) {
  std::unique_ptr<Writer> w = Begin(tool);
  if (!w) return "";
  w->Append(text);
  return w->Keep();
}

// The oldest files go first until the folder is within the limits again.
void SavedOutputs::Prune() {
  struct Saved {
    fs::file_time_type time;
    fs::path path;
    uint64_t size;
  };
  std::vector<Saved> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), stop; !ec && it != stop; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    files.push_back({it->last_write_time(e2), it->path(), it->file_size(e2)});
  }
  std::sort(files.begin(), files.end(), [](const Saved& a, const Saved& b) {
    return a.time != b.time ? a.time < b.time : a.path < b.path;
  });
  uint64_t total = 0;
  for (const Saved& f : files) total += f.size;
  size_t count = files.size();
  for (const Saved& f : files) {
    if (count <= limits_.max_files && total <= limits_.max_total_bytes) break;
    fs::remove(f.path, ec);
    --count;
    total -= f.size;
  }
}

SavedOutputs::Writer::Writer(SavedOutputs& owner, fs::path path, int fd)
    : owner_(owner), path_(std::move(path)), fd_(fd) {}

SavedOutputs::Writer::~Writer() {
  if (fd_ >= 0) close(fd_);
  std::error_code ec;
  if (!kept_) fs::remove(path_, ec);
}

void SavedOutputs::Writer::Append(std::string_view bytes) {
  if (failed_ || fd_ < 0) return;
  const uint64_t room = owner_.limits_.max_file_bytes - written_;
  if (bytes.size() > room) {
    truncated_ = true;
    bytes = bytes.substr(0, static_cast<size_t>(room));
  }
  while (!bytes.empty()) {
    const ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      return;
    }
    written_ += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::string SavedOutputs::Writer::Keep() {
  if (fd_ >= 0) {
    if (close(fd_) != 0) failed_ = true;
    fd_ = -1;
  }
  if (failed_) return "";
  kept_ = true;
  owner_.Prune();
  std::error_code ec;
  if (!fs::exists(path_, ec)) return "";  // pruned at once: larger than every limit
  return path_.string();
}

fs::path SavedOutputDirFor(const fs::path& session_file) {
  fs::path dir = session_file;
  dir.replace_extension(".outputs");
  return dir;
}

Status RemoveSavedOutputs(const fs::path& session_file) {
  std::error_code ec;
  fs::remove_all(SavedOutputDirFor(session_file), ec);
  if (ec)
    return MakeError(ErrorCode::kToolIo, "cannot remove the saved outputs of " +
                                             session_file.string() + ": " + ec.message());
  return Status::Ok();
}

std::string CutAndSave(ToolContext& ctx, std::string_view tool, std::string_view text,
                       size_t max_lines, bool* cut) {
  const OutputCap cap{kMaxToolOutputBytes, max_lines};
  bool was_cut = false;
  std::string shown = CutForModel(text, cap, "", &was_cut);
  if (cut) *cut = was_cut;
  if (!was_cut || !ctx.saved_outputs) return shown;
  const std::string saved = ctx.saved_outputs->Save(tool, text);
  return saved.empty() ? shown : CutForModel(text, cap, saved, nullptr);
}

}  // namespace lousho::agent::tools

// Progress lines and the spinner of `lousho run` (stderr).
#include "local/progress_printer.h"

#include <array>
#include <variant>

namespace lousho::local {
namespace {

constexpr size_t kMaxLine = 200;  // a title or an error is cut to this many bytes

// `text`'s first `bytes` bytes at most, not cutting a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

// The first line of `text`, at most kMaxLine bytes.
std::string FirstLineOf(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() <= kMaxLine ? line : CutUtf8(line, kMaxLine) + "…";
}

std::string OutputText(const agent::ToolOutput* output) {
  std::string text;
  if (output == nullptr) return text;
  for (const auto& b : output->content)
    if (b.type == agent::BlockType::kText) text += b.text;
  return text;
}

}  // namespace

std::string ToolLine(const std::string& title, bool is_error, const std::string& error_text) {
  if (!is_error) return "✓ " + FirstLineOf(title);
  const std::string why = FirstLineOf(error_text);
  return "✗ " + FirstLineOf(title) + (why.empty() ? "" : ": " + why);
}

ProgressPrinter::ProgressPrinter(FILE* err, bool spinner) : err_(err), spinner_(spinner) {}

// What each event changes: the spinner's activity, and a line for what ended.
struct ProgressPrinter::Visitor {
  ProgressPrinter* p;
  void operator()(const agent::event::TurnStart&) const { p->activity_ = "thinking"; }
  void operator()(const agent::event::ToolExecutionStart& e) const {
    if (e.call) p->activity_ = FirstLineOf(e.call->title.empty() ? e.call->name : e.call->title);
  }
  void operator()(const agent::event::ToolExecutionEnd& e) const {
    if (e.call)
      p->LineLocked(ToolLine(e.call->title.empty() ? e.call->name : e.call->title, e.is_error,
                             OutputText(e.output)));
    p->activity_ = "thinking";
  }
  void operator()(const agent::event::AutoRetryStart& e) const {
    p->LineLocked("… retrying (attempt " + std::to_string(e.retry.attempt) +
                  "): " + FirstLineOf(e.retry.error_message));
  }
  void operator()(const agent::event::AutoCompactionStart&) const {
    p->activity_ = "compacting the history";
  }
  void operator()(const agent::event::AutoCompactionEnd& e) const {
    p->LineLocked(e.error.empty() ? "… history compacted" : "✗ compaction: " + e.error);
  }
  void operator()(const agent::event::Warning& e) const {
    p->LineLocked((e.info ? "note: " : "warning: ") + FirstLineOf(e.text));
  }
  void operator()(const agent::event::AgentEnd&) const {
    p->activity_.clear();
    p->ClearLocked();
  }
  template <typename Other>
  void operator()(const Other&) const {}
};

void ProgressPrinter::Event(const agent::Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  std::visit(Visitor{this}, event);
  DrawLocked();
}

void ProgressPrinter::Refused(const Refusal& refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  LineLocked("✗ refused: " + FirstLineOf(refusal.title) +
             (refusal.subagent.empty() ? "" : " (subagent " + refusal.subagent + ")") +
             " would ask for permission; to let it run, pass " + refusal.suggestion + " or --yes");
  DrawLocked();
}

void ProgressPrinter::Note(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  LineLocked(text);
  DrawLocked();
}

void ProgressPrinter::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  ++frame_;
  DrawLocked();
}

void ProgressPrinter::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  ClearLocked();
  finished_ = true;
}

void ProgressPrinter::LineLocked(const std::string& text) {
  ClearLocked();
  std::fprintf(err_, "%s\n", text.c_str());
  std::fflush(err_);
}

void ProgressPrinter::ClearLocked() {
  if (drawn_ == 0) return;
  std::fprintf(err_, "\r%s\r", std::string(drawn_, ' ').c_str());
  std::fflush(err_);
  drawn_ = 0;
}

void ProgressPrinter::DrawLocked() {
  if (!spinner_ || finished_ || activity_.empty()) return;
  static constexpr std::array<const char*, 4> kFrames = {"|", "/", "-", "\\"};
  // Short enough for an 80-column terminal, so the carriage return reaches its start.
  const std::string line =
      CutUtf8(std::string(kFrames[frame_ % kFrames.size()]) + " " + activity_, 72);
  ClearLocked();
  std::fprintf(err_, "%s", line.c_str());
  std::fflush(err_);
  drawn_ = line.size();
}

}  // namespace lousho::local

#include "cli/chat/view.h"

#include <algorithm>
#include <cstdio>
#include <dtl/dtl.hpp>
#include <utility>

#include "agent/tools/tool_util.h"
#include "local/progress_printer.h"

namespace lousho::cli::chat {
namespace {

constexpr size_t kMaxLiveRows = 12;     // what a 24-row terminal can redraw in place
constexpr size_t kThinkingRows = 4;     // the tail of a thought while it streams
constexpr size_t kMaxDiffRows = 24;     // of one file's diff
constexpr size_t kCollapsedChars = 60;  // of a collapsed thought's line

// The text a tool gave the model (its error, when it failed).
std::string OutputText(const agent::ToolOutput* output) {
  if (output == nullptr) return {};
  agent::Message m;
  m.content = output->content;
  return m.TextContent();
}

std::string Compact(long long n) {
  char buf[32];
  if (n >= 1000000) {
    std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(n) / 1e6);
  } else if (n >= 1000) {
    std::snprintf(buf, sizeof buf, "%.1fk", static_cast<double>(n) / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%lld", n);
  }
  return buf;
}

std::string Title(const agent::event::ToolCall* call) {
  if (call == nullptr) return "tool";
  const std::string& t = call->title.empty() ? call->name : call->title;
  return t.substr(0, t.find('\n'));
}

}  // namespace

ChatView::ChatView(Terminal term, FILE* out) : term_(std::move(term)), out_(out) {}

std::vector<std::string> ChatView::Wrap(const std::string& text, const std::string& style) const {
  // A paragraph of plain words: Markdown's renderer on the text as a code-free paragraph would
  // read its punctuation; the text is wrapped here as it is, by words.
  std::vector<std::string> rows;
  const int width = std::max(8, term_.width() - 1);
  for (const std::string& line : agent::tools::SplitLineStrings(text)) {
    std::string row;
    int col = 0;
    size_t i = 0;
    while (i <= line.size()) {
      size_t sp = line.find(' ', i);
      if (sp == std::string::npos) sp = line.size();
      const std::string word = line.substr(i, sp - i);
      const int w = DisplayWidth(word);
      if (col > 0 && col + 1 + w > width) {
        rows.push_back(style + row + (style.empty() ? "" : term_.reset()));
        row.clear();
        col = 0;
      }
      if (col > 0) {
        row += ' ';
        ++col;
      }
      row += word;
      col += w;
      i = sp + 1;
    }
    rows.push_back(style + row + (style.empty() ? "" : term_.reset()));
  }
  return rows;
}

void ChatView::EraseLiveLocked() {
  if (live_.empty()) return;
  std::fputs(term_.EraseUp(static_cast<int>(live_.size()) - 1).c_str(), out_);
}

void ChatView::DrawLiveLocked() {
  for (size_t i = 0; i < live_.size(); ++i) {
    if (i > 0) std::fputc('\n', out_);
    std::fputs(live_[i].c_str(), out_);
  }
  std::fflush(out_);
}

void ChatView::SetLiveLocked(std::vector<std::string> rows) {
  if (!term_.styled()) return;  // plain output has no place to redraw
  if (rows.size() > kMaxLiveRows) rows.erase(rows.begin(), rows.end() - kMaxLiveRows);
  if (rows == live_) return;
  EraseLiveLocked();
  live_ = std::move(rows);
  DrawLiveLocked();
}

void ChatView::CommitLocked(const std::vector<std::string>& rows) {
  if (rows.empty()) return;
  EraseLiveLocked();
  for (const auto& r : rows) {
    std::fputs(r.c_str(), out_);
    std::fputc('\n', out_);
  }
  DrawLiveLocked();
}

std::vector<std::string> ChatView::ThinkingRowsLocked(bool whole) const {
  std::vector<std::string> rows = Wrap(thinking_, term_.dim() + term_.italic());
  if (!whole && rows.size() > kThinkingRows) rows.erase(rows.begin(), rows.end() - kThinkingRows);
  return rows;
}

// The live area: the block or thought streaming, then a row per tool call running.
void ChatView::UpdateLiveLocked() {
  std::vector<std::string> rows;
  if (message_ && !thinking_.empty()) {
    rows = ThinkingRowsLocked(false);
  } else if (message_) {
    rows = message_->Tail();
  }
  for (const auto& [id, row] : running_) rows.push_back(row);
  SetLiveLocked(std::move(rows));
}

// A thought ended (the text began, or the message ended): one dim line, or all of it.
void ChatView::EndThinkingLocked() {
  if (thinking_.empty()) return;
  std::vector<std::string> rows;
  if (thinking_whole_) {
    rows = ThinkingRowsLocked(true);
  } else {
    std::string gist = thinking_.substr(thinking_.find_first_not_of(" \n"));
    std::replace(gist.begin(), gist.end(), '\n', ' ');
    if (gist.size() > kCollapsedChars) gist = gist.substr(0, kCollapsedChars) + "…";
    rows = Wrap("▸ thought: " + gist + " (/thinking shows it)", term_.dim());
  }
  last_thinking_ = std::move(thinking_);
  thinking_.clear();
  SetLiveLocked({});
  CommitLocked(rows);
}

void ChatView::EndMessageLocked(const agent::Message* message) {
  EndThinkingLocked();
  if (message_) {
    std::vector<std::string> rows = message_->Finish();
    message_.reset();
    SetLiveLocked({});
    CommitLocked(rows);
  }
  if (message == nullptr) return;
  if (message->stop_reason == agent::StopReason::kError)
    CommitLocked(Wrap("error: " + message->error_message(), term_.color(Color::kRed)));
  if (message->stop_reason == agent::StopReason::kCancelled)
    CommitLocked(Wrap("(cancelled)", term_.dim()));
  UpdateLiveLocked();
}

struct ChatView::Visitor {
  ChatView* v;
  void operator()(const agent::event::MessageStart& e) const {
    if (e.message == nullptr || e.message->role != agent::Role::kAssistant) return;
    v->message_ = std::make_unique<MarkdownStream>(v->term_);
    v->thinking_.clear();
  }
  void operator()(const agent::event::MessageUpdate& e) const {
    if (e.delta == nullptr || !v->message_) return;
    if (e.delta->kind == agent::DeltaKind::kThinking) {
      v->thinking_ += e.delta->text;
    } else if (e.delta->kind == agent::DeltaKind::kText) {
      v->EndThinkingLocked();
      v->message_->Append(e.delta->text);
      v->CommitLocked(v->message_->TakeCompleted());
    }
    v->UpdateLiveLocked();
  }
  void operator()(const agent::event::MessageEnd& e) const {
    if (v->message_) v->EndMessageLocked(e.message);
  }
  void operator()(const agent::event::ToolExecutionStart& e) const {
    if (e.call == nullptr) return;
    const std::string row = v->term_.color(Color::kCyan) + "… " + Title(e.call) + v->term_.reset();
    if (!v->term_.styled()) v->CommitLocked({"→ " + Title(e.call)});
    v->running_[e.call->id] = row;
    v->UpdateLiveLocked();
  }
  void operator()(const agent::event::ToolExecutionEnd& e) const {
    if (e.call == nullptr) return;
    v->running_.erase(e.call->id);
    const std::string line = local::ToolLine(Title(e.call), e.is_error, OutputText(e.output));
    v->SetLiveLocked({});
    v->CommitLocked(v->Wrap(line, v->term_.color(e.is_error ? Color::kRed : Color::kGreen)));
    if (e.output != nullptr)
      for (const auto& diff : e.output->diffs) v->CommitLocked(v->DiffRows(diff));
    v->UpdateLiveLocked();
  }
  void operator()(const agent::event::AutoRetryStart& e) const {
    v->CommitLocked(v->Wrap("… retrying (attempt " + std::to_string(e.retry.attempt) +
                                "): " + e.retry.error_message.substr(0, 200),
                            v->term_.dim()));
  }
  void operator()(const agent::event::AutoCompactionStart& e) const {
    v->CommitLocked(v->Wrap("… compacting the conversation (" + e.reason + ")", v->term_.dim()));
  }
  void operator()(const agent::event::AutoCompactionEnd& e) const {
    const std::string text = !e.error.empty() ? "compaction failed: " + e.error
                             : e.aborted      ? "compaction cancelled"
                                              : "compacted: " + Compact(e.tokens_before) + " → " +
                                               Compact(e.tokens_after) + " tokens";
    v->CommitLocked(v->Wrap(text, v->term_.dim()));
  }
  void operator()(const agent::event::Warning& e) const {
    v->CommitLocked(
        v->Wrap((e.info ? "note: " : "warning: ") + (e.title.empty() ? e.text : e.title),
                v->term_.color(Color::kYellow)));
  }
  void operator()(const agent::event::UsageUpdate& e) const {
    v->context_used_ = e.context_used;
    v->context_size_ = e.context_size;
    v->cost_ = e.session_cost;
  }
  void operator()(const agent::event::ModelChanged& e) const {
    v->model_ = e.provider + "/" + e.model_id;
  }
  template <typename T>
  void operator()(const T&) const {}
};

std::vector<std::string> ChatView::DiffRows(const agent::FileDiff& diff) const {
  std::vector<std::string> rows =
      Wrap("  " + diff.path + (diff.old_text ? "" : " (new file)"), term_.dim());
  dtl::Diff<std::string> d(
      diff.old_text ? agent::tools::SplitLineStrings(*diff.old_text) : std::vector<std::string>{},
      agent::tools::SplitLineStrings(diff.new_text));
  d.compose();
  size_t shown = 0, hidden = 0;
  const int width = std::max(8, term_.width() - 1);
  for (const auto& [line, info] : d.getSes().getSequence()) {
    if (info.type == dtl::SES_COMMON) continue;
    if (shown == kMaxDiffRows) {
      ++hidden;
      continue;
    }
    const bool add = info.type == dtl::SES_ADD;
    std::string text = std::string(add ? "  + " : "  - ") + line;
    // One row each: cut where the terminal ends.
    if (DisplayWidth(text) > width) text = text.substr(0, static_cast<size_t>(width - 1)) + "…";
    rows.push_back(term_.color(add ? Color::kGreen : Color::kRed) + text + term_.reset());
    ++shown;
  }
  if (hidden > 0)
    rows.push_back(term_.dim() + "  … " + std::to_string(hidden) + " more changed lines" +
                   term_.reset());
  return rows;
}

void ChatView::Event(const agent::Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  std::visit(Visitor{this}, event);
}

void ChatView::Print(const std::vector<std::string>& rows) {
  std::lock_guard<std::mutex> lock(mu_);
  CommitLocked(rows);
}

void ChatView::Note(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  CommitLocked(Wrap(text, term_.dim()));
}

void ChatView::EndTurn() {
  std::lock_guard<std::mutex> lock(mu_);
  EndMessageLocked(nullptr);
  running_.clear();
  SetLiveLocked({});
  std::fflush(out_);
}

std::string ChatView::Status() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string s = model_;
  if (context_size_ > 0) {
    s += " · context " + Compact(context_used_) + "/" + Compact(context_size_) + " (" +
         std::to_string(context_used_ * 100 / context_size_) + "%)";
  }
  char cost[32];
  std::snprintf(cost, sizeof cost, " · $%.4f", cost_);
  return s + cost;
}

void ChatView::SetModel(const std::string& model) {
  std::lock_guard<std::mutex> lock(mu_);
  model_ = model;
}

bool ChatView::ToggleThinking() {
  std::lock_guard<std::mutex> lock(mu_);
  thinking_whole_ = !thinking_whole_;
  if (thinking_whole_ && !last_thinking_.empty())
    CommitLocked(Wrap(last_thinking_, term_.dim() + term_.italic()));
  return thinking_whole_;
}

std::unique_lock<std::mutex> ChatView::Hold() {
  std::unique_lock<std::mutex> lock(mu_);
  EraseLiveLocked();
  live_.clear();
  std::fflush(out_);
  return lock;
}

void ChatView::RedrawLocked() { UpdateLiveLocked(); }

}  // namespace lousho::cli::chat

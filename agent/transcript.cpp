// Reading a session's history: messages, entries, stats and the HTML export.
#include "agent/transcript.h"

#include <system_error>

#include "agent/branching.h"
#include "agent/html_export.h"
#include "agent/recorder.h"
#include "support/files.h"

namespace lousho::agent {
namespace fs = std::filesystem;

Transcript::Transcript(std::mutex& mu, const Recorder& recorder, const Branching& branching,
                       TranscriptOwner owner)
    : mu_(mu), recorder_(recorder), branching_(branching), owner_(std::move(owner)) {}

std::vector<Message> Transcript::Messages() const {
  std::vector<Message> out;
  recorder_.Read([&](const History& h) {
    const auto& messages = h.messages();
    out.assign(messages.begin(), messages.end());
  });
  return out;
}

std::vector<Entry> Transcript::Entries() const {
  std::vector<Entry> out;
  recorder_.Read([&](const History& h) { out = h.entries().ToVector(); });
  return out;
}

std::vector<Entry> Transcript::BranchEntries() const {
  std::vector<Entry> out;
  recorder_.Read([&](const History& h) {
    for (const Entry* e : h.Branch()) out.push_back(*e);
  });
  return out;
}

void Transcript::VisitBranch(
    const std::function<void(const std::vector<const Entry*>&)>& fn) const {
  recorder_.Read([&](const History& h) { fn(h.Branch()); });
}

std::string Transcript::Leaf() const {
  std::string out;
  recorder_.Read([&](const History& h) { out = h.leaf(); });
  return out;
}

std::optional<std::string> Transcript::LastAssistantText() const {
  std::optional<std::string> out;
  recorder_.Read([&](const History& h) {
    const auto& msgs = h.messages();
    for (size_t i = msgs.size(); i-- > 0;)
      if (msgs[i].role == Role::kAssistant) {
        out = msgs[i].TextContent();
        return;
      }
  });
  return out;
}

namespace {
void CountMessage(const Message& m, SessionStats& st) {
  ++st.total_messages;
  switch (m.role) {
    case Role::kUser:
      // A hidden message (a summary, a stream rule's reminder) is not the user's.
      if (!m.is_custom()) ++st.user_messages;
      break;
    case Role::kAssistant:
      ++st.assistant_messages;
      for (const auto& b : m.content)
        if (b.type == BlockType::kToolCall) ++st.tool_calls;
      break;
    case Role::kToolResult:
      ++st.tool_results;
      break;
  }
}
}  // namespace

SessionStats Transcript::Stats() const {
  SessionStats st;
  st.id = owner_.id;
  st.file = owner_.file;
  recorder_.Read([&](const History& h) {
    for (const Message& m : h.messages()) CountMessage(m, st);
    // Tokens were spent on abandoned branches too.
    for (const Entry& e : h.entries())
      if (e.kind == EntryKind::kMessage && e.message.role == Role::kAssistant)
        st.tokens.Add(e.message.usage());
  });
  return st;
}

Result<fs::path> Transcript::ExportHtml(const fs::path& path) const {
  fs::path out = path.empty() ? fs::path("lousho-" + owner_.id + ".html") : path;
  if (out.is_relative()) out = owner_.cwd / out;
  std::vector<Entry> branch = BranchEntries();
  HtmlExportInfo info;
  info.title = branching_.Name();
  info.session_id = owner_.id;
  info.agent = owner_.agent;
  info.cwd = owner_.cwd.string();
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);  // a failure shows in the write's error
  // A link the user pointed at the export keeps pointing at it.
  Status st = WriteDiskFile(out, SessionHtml(info, branch), /*follow_symlink=*/true);
  if (!st.ok()) return st.error();
  return out;
}

Usage Transcript::TotalUsage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_usage_;
}

void Transcript::AddUsage(const Usage& usage) {
  std::lock_guard<std::mutex> lock(mu_);
  total_usage_.Add(usage);
}

}  // namespace lousho::agent

// Compaction: the threshold check, the cut between summarized and kept history, and the summary
// request.
#include "agent/compaction.h"

#include "core/server_tool.h"
#include "support/json_util.h"

namespace lousho::agent {

namespace {

constexpr long long kImageTokens = 1200;
// A tool result longer than this is cut in the transcript the summarizer reads: the summary
// needs what was learned, and the kept part holds the latest results verbatim.
constexpr size_t kMaxResultChars = 2000;
constexpr size_t kMaxArgsChars = 500;

long long CharsToTokens(size_t chars) { return static_cast<long long>((chars + 3) / 4); }

std::string Cut(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // UTF-8
  return s.substr(0, end) + " [... " + std::to_string(s.size() - end) + " more bytes]";
}

// A cut may start the kept part at a message of the user or the assistant, never at a tool
// result (its call would be summarized away), and only at a stored entry (not a summary).
bool CanStartKeptPart(const Message& m, const std::string& entry_id) {
  return m.role != Role::kToolResult && !entry_id.empty();
}

void AppendTranscript(const Message& m, std::string* out) {
  switch (m.role) {
    case Role::kUser:
      if (m.custom_type == kCompactionSummaryType) {
        *out += "[Summary of the part before]\n" + m.TextContent() + "\n\n";
        return;
      }
      *out += m.is_custom() ? "[Note to the assistant]\n" : "[User]\n";
      break;
    case Role::kAssistant:
      *out += "[Assistant]\n";
      break;
    case Role::kToolResult:
      *out += "[Result of " + m.tool_name + (m.is_error ? ", failed" : "") + "]\n";
      break;
  }
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        *out += m.role == Role::kToolResult ? Cut(b.text, kMaxResultChars) : b.text;
        *out += "\n";
        break;
      case BlockType::kThinking:
        break;  // the reasoning's outcome is in what followed it
      case BlockType::kToolCall:
        *out += "(calls " + b.name() + " " + Cut(WriteJson(b.arguments()), kMaxArgsChars) + ")\n";
        break;
      case BlockType::kImage:
        *out += "(an image)\n";
        break;
      case BlockType::kServerTool:
        *out += "(" + ServerToolTitle(b.name(), b.arguments()) + ": " +
                Cut(b.server->summary, kMaxResultChars) + ")\n";
        break;
    }
  }
  *out += "\n";
}

constexpr char kSummarySystem[] =
    "You write the summary that replaces the older part of a conversation between a user and a "
    "coding assistant. The assistant will continue the work knowing only your summary and the "
    "latest messages, so keep every fact it needs and drop the rest. Answer with the summary "
    "only.";

constexpr char kSummaryTask[] =
    "Summarize the conversation above for the assistant who will continue it. Cover:\n"
    "- the user's goal and requests, and any constraints or preferences they stated;\n"
    "- what was done: files read, created or changed (with paths), commands run and their "
    "outcome;\n"
    "- decisions made and why, errors met and how they were solved;\n"
    "- the state of the work and what remains to be done next.\n"
    "Be concise and specific; quote paths, names and values exactly.";

}  // namespace

long long EstimateTokens(const Message& m) {
  size_t chars = 0;
  long long images = 0;
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
      case BlockType::kThinking:
        chars += b.text.size();
        break;
      case BlockType::kToolCall:
        chars += b.name().size() + WriteJson(b.arguments()).size();
        break;
      case BlockType::kImage:
        ++images;
        break;
      case BlockType::kServerTool:
        chars +=
            b.name().size() + WriteJson(b.arguments()).size() + WriteJson(b.server->result).size();
        break;
    }
  }
  return CharsToTokens(chars) + images * kImageTokens;
}

long long ContextTokens(const MessageView& context, size_t fresh_from) {
  size_t reported = context.size();
  for (size_t i = context.size(); i-- > fresh_from && i < context.size();) {
    const Message& m = context[i];
    if (m.role == Role::kAssistant && m.stop_reason != StopReason::kError &&
        m.usage().total() > 0) {
      reported = i;
      break;
    }
  }
  long long tokens = 0;
  size_t from = 0;
  if (reported < context.size()) {
    tokens = context[reported].usage().total();
    from = reported + 1;
  }
  for (size_t i = from; i < context.size(); ++i) tokens += EstimateTokens(context[i]);
  return tokens;
}

bool ShouldCompact(const CompactionSettings& settings, long long context_tokens, long long window) {
  if (!settings.auto_compact || window <= 0 || context_tokens <= 0) return false;
  return context_tokens * 100 >= window * static_cast<long long>(settings.threshold_percent);
}

Result<CompactionPlan> PlanCompaction(const History& history, long long keep_recent_tokens) {
  const MessageView msgs = history.messages();
  auto ids = [&history](size_t i) -> const std::string& { return history.message_id(i); };
  const size_t n = msgs.size();
  size_t cut = n;
  long long kept = 0;
  for (size_t i = n; i-- > 1;) {
    kept += EstimateTokens(msgs[i]);
    if (kept >= keep_recent_tokens && CanStartKeptPart(msgs[i], ids(i))) {
      cut = i;
      break;
    }
  }
  if (cut == n) {
    // All of it is recent: keep the last turn of the user, else the last point a cut may take.
    for (size_t i = n; i-- > 1 && cut == n;)
      if (msgs[i].role == Role::kUser && !msgs[i].is_custom() && !ids(i).empty()) cut = i;
    for (size_t i = n; i-- > 1 && cut == n;)
      if (CanStartKeptPart(msgs[i], ids(i))) cut = i;
  }
  bool anything_new = false;
  for (size_t i = 0; i < cut && i < n; ++i)
    if (msgs[i].custom_type != kCompactionSummaryType) anything_new = true;
  if (cut >= n || !anything_new)
    return MakeError(ErrorCode::kCompaction, "Nothing to compact: the history is already short");
  CompactionPlan plan;
  plan.first_kept_id = ids(cut);
  plan.to_summarize.assign(msgs.begin(), msgs.begin() + static_cast<std::ptrdiff_t>(cut));
  plan.kept_messages = n - cut;
  for (size_t i = cut; i < n; ++i) plan.kept_tokens += EstimateTokens(msgs[i]);
  return plan;
}

const char* SummarySystemPrompt() { return kSummarySystem; }

Message SummaryPrompt(std::span<const Message> to_summarize, const std::string& instructions) {
  std::string text = "<conversation>\n";
  for (const Message& m : to_summarize) AppendTranscript(m, &text);
  text += "</conversation>\n\n";
  text += kSummaryTask;
  if (!instructions.empty()) text += "\n\nThe user asks in particular: " + instructions;
  Message m;
  m.role = Role::kUser;
  m.content.push_back(ContentBlock::Text(std::move(text)));
  return m;
}

Result<std::string> SummaryFromReply(const Message& reply) {
  std::string text = reply.TextContent();
  size_t b = text.find_first_not_of(" \t\r\n");
  size_t e = text.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return MakeError(ErrorCode::kCompaction, "The model gave no summary");
  return text.substr(b, e - b + 1);
}

}  // namespace lousho::agent

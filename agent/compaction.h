// Compaction of a session's history: when to compact, where the kept recent part starts, and the
// model request that summarizes the older part (protocol-free; the session runs it).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "agent/history.h"
#include "core/content.h"
#include "core/provider.h"
#include "support/status.h"

namespace lousho::agent {

// The spec's `compaction:` settings. Plain value type.
struct CompactionSettings {
  bool auto_compact = true;              // compact before a request once the threshold is reached
  int threshold_percent = 85;            // share of the model's context window
  long long keep_recent_tokens = 20000;  // about this much of the latest history stays verbatim
};

// A rough token count (4 bytes a token; images count 1200), used where no usage report says
// better.
long long EstimateTokens(const Message& message);

// The tokens the context holds: the usage the provider reported for the last assistant message
// made after the last compaction (index >= `fresh_from`), plus estimates of the messages after
// it; estimates alone when there is no such report.
long long ContextTokens(std::span<const Message> context, size_t fresh_from);

// Whether the context has reached the threshold of `window` (false when the window is unknown).
bool ShouldCompact(const CompactionSettings& settings, long long context_tokens, long long window);

// What a compaction summarizes and what it keeps.
struct CompactionPlan {
  std::string first_kept_id;  // the entry the kept part starts at
  std::vector<Message> to_summarize;
  size_t kept_messages = 0;
  long long kept_tokens = 0;  // estimated
};

// Cuts the history's context so that about `keep_recent_tokens` of the latest messages are kept
// (at least the last user turn). The cut never separates a tool result from its call. Fails with
// LOUSHO_COMPACTION_NOTHING when nothing older than the kept part is left to summarize.
Result<CompactionPlan> PlanCompaction(const History& history, long long keep_recent_tokens);

// What asks the model for the summary: a system prompt, and one user message holding the older
// messages as a plain transcript (tool calls and results included, long results cut) and the
// user's extra instructions. The request carries no tools.
const char* SummarySystemPrompt();
Message SummaryPrompt(std::span<const Message> to_summarize, const std::string& instructions);

// The summary text of the model's reply; an error when the reply holds none.
Result<std::string> SummaryFromReply(const Message& reply);

}  // namespace lousho::agent

// The subagent summary both doors show.
#include "core/subagents.h"

namespace lousho::agent {

namespace {

constexpr size_t kShownCalls = 20;                // the latest of a child's tool calls shown
constexpr size_t kShownTextBytes = size_t{4096};  // the end of its text shown

const char* CallMark(const std::string& status) {
  if (status == "completed") return "✓";
  if (status == "failed") return "✗";
  return "…";
}

}  // namespace

std::string SubagentSummary(const event::SubagentStep& step) {
  std::string out = "**" + step.agent + "**";
  const size_t n = step.calls.size();
  if (n > 0) out += " · " + std::to_string(n) + (n == 1 ? " tool call" : " tool calls");
  out += "\n";
  if (n > kShownCalls) out += "\n- … " + std::to_string(n - kShownCalls) + " earlier";
  for (size_t i = n > kShownCalls ? n - kShownCalls : 0; i < n; ++i)
    out += "\n- " + std::string(CallMark(step.calls[i].status)) + " " + step.calls[i].title;
  if (!step.text.empty()) {
    std::string text = step.text;
    if (text.size() > kShownTextBytes) {
      size_t from = text.size() - kShownTextBytes;
      while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
      text = "…" + text.substr(from);
    }
    out += "\n\n" + text;
  }
  return out;
}

}  // namespace lousho::agent

// What a session has said and spent, read from its history: the messages, the entries, the
// branch, stats, usage and the HTML export.
#pragma once

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/history.h"
#include "support/status.h"

namespace lousho::agent {

class Branching;
class Recorder;

// What a session has said and spent. Plain value type.
struct SessionStats {
  std::string id;
  std::string file;  // empty: not saved
  int user_messages = 0;
  int assistant_messages = 0;
  int tool_calls = 0;
  int tool_results = 0;
  int total_messages = 0;
  Usage tokens;  // every assistant message of the tree, cost included
};

// Who the transcript belongs to (for stats and the export).
struct TranscriptOwner {
  std::string id;
  std::string file;  // the session file; empty: none
  std::filesystem::path cwd;
  std::string agent;
};

// Thread-safe (the session's mutex).
class Transcript {
 public:
  Transcript(std::mutex& mu, const Recorder& recorder, const Branching& branching,
             TranscriptOwner owner);
  Transcript(const Transcript&) = delete;
  Transcript& operator=(const Transcript&) = delete;

  // A copy of the current branch's messages (the model's context).
  std::vector<Message> Messages() const;
  // A copy of every entry of the tree.
  std::vector<Entry> Entries() const;
  // The entries from the root to the leaf.
  std::vector<Entry> BranchEntries() const;
  // Calls `fn` with the entries from the root to the leaf, under the session's lock (no copy):
  // `fn` must not call back into the session.
  void VisitBranch(const std::function<void(const std::vector<const Entry*>&)>& fn) const;
  std::string Leaf() const;
  // The text of the last assistant message of the branch; nullopt when there is none.
  std::optional<std::string> LastAssistantText() const;
  SessionStats Stats() const;
  // Writes the current branch as a standalone HTML page (an empty path: lousho-<id>.html in the
  // working directory; a relative one is taken from there) and returns the path written.
  Result<std::filesystem::path> ExportHtml(const std::filesystem::path& path) const;

  // What the session's prompts (and manual compactions) spent.
  Usage TotalUsage() const;
  void AddUsage(const Usage& usage);

 private:
  std::mutex& mu_;
  const Recorder& recorder_;
  const Branching& branching_;
  TranscriptOwner owner_;
  Usage total_usage_;
};

}  // namespace lousho::agent

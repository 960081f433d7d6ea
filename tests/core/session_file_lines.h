// What the session-file read tests share: an entry line to write, and everything a read gives as
// one text to compare.
#pragma once

#include <string>

#include "agent/session_store.h"
#include "support/json_util.h"

namespace lousho::agent {

// An entry line: a user message of `text` with id `id`, hanging off `parent` (empty: a root),
// stamped `n` ms after 2025-12-01.
inline std::string UserEntryLine(const std::string& id, const std::string& parent, int n,
                                 const std::string& text) {
  Entry e;
  e.id = id;
  e.parent_id = parent;
  e.timestamp_ms = 1764547200000 + n;
  e.message.role = Role::kUser;
  e.message.content.push_back(ContentBlock::Text(text));
  return WriteJson(EntryToJson(e));
}

// Everything a read gives, as one text: the error, or the header's id, the entries, the warnings
// and valid_bytes (the thread count left out).
inline std::string ReadOutcome(const Result<SessionFileContents>& r) {
  if (!r.ok())
    return "error " + std::string(ErrorCodeName(r.error().code)) + ": " + r.error().message;
  std::string out = "header " + r->header.id + "\n";
  for (const Entry& e : r->entries) out += WriteJson(EntryToJson(e)) + "\n";
  for (const std::string& w : r->warnings) out += "warning " + w + "\n";
  return out + "valid " + std::to_string(r->valid_bytes);
}

}  // namespace lousho::agent

// A session's branch as one standalone HTML page: the transcript with thinking, tool calls, their
// results and diffs, styled inline (no script, no external asset).
#pragma once

#include <string>
#include <vector>

#include "agent/history.h"

namespace lousho::agent {

struct HtmlExportInfo {
  std::string title;  // the session's name; empty: "lousho session"
  std::string session_id;
  std::string agent;
  std::string cwd;
};

// The page for the entries of one branch, root first.
std::string SessionHtml(const HtmlExportInfo& info, const std::vector<Entry>& branch);

// `s` with & < > " ' escaped.
std::string HtmlEscape(const std::string& s);

}  // namespace lousho::agent

// What the engine asks of the editor/host: one interface each protocol adapter implements.
#pragma once

#include <json/json.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/content.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

// What a permission request shows: the tool call as the editor already knows it.
struct PermissionRequest {
  std::string tool_call_id;
  std::string tool_name;
  std::string title;
  ToolKind kind = ToolKind::kOther;
  Json::Value raw_input;
  std::vector<ToolLocation> locations;
  std::vector<FileDiff> diffs;
};

enum class PermissionDecision { kAllowOnce, kAllowAlways, kRejectOnce, kRejectAlways, kCancelled };

struct TerminalRequest {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;                  // absolute
  long long output_byte_limit = 0;  // 0: none
};

struct TerminalExit {
  std::optional<int> exit_code;
  std::optional<std::string> signal;
};

struct TerminalOutput {
  std::string output;
  bool truncated = false;
  std::optional<TerminalExit> exit;
};

// Implemented by each protocol adapter. Every call may block until the editor answers, the
// token is cancelled (then the call returns promptly with an error or kCancelled), or the
// connection closes. Thread-safe: called from session workers.
class ClientServices {
 public:
  virtual ~ClientServices() = default;

  virtual PermissionDecision RequestPermission(const std::string& session_id,
                                               const PermissionRequest& request,
                                               const CancelToken& cancel) = 0;

  // Editor file access (unsaved buffers). Only used when the Can* query says yes.
  virtual bool CanReadTextFile() const { return false; }
  virtual bool CanWriteTextFile() const { return false; }
  virtual Result<std::string> ReadTextFile(const std::string& /*session_id*/,
                                           const std::string& /*path*/, int /*line*/, int /*limit*/,
                                           const CancelToken& /*cancel*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client cannot read files");
  }
  virtual Status WriteTextFile(const std::string& /*session_id*/, const std::string& /*path*/,
                               const std::string& /*content*/, const CancelToken& /*cancel*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client cannot write files");
  }

  // Editor terminals. Only used when HasTerminal() says yes.
  virtual bool HasTerminal() const { return false; }
  virtual Result<std::string> CreateTerminal(const std::string& /*session_id*/,
                                             const TerminalRequest& /*request*/,
                                             const CancelToken& /*cancel*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client has no terminal");
  }
  virtual Result<TerminalOutput> GetTerminalOutput(const std::string& /*session_id*/,
                                                   const std::string& /*terminal_id*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client has no terminal");
  }
  // Blocks until the command exits or `cancel` fires (then returns an error).
  virtual Result<TerminalExit> WaitForTerminalExit(const std::string& /*session_id*/,
                                                   const std::string& /*terminal_id*/,
                                                   const CancelToken& /*cancel*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client has no terminal");
  }
  virtual Status KillTerminal(const std::string& /*session_id*/,
                              const std::string& /*terminal_id*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client has no terminal");
  }
  virtual Status ReleaseTerminal(const std::string& /*session_id*/,
                                 const std::string& /*terminal_id*/) {
    return MakeError("LOUSHO_UNSUPPORTED", "client has no terminal");
  }
};

}  // namespace lousho::agent

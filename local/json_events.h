// `lousho run --json`: one JSON object a line on stdout. First a `start` object (the shape's
// version, the session), then the engine's events as the RPC door's frames (rpc_compat's
// encoder: the same objects a `--mode rpc` host reads), lousho run's own `permission_refused`
// and `warning` objects, and last a `result` object. docs/run.md documents the shape.
#pragma once

#include <functional>
#include <string>

#include "core/content.h"
#include "core/events.h"
#include "local/permission_gate.h"

namespace lousho::local {

// The version of the shape; a change that could break a reader raises it.
inline constexpr int kRunJsonVersion = 1;

struct RunStart {
  std::string session_id;
  std::string session_file;  // empty: not saved
  std::string cwd;
  std::string agent;
  std::string model;  // provider/model
  std::string mode;   // the permission mode
};

// How a run ended.
struct RunOutcome {
  int exit_code = 0;
  std::string stop_reason;  // end_turn, max_tokens, max_turn_requests, refusal, cancelled,
                            // or "error"
  std::string error;        // the failure, when stop_reason is "error"
  std::string answer;       // the final reply's text
  agent::Usage usage;       // of this run's model requests
  int refused = 0;          // permission requests refused
  std::string session_id;
  std::string session_file;
};

// Not thread-safe by itself: the caller serialises calls (the session's events come one at a
// time; refusals and the result are written under the caller's lock).
class JsonEventWriter {
 public:
  explicit JsonEventWriter(std::function<void(const std::string& line)> write_line);

  void Start(const RunStart& start);
  void Event(const agent::Event& event);
  void Refused(const Refusal& refusal);
  void Result(const RunOutcome& outcome);

 private:
  std::function<void(const std::string&)> write_;
};

}  // namespace lousho::local

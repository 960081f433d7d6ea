// The loopback redirect of an OAuth login (RFC 8252 section 7.3): a listener on 127.0.0.1 that
// waits for the browser to come back with the authorization code.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent::mcp {

// Listens from construction (an ephemeral port) until destroyed. Thread-compatible.
class LoopbackListener {
 public:
  static Result<std::unique_ptr<LoopbackListener>> Open();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  // http://127.0.0.1:<port>/callback
  const std::string& redirect_uri() const { return redirect_uri_; }
  // Waits for a GET of the callback path whose `state` matches, at most `timeout_ms` or until
  // `cancel`, and answers the browser with a short page. Other requests (a favicon, a wrong
  // state) get an error page and the wait goes on. Returns the callback's query parameters.
  Result<std::map<std::string, std::string>> Wait(const std::string& state, long timeout_ms,
                                                  const CancelToken& cancel);

 private:
  LoopbackListener(int fd, int port);
  int fd_;
  std::string redirect_uri_;
};

}  // namespace lousho::agent::mcp

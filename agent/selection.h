// What the user chose for a session: the permission mode, the model and its thinking level. A
// change takes effect at once (the next model request uses it); its entry joins the history and
// its event follows on the worker (the notice board), then `done` runs.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/history.h"
#include "agent/permissions.h"
#include "support/status.h"

namespace lousho::agent {

class NoticeBoard;

// Thread-safe (the session's mutex).
class Selection {
 public:
  Selection(std::mutex& mu, NoticeBoard& notices, std::shared_ptr<const AgentConfig> agent,
            std::string session_id);
  Selection(const Selection&) = delete;
  Selection& operator=(const Selection&) = delete;

  PermissionMode mode() const;
  // Fails (changing nothing) when too many changes already wait for a busy worker.
  [[nodiscard]] Status SetMode(PermissionMode mode, std::function<void()> done = nullptr);

  ModelChoice model() const;
  [[nodiscard]] Status SetModel(ModelChoice model, std::function<void()> done = nullptr);
  [[nodiscard]] Status SetThinking(ThinkingLevel level, std::function<void()> done = nullptr);
  // Switches to the offered model "provider/model" (AgentConfig::models), building its provider.
  // LOUSHO_MODEL_UNKNOWN when it is not offered or cannot be built (a missing key).
  [[nodiscard]] Status SelectModel(const std::string& id, std::function<void()> done = nullptr);
  bool SupportsImages() const;

  // The mode, model and thinking level last chosen on `branch` (the agent's where it chose
  // none). The session's mutex held.
  void RestoreLocked(const std::vector<const Entry*>& branch);

 private:
  void RestoreModelLocked(const std::vector<const Entry*>& branch);

  std::mutex& mu_;
  NoticeBoard& notices_;
  std::shared_ptr<const AgentConfig> agent_;
  std::string session_id_;
  PermissionMode mode_;
  ModelChoice model_;
};

}  // namespace lousho::agent

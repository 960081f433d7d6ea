// The host's side of ClientServices over the RPC door: dialogs, permission prompts and URL steps
// as extension-UI requests, host tools as host_tool_call frames, each matched to the host's
// answer by id.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/client_services.h"
#include "rpc_compat/codec.h"
#include "support/cancel.h"

namespace lousho::rpc_compat {

// Thread-safe: sessions call it from their workers; the reader thread delivers the host's
// answers (Deliver) and closes it when input ends (CloseAll).
class HostChannel : public agent::PermissionPrompter,
                    public agent::Dialogs,
                    public agent::HostTools,
                    public agent::Elicitation {
 public:
  using WriteFrame = std::function<void(const Json::Value& frame)>;
  // `write` sends one frame to the host. A dialog unanswered after `ui_timeout_ms` (0: never)
  // resolves to its default.
  HostChannel(WriteFrame write, long ui_timeout_ms);

  // An answer from the host (extension_ui_response, host_tool_update, host_tool_result): handed
  // to the request waiting for it; an unknown or settled id is ignored.
  void Deliver(const std::string& type, const Json::Value& frame);
  // Input ended: every waiting request fails, and no new one is sent.
  void CloseAll();
  // A fire-and-forget extension-UI request (notify, setTitle, setStatus ...): `request` gets its
  // type and id here.
  void Tell(Json::Value request);
  // Replaces the host's tools; returns the old set.
  std::vector<agent::HostToolSpec> SwapTools(std::vector<agent::HostToolSpec> tools);

  agent::PermissionDecision RequestPermission(const std::string& session_id,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override;
  Result<std::optional<std::string>> Select(const std::string& session_id, const std::string& title,
                                            const std::vector<std::string>& options,
                                            const CancelToken& cancel) override;
  Result<std::optional<bool>> Confirm(const std::string& session_id, const std::string& title,
                                      const std::string& message,
                                      const CancelToken& cancel) override;
  Result<std::optional<std::string>> Input(const std::string& session_id, const std::string& title,
                                           const std::string& placeholder,
                                           const CancelToken& cancel) override;
  Result<std::optional<std::string>> Editor(const std::string& session_id, const std::string& title,
                                            const std::string& prefill,
                                            const CancelToken& cancel) override;
  // Forms are the ask tool's dialogs here; URL steps are a notify with the URL and a confirm
  // ("done?") that is withdrawn when the step finishes first.
  bool CanAskForm() const override { return false; }
  bool CanOpenUrl() const override { return true; }
  Result<agent::FormReply> AskForm(const std::string& session_id, const agent::FormRequest& request,
                                   const CancelToken& cancel) override;
  Result<agent::ElicitationAction> OpenUrl(const std::string& session_id,
                                           const agent::UrlRequest& request,
                                           const CancelToken& done,
                                           const CancelToken& cancel) override;
  // [rewind] set_editor_text.
  void SetEditorText(const std::string& session_id, const std::string& text) override;
  std::vector<agent::HostToolSpec> List() const override;
  Result<agent::HostToolResult> Call(
      const std::string& session_id, const std::string& tool_call_id, const std::string& name,
      const Json::Value& args, const CancelToken& cancel,
      const std::function<void(const agent::HostToolResult& partial)>& on_update) override;

 private:
  struct Pending {
    std::vector<Json::Value> updates;  // host_tool_update frames not yet handled
    std::optional<Json::Value> reply;
    bool closed = false;  // input ended
  };
  enum class Wait { kReply, kTimeout, kCancelled, kClosed };

  std::string NextId(const char* prefix);
  // Registers a request about to be sent; false once input has ended.
  bool Open(const std::string& id);
  Wait Await(const std::string& id, const CancelToken& cancel, long timeout_ms,
             const std::function<void(const Json::Value&)>& on_update, Json::Value* reply);
  // `sent_id` (may be null) gets the request's id.
  Result<std::optional<UiResponse>> Dialog(Json::Value request, const CancelToken& cancel,
                                           std::string* sent_id = nullptr);

  WriteFrame write_;
  long ui_timeout_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Pending>> pending_;
  bool input_closed_ = false;
  long long next_id_ = 0;
  std::vector<agent::HostToolSpec> tools_;
};

}  // namespace lousho::rpc_compat

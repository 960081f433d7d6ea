// The host's side of ClientServices over the RPC door.
#include "rpc_compat/host_channel.h"

#include <chrono>
#include <utility>

#include "rpc_compat/commands.h"
#include "support/json_util.h"

namespace lousho::rpc_compat {
namespace {
Json::Value NewObject() { return Json::Value(Json::objectValue); }

// The choices of a permission prompt, in the order shown.
constexpr const char* kAllowOnce = "Allow once";
constexpr const char* kAllowAlways = "Always allow";
constexpr const char* kReject = "Reject";
constexpr const char* kRejectAlways = "Always reject";
}  // namespace

HostChannel::HostChannel(WriteFrame write, long ui_timeout_ms)
    : write_(std::move(write)), ui_timeout_ms_(ui_timeout_ms) {}

void HostChannel::Deliver(const std::string& type, const Json::Value& frame) {
  auto id = AsString(MemberOrNull(frame, "id"));
  if (!id) return;  // nothing to match it to
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(*id);
  if (it == pending_.end()) return;  // unknown or already settled: ignored
  if (type == inbound::kHostToolUpdate) {
    it->second->updates.push_back(frame);
  } else if (!it->second->reply) {
    it->second->reply = frame;
  }
  cv_.notify_all();
}

void HostChannel::Tell(Json::Value request) {
  request["type"] = frame::kExtensionUiRequest;
  request["id"] = NextId("ui_");
  write_(request);
}

void HostChannel::SetEditorText(const std::string& /*session_id*/, const std::string& text) {
  Json::Value request(Json::objectValue);
  request["method"] = "set_editor_text";
  request["text"] = text;
  Tell(request);
}

std::vector<agent::HostToolSpec> HostChannel::SwapTools(std::vector<agent::HostToolSpec> tools) {
  std::lock_guard<std::mutex> lock(mu_);
  tools_.swap(tools);
  return tools;
}

bool HostChannel::Open(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (input_closed_) return false;
  pending_[id] = std::make_shared<Pending>();
  return true;
}

std::string HostChannel::NextId(const char* prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  return prefix + std::to_string(++next_id_);
}

HostChannel::Wait HostChannel::Await(const std::string& id, const CancelToken& cancel,
                                     long timeout_ms,
                                     const std::function<void(const Json::Value&)>& on_update,
                                     Json::Value* reply) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return Wait::kClosed;
    p = it->second;
  }
  // Declared before the lock, so it is destroyed after the lock is released.
  ScopedCancelCallback wake(cancel, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  auto settle = [&](Wait w) {
    pending_.erase(id);
    return w;
  };
  for (;;) {
    if (!p->updates.empty()) {
      // Handled on this (the session's) thread, so its events stay in order.
      std::vector<Json::Value> updates;
      updates.swap(p->updates);
      lock.unlock();
      if (on_update)
        for (const auto& u : updates) on_update(u);
      lock.lock();
      continue;
    }
    if (p->reply) {
      *reply = *p->reply;
      return settle(Wait::kReply);
    }
    if (p->closed) return settle(Wait::kClosed);
    if (cancel.cancelled()) return settle(Wait::kCancelled);
    if (timeout_ms <= 0) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !p->reply &&
               p->updates.empty() && !p->closed && !cancel.cancelled()) {
      return settle(Wait::kTimeout);
    }
  }
}

void HostChannel::CloseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  input_closed_ = true;
  for (auto& [id, p] : pending_) p->closed = true;
  cv_.notify_all();
}

Result<std::optional<UiResponse>> HostChannel::Dialog(Json::Value request,
                                                      const CancelToken& cancel,
                                                      std::string* sent_id) {
  const std::string id = NextId("ui_");
  if (sent_id) *sent_id = id;
  request["type"] = frame::kExtensionUiRequest;
  request["id"] = id;
  if (ui_timeout_ms_ > 0) request["timeout"] = static_cast<Json::Int64>(ui_timeout_ms_);
  if (!Open(id)) return MakeError(ErrorCode::kClientError, "the host closed its input");
  write_(request);
  Json::Value reply;
  switch (Await(id, cancel, ui_timeout_ms_, nullptr, &reply)) {
    case Wait::kReply:
      break;
    case Wait::kTimeout:
      return std::optional<UiResponse>();  // resolves to the dialog's default
    case Wait::kCancelled:
      return MakeError(ErrorCode::kCancelled, "cancelled");
    case Wait::kClosed:
      return MakeError(ErrorCode::kClientError, "the host closed its input");
  }
  auto parsed = UiResponse::FromJson(reply);
  if (!parsed.ok()) {
    Json::Value err = NewObject();
    err["type"] = frame::kExtensionError;
    err["extensionPath"] = "extension-ui";
    err["event"] = inbound::kExtensionUiResponse;
    err["error"] = "malformed extension_ui_response " + id + ": " + parsed.error().message;
    write_(err);
    return std::optional<UiResponse>();
  }
  return std::optional<UiResponse>(std::move(*parsed));
}

namespace {
// The text a select, input or editor dialog answered; nullopt when dismissed or timed out.
Result<std::optional<std::string>> TextAnswer(const Result<std::optional<UiResponse>>& answer) {
  if (!answer.ok()) return answer.error();
  if (!*answer || (*answer)->cancelled || !(*answer)->value) return std::optional<std::string>();
  return (*answer)->value;
}
}  // namespace

Result<std::optional<std::string>> HostChannel::Select(const std::string& /*session_id*/,
                                                       const std::string& title,
                                                       const std::vector<std::string>& options,
                                                       const CancelToken& cancel) {
  Json::Value r = NewObject();
  r["method"] = ui::kSelect;
  r["title"] = title;
  r["options"] = Json::Value(Json::arrayValue);
  for (const auto& o : options) r["options"].append(o);
  return TextAnswer(Dialog(std::move(r), cancel));
}

Result<std::optional<bool>> HostChannel::Confirm(const std::string& /*session_id*/,
                                                 const std::string& title,
                                                 const std::string& message,
                                                 const CancelToken& cancel) {
  Json::Value r = NewObject();
  r["method"] = ui::kConfirm;
  r["title"] = title;
  r["message"] = message;
  auto answer = Dialog(std::move(r), cancel);
  if (!answer.ok()) return answer.error();
  if (!*answer || (*answer)->cancelled || !(*answer)->confirmed) return std::optional<bool>();
  return (*answer)->confirmed;
}

Result<std::optional<std::string>> HostChannel::Input(const std::string& /*session_id*/,
                                                      const std::string& title,
                                                      const std::string& placeholder,
                                                      const CancelToken& cancel) {
  Json::Value r = NewObject();
  r["method"] = ui::kInput;
  r["title"] = title;
  if (!placeholder.empty()) r["placeholder"] = placeholder;
  return TextAnswer(Dialog(std::move(r), cancel));
}

Result<std::optional<std::string>> HostChannel::Editor(const std::string& /*session_id*/,
                                                       const std::string& title,
                                                       const std::string& prefill,
                                                       const CancelToken& cancel) {
  Json::Value r = NewObject();
  r["method"] = ui::kEditor;
  r["title"] = title;
  if (!prefill.empty()) r["prefill"] = prefill;
  return TextAnswer(Dialog(std::move(r), cancel));
}

agent::PermissionDecision HostChannel::RequestPermission(const std::string& session_id,
                                                         const agent::PermissionRequest& request,
                                                         const CancelToken& cancel) {
  auto answer = Select(session_id, "Allow " + request.title + "?",
                       {kAllowOnce, kAllowAlways, kReject, kRejectAlways}, cancel);
  if (!answer.ok()) return agent::PermissionDecision::kCancelled;
  // Dismissed or timed out: the safe default.
  if (!*answer) return agent::PermissionDecision::kRejectOnce;
  const std::string& v = **answer;
  if (v == kAllowOnce) return agent::PermissionDecision::kAllowOnce;
  if (v == kAllowAlways) return agent::PermissionDecision::kAllowAlways;
  if (v == kRejectAlways) return agent::PermissionDecision::kRejectAlways;
  return agent::PermissionDecision::kRejectOnce;
}

Result<agent::FormReply> HostChannel::AskForm(const std::string& /*session_id*/,
                                              const agent::FormRequest& /*request*/,
                                              const CancelToken& /*cancel*/) {
  return MakeError(ErrorCode::kClientError, "the host shows dialogs, not forms");
}

Result<agent::ElicitationAction> HostChannel::OpenUrl(const std::string& /*session_id*/,
                                                      const agent::UrlRequest& request,
                                                      const CancelToken& done,
                                                      const CancelToken& cancel) {
  Json::Value note = NewObject();
  note["method"] = ui::kNotify;
  note["message"] = request.message + ": " + request.url;
  note["notifyType"] = "info";
  Tell(std::move(note));
  Json::Value ask = NewObject();
  ask["method"] = ui::kConfirm;
  ask["title"] = request.message;
  ask["message"] = "Open " + request.url + " in a browser and finish there. Done?";
  LinkedCancelSource either(done, cancel);
  std::string id;
  auto answer = Dialog(std::move(ask), either.token(), &id);
  if (answer.ok()) {
    if (!*answer || (*answer)->cancelled || !(*answer)->confirmed)
      return agent::ElicitationAction::kCancel;
    return *(*answer)->confirmed ? agent::ElicitationAction::kAccept
                                 : agent::ElicitationAction::kDecline;
  }
  if (cancel.cancelled() || !done.cancelled()) return answer.error();
  // Finished before the user answered: the question is withdrawn.
  Json::Value withdraw = NewObject();
  withdraw["method"] = ui::kCancel;
  withdraw["targetId"] = id;
  Tell(std::move(withdraw));
  return agent::ElicitationAction::kAccept;
}

std::vector<agent::HostToolSpec> HostChannel::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tools_;
}

Result<agent::HostToolResult> HostChannel::Call(
    const std::string& /*session_id*/, const std::string& tool_call_id, const std::string& name,
    const Json::Value& args, const CancelToken& cancel,
    const std::function<void(const agent::HostToolResult& partial)>& on_update) {
  const std::string id = NextId("host_");
  Json::Value call = NewObject();
  call["type"] = frame::kHostToolCall;
  call["id"] = id;
  call["toolCallId"] = tool_call_id;
  call["toolName"] = name;
  call["arguments"] = args;
  if (!Open(id)) return MakeError(ErrorCode::kClientError, "the host closed its input");
  auto extension_error = [&](const std::string& event, const std::string& error) {
    Json::Value err = NewObject();
    err["type"] = frame::kExtensionError;
    err["extensionPath"] = "host-tool:" + name;
    err["event"] = event;
    err["error"] = error;
    write_(err);
  };
  write_(call);
  auto handle_update = [&](const Json::Value& frame) {
    auto update = HostToolReply::FromJson(frame, /*final=*/false);
    if (!update.ok()) return extension_error(inbound::kHostToolUpdate, update.error().message);
    if (on_update) on_update(update->result);
  };
  Json::Value reply;
  switch (Await(id, cancel, 0, handle_update, &reply)) {
    case Wait::kReply:
      break;
    case Wait::kTimeout:
    case Wait::kCancelled: {
      Json::Value c = NewObject();
      c["type"] = frame::kHostToolCancel;
      c["id"] = NextId("host_cancel_");
      c["targetId"] = id;
      write_(c);
      return MakeError(ErrorCode::kCancelled, "cancelled");
    }
    case Wait::kClosed:
      return MakeError(ErrorCode::kClientError, "the host closed its input");
  }
  auto result = HostToolReply::FromJson(reply, /*final=*/true);
  if (!result.ok()) {
    extension_error(inbound::kHostToolResult, result.error().message);
    return MakeError(ErrorCode::kClientError,
                     "the host sent a malformed result: " + result.error().message);
  }
  return std::move(result->result);
}

}  // namespace lousho::rpc_compat

// The ACP server: what runs in an open session (prompts, mode, model, config options, cancel)
// and what it sends the editor (its updates and commands).
#include <filesystem>

#include "acp/methods.h"
#include "acp/server.h"
#include "acp/server_util.h"
#include "agent/builtin_commands.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::acp {
namespace fs = std::filesystem;
using jsonrpc::Reply;

agent::EventSink Server::MakeSink(const std::string& session_id,
                                  const std::shared_ptr<SessionConfigValues>& values) {
  const ClientCapabilities caps = editor_.capabilities();
  // Events come on the session's worker, one at a time: the values need no lock.
  return [this, session_id, values, caps](const agent::Event& e) {
    // Text chunks, one per stream delta, skip the Json::Value.
    if (auto params = ChunkUpdateParamsJson(session_id, e)) {
      peer_.NotifySerialized(method::kSessionUpdate, *params);
      return;
    }
    ForEachSessionUpdate(e, caps, [&](const Json::Value& u) { SendUpdate(session_id, u); });
    if (const auto* mode = std::get_if<agent::event::ModeChanged>(&e)) {
      if (auto m = agent::ParsePermissionMode(mode->mode_id)) values->mode = *m;
    } else if (const auto* model = std::get_if<agent::event::ModelChanged>(&e)) {
      values->model = model->provider + "/" + model->model_id;
      values->thinking = model->thinking;
    } else {
      return;
    }
    SendUpdate(session_id, ConfigOptionUpdate(*values, view_.models, levels_));
  };
}

void Server::AddSessionSetup(const agent::Session& session, Json::Value* result) const {
  const SessionConfigValues values = ConfigValuesOf(session);
  (*result)["modes"] = ModesToJson(values.mode);
  (*result)["models"] = ModelsToJson(values.model, view_.models);
  (*result)["configOptions"] = ConfigOptionsToJson(values, view_.models, levels_);
}

void Server::SendCommands(const std::string& session_id) {
  Json::Value list(Json::arrayValue);
  for (const auto& c : agent::kBuiltinCommands) {
    Json::Value item = Obj();
    item["name"] = c.name;
    item["description"] = c.description;
    if (c.hint[0] != '\0') {
      Json::Value input = Obj();
      input["hint"] = c.hint;
      item["input"] = input;
    }
    list.append(item);
  }
  std::shared_ptr<agent::Session> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = sessions_.find(session_id); it != sessions_.end()) session = it->second;
  }
  // The session's: the spec's and those from files, none a built-in shadows (SessionCommands),
  // then its MCP servers' prompts (OfferedCommands).
  for (const auto& c :
       session ? agent::OfferedCommands(session->info().commands, session->tools().Commands())
               : std::vector<config::SlashCommand>{}) {
    Json::Value item = Obj();
    item["name"] = c.name;
    item["description"] = c.description.empty() ? c.name : c.description;
    if (!c.hint.empty()) {
      Json::Value input = Obj();
      input["hint"] = c.hint;
      item["input"] = input;
    }
    list.append(item);
  }
  Json::Value u = Obj();
  u["sessionUpdate"] = "available_commands_update";
  u["availableCommands"] = list;
  SendUpdate(session_id, u);
}

void Server::Prompt(const PromptParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto content = PromptFromJson(params.prompt, session->selection().SupportsImages());
  if (!content.ok())
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + content.error().message);
  // The reply moves into the completion; shared so the std::function stays copyable.
  const std::string request_key = WriteJson(reply.id());
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  bool registered;
  {
    std::lock_guard<std::mutex> lock(mu_);
    registered = prompts_.emplace(request_key, session).second;
  }
  Status st = session->Prompt(
      std::move(*content), [this, request_key, shared_reply](Result<agent::TurnResult> res) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          prompts_.erase(request_key);
        }
        if (res.ok()) {
          Json::Value out = Obj();
          out["stopReason"] = StopReasonName(res->stop);
          out["usage"] = PromptUsageToJson(res->usage);  // unstable PromptResponse.usage
          shared_reply->Result(out);
        } else {
          shared_reply->Error(jsonrpc::kInternalError, res.error().message, ErrorData(res.error()));
        }
      });
  if (!st.ok()) {
    if (registered) {
      std::lock_guard<std::mutex> lock(mu_);
      prompts_.erase(request_key);  // this request never started
    }
    if (st.error().code == ErrorCode::kSessionBusy)
      return shared_reply->Error(jsonrpc::kInvalidRequest,
                                 "Invalid Request: a prompt is already running in this session");
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
  }
}

void Server::SetMode(const SetModeParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto mode = agent::ParsePermissionMode(params.mode_id);
  if (!mode)
    return reply.Error(jsonrpc::kInvalidParams,
                       "Invalid params: params.modeId: unknown mode " + params.mode_id);
  // Answered after the mode update has gone out, on the session's worker.
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = session->selection().SetMode(*mode, [shared_reply] { shared_reply->Result(Obj()); });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

// A config option changes through the engine; the answer (all options, as they now are) goes out
// on the session's worker after the config_option_update the change caused.
void Server::SetConfigOption(const SetConfigOptionParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto value = AsString(params.value);
  if (!value)
    return reply.Error(jsonrpc::kInvalidParams, "Invalid params: params.value: expected a string");
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  auto answer = [this, shared_reply, weak = std::weak_ptr<agent::Session>(session)] {
    auto s = weak.lock();
    if (!s) return shared_reply->Error(jsonrpc::kInternalError, "the session is gone");
    Json::Value res = Obj();
    res["configOptions"] = ConfigOptionsToJson(ConfigValuesOf(*s), view_.models, levels_);
    shared_reply->Result(res);
  };
  Status st = Status::Ok();
  if (params.config_id == kConfigMode) {
    auto mode = agent::ParsePermissionMode(*value);
    if (!mode)
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.value: unknown mode " + *value);
    st = session->selection().SetMode(*mode, answer);
  } else if (params.config_id == kConfigModel) {
    st = session->selection().SelectModel(*value, answer);
  } else if (params.config_id == kConfigThoughtLevel) {
    const agent::ThinkingLevel level = agent::ParseThinkingLevel(*value);
    if (*value != agent::ThinkingLevelId(level))
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.value: unknown thinking level " + *value);
    st = session->selection().SetThinking(level, answer);
  } else {
    return shared_reply->Error(
        jsonrpc::kInvalidParams,
        "Invalid params: params.configId: unknown option " + params.config_id);
  }
  if (!st.ok()) {
    const int code = st.error().code == ErrorCode::kModelUnknown ? jsonrpc::kInvalidParams
                                                                 : jsonrpc::kInternalError;
    shared_reply->Error(code, st.error().message, ErrorData(st.error().code));
  }
}

void Server::SetModel(const SetModelParams& params, Reply reply) {
  auto session = FindSession(params.session_id, &reply);
  if (!session) return;
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  Status st = session->selection().SelectModel(params.model_id,
                                               [shared_reply] { shared_reply->Result(Obj()); });
  if (!st.ok()) {
    const int code = st.error().code == ErrorCode::kModelUnknown ? jsonrpc::kInvalidParams
                                                                 : jsonrpc::kInternalError;
    shared_reply->Error(code, st.error().message, ErrorData(st.error().code));
  }
}

void Server::Cancel(const SessionIdParams& params) {
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(params.session_id);
    if (it == sessions_.end()) return;
    s = it->second;
  }
  s->Cancel();
}

// Cancelling a session/prompt request is the same as session/cancel for its session; the prompt
// still answers once, with stopReason "cancelled".
void Server::CancelRequest(const CancelRequestParams& params) {
  std::shared_ptr<agent::Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prompts_.find(WriteJson(params.request_id));
    if (it == prompts_.end()) return;
    s = it->second.lock();
  }
  if (s) s->Cancel();
}

}  // namespace lousho::acp

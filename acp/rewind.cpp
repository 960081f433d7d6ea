// The ACP door's rewind: `_lousho/rewind` {sessionId, messageId, restoreFiles?} moves the session
// back to before that user message (its id is the history entry id the door sends as the
// message's messageId) and puts back the files the agent changed after it. Advertised as
// agentCapabilities._meta["lousho/rewind"]. The answer carries the message's text for the
// client's input box: {text, restored, kept, notes}.
#include "acp/methods.h"
#include "acp/server.h"
#include "acp/server_util.h"
#include "agent/session.h"
#include "support/json_util.h"

namespace lousho::acp {
using jsonrpc::Reply;

namespace {

struct RewindParams {
  std::string session_id;
  std::string message_id;
  bool restore_files = true;
};

Result<RewindParams> RewindParamsFromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  auto message = r.String("messageId", true);
  auto restore = r.Bool("restoreFiles", false);
  if (!r.ok()) return MakeError(ErrorCode::kInvalidParams, r.error());
  return RewindParams{*sid, *message, restore.value_or(true)};
}

Json::Value StringList(const std::vector<std::string>& items) {
  Json::Value list(Json::arrayValue);
  for (const std::string& s : items) list.append(s);
  return list;
}

Json::Value RewindResult(const agent::RewindOutcome& out) {
  Json::Value res = Obj();
  res["text"] = out.text;
  res["restored"] = StringList(out.restored);
  res["kept"] = StringList(out.kept);
  res["notes"] = StringList(out.notes);
  return res;
}

}  // namespace

void Server::AdvertiseRewind(Json::Value* agent_capabilities) {
  (*agent_capabilities)["_meta"][method::kRewindCapability] = true;
}

void Server::BindRewind() {
  peer_.OnRequest(method::kLoushoRewind, [this](const Json::Value& raw, Reply reply) {
    auto params = RewindParamsFromJson(raw);
    if (!params.ok())
      return reply.Error(jsonrpc::kInvalidParams, "Invalid params: " + params.error().message);
    RewindSession(params->session_id, params->message_id, params->restore_files, std::move(reply));
  });
}

void Server::RewindSession(const std::string& session_id, const std::string& message_id,
                           bool restore_files, Reply reply) {
  auto session = FindSession(session_id, &reply);
  if (!session) return;
  // The rewind may ask the user (a file changed outside the agent): on a worker, never here.
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  agent::RewindRequest request;
  request.entry_id = message_id;
  request.restore_files = restore_files;
  request.cancel = shutdown_.token();
  Status st = pool_.Post([session, request, shared_reply] {
    auto out = session->branches().Rewind(request);
    if (out.ok()) return shared_reply->Result(RewindResult(*out));
    const Error& e = out.error();
    if (e.code == ErrorCode::kHistoryInvalid)
      return shared_reply->Error(jsonrpc::kInvalidParams,
                                 "Invalid params: params.messageId: " + e.message,
                                 ErrorData(e.code));
    shared_reply->Error(jsonrpc::kInternalError, e.message, ErrorData(e));
  });
  if (!st.ok())
    shared_reply->Error(jsonrpc::kInternalError, st.error().message, ErrorData(st.error()));
}

}  // namespace lousho::acp

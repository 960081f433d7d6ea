// Fuzzes JSON-RPC line dispatch: input lines go to a Peer over a MemoryTransport with a handler
// table shaped like the ACP server's (gate, typed params, a held reply, a double reply), while
// one outgoing call waits for its response (id 0) among the input lines.
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "acp/codec.h"
#include "support/json_util.h"
#include "support/jsonrpc.h"
#include "support/transport.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
using lousho::FieldReader;
using lousho::jsonrpc::Reply;
using lousho::jsonrpc::RpcError;

Json::Value Obj() { return Json::Value(Json::objectValue); }

void Bind(lousho::jsonrpc::Peer& peer, std::vector<Reply>* held) {
  peer.OnRequest("initialize", [](const Json::Value& params, Reply reply) {
    FieldReader r(params, "params");
    auto version = r.Int("protocolVersion", true);
    const Json::Value* caps = r.Object("clientCapabilities", false);
    if (!r.ok()) return reply.Error(lousho::jsonrpc::kInvalidParams, r.error());
    auto c = lousho::acp::ClientCapabilitiesFromJson(caps ? *caps : Json::Value());
    Json::Value res = Obj();
    res["protocolVersion"] = static_cast<Json::Int64>(*version);
    res["fs"] = c.fs_read || c.fs_write;
    reply.Result(res);
  });
  peer.OnRequest("session/new", [](const Json::Value& params, Reply reply) {
    FieldReader r(params, "params");
    auto cwd = r.String("cwd", true);
    (void)r.Array("mcpServers", false);
    if (!r.ok()) return reply.Error(lousho::jsonrpc::kInvalidParams, r.error());
    Json::Value res = Obj();
    res["sessionId"] = "sess-" + *cwd;
    reply.Result(res);
  });
  peer.OnRequest("session/prompt", [held](const Json::Value& params, Reply reply) {
    FieldReader r(params, "params");
    (void)r.String("sessionId", true);
    const Json::Value* prompt = r.Array("prompt", true);
    if (!r.ok()) return reply.Error(lousho::jsonrpc::kInvalidParams, r.error());
    auto blocks = lousho::acp::PromptFromJson(*prompt, true);
    if (!blocks.ok()) return reply.Error(lousho::jsonrpc::kInvalidParams, blocks.error().message);
    // A turn answers later, from elsewhere: hold the reply (dropped ones answer with an error).
    if (held->size() < 8) held->push_back(std::move(reply));
  });
  peer.OnRequest("session/set_mode", [](const Json::Value& params, Reply reply) {
    FieldReader r(params, "params");
    (void)r.String("sessionId", true);
    (void)r.String("modeId", true);
    if (!r.ok()) return reply.Error(lousho::jsonrpc::kInvalidParams, r.error());
    reply.Result(Obj());
    reply.Result(Obj());  // a second answer must be a no-op
  });
  peer.OnNotification("session/cancel", [held](const Json::Value& params) {
    FieldReader r(params, "params");
    (void)r.String("sessionId", true);
    if (r.ok() && !held->empty()) {
      Json::Value res = Obj();
      res["stopReason"] = "cancelled";
      held->back().Result(res);
    }
  });
  peer.OnNotification("$/cancel_request", [held](const Json::Value& params) {
    FieldReader r(params, "params");
    const Json::Value* id = r.Any("requestId", true);
    if (!r.ok()) return;
    for (Reply& reply : *held)
      if (!reply.answered() && reply.id() == *id)
        reply.Error(lousho::jsonrpc::kRequestCancelled, "cancelled");
  });
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lousho::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lousho::MemoryTransport transport;
  std::vector<Reply> held;
  bool initialized = false;
  lousho::jsonrpc::PeerOptions options;
  options.gate = [&initialized](const std::string& method) -> std::optional<RpcError> {
    if (method == "initialize") {
      initialized = true;
      return std::nullopt;
    }
    if (!initialized) return RpcError{-32000, "not initialized", Json::Value()};
    return std::nullopt;
  };
  {
    lousho::jsonrpc::Peer peer(&transport, options);
    Bind(peer, &held);
    // One request of ours is pending before any input is read, so a response line can meet it.
    // Only when the input could hold a response: the extra thread costs most of a run.
    std::string_view in = lousho::fuzz::AsView(data, size);
    bool may_answer = in.find("\"result\"") != std::string_view::npos ||
                      in.find("\"error\"") != std::string_view::npos;
    lousho::CancelSource cancel;
    std::thread caller;
    if (may_answer) {
      caller = std::thread([&] {
        Json::Value params = Obj();
        params["sessionId"] = "sess-1";
        auto res = peer.Call("session/request_permission", params, cancel.token());
        if (res.ok()) (void)lousho::acp::PermissionDecisionFromJson(*res);
      });
      transport.WaitForOutput(1, 10000);
    }
    for (std::string& line : lousho::fuzz::SplitLines(in, 256)) transport.Push(std::move(line));
    transport.Close();
    peer.Run();
    if (caller.joinable()) caller.join();
    held.clear();  // answers (internal error) the replies still held, while the peer lives
  }
  return 0;
}

// The offline provider `script/<name>`: plays a scripted reply list, no network. The engine's
// test double and the README demo's model.
#pragma once

#include "config/agent_spec.h"
#include "core/provider.h"

namespace lousho::agent {

// Immutable after construction; Stream may run on several sessions at once.
class ScriptProvider : public Provider {
 public:
  explicit ScriptProvider(config::Script script);
  Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks& retry) override;
  bool SupportsImages() const override { return true; }
  // A nominal window, so editors can show how full the offline conversation is.
  long long ContextWindow() const override { return 200000; }

 private:
  config::Script script_;
};

}  // namespace lousho::agent

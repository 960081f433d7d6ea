// A tool the host runs (the RPC door's host tools): the model sees its schema, and a call goes to
// the session's HostTools service.
#pragma once

#include <memory>

#include "core/client_services.h"
#include "core/tool.h"

namespace lousho::agent {

// The host owns what its tools do, so calls run without a permission prompt. A session without a
// HostTools service fails the call.
std::shared_ptr<Tool> MakeHostTool(HostToolSpec spec);

}  // namespace lousho::agent

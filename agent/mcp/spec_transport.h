// The transport a server's spec names (stdio, streamable HTTP, legacy SSE), opened for the MCP
// client.
#pragma once

#include <memory>

#include "agent/mcp/client.h"
#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent::mcp {

// Starts the server's process (stdio) or opens its HTTP transport, within `timeout_ms`.
Result<std::unique_ptr<McpLineTransport>> OpenSpecTransport(const config::McpServerSpec& spec,
                                                            const ClientOptions& options,
                                                            const CancelToken& cancel,
                                                            long timeout_ms);

}  // namespace lousho::agent::mcp

// Internal: answers to server→client requests (ping, sampling, elicitation, roots).
#pragma once

#include "mcpclass/client/client.hpp"

namespace mcpclass::client {

/// The result for `request`, or throws jsonrpc::ProtocolError (-32601 when the host provides no
/// callback for it).
json::value answer_server_request(const jsonrpc::Request& request, const ClientOptions& options);

}  // namespace mcpclass::client

// Exception types of the MCP client: callers tell transport failures, timeouts, error answers and
// malformed answers apart by type.
// Thread-safety: plain exception values.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace mcpclass::client {

/// Base of every error the client throws.
class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The peer cannot be reached or went away: connection refused, process exited, stream broken.
class TransportError : public ClientError {
 public:
  using ClientError::ClientError;
};

/// No answer within the request's timeout (the client sent notifications/cancelled).
class TimeoutError : public ClientError {
 public:
  using ClientError::ClientError;
};

/// The server answered with a JSON-RPC error.
class RpcError : public ClientError {
 public:
  explicit RpcError(jsonrpc::Error error)
      : ClientError("server error " + std::to_string(error.code) + ": " + error.message),
        error_(std::move(error)) {}
  const jsonrpc::Error& error() const noexcept { return error_; }

 private:
  jsonrpc::Error error_;
};

/// The server broke the protocol: unsupported version, malformed result, missing fields.
class ProtocolViolation : public ClientError {
 public:
  using ClientError::ClientError;
};

}  // namespace mcpclass::client

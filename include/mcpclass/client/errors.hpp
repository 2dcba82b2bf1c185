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

/// The HTTP server answered a request with an error status and no JSON-RPC answer (e.g. a URL
/// that is not an MCP endpoint). A session the server forgot (404 on a session) is a plain
/// TransportError instead: a new session fixes it.
class HttpStatusError : public TransportError {
 public:
  HttpStatusError(int status, const std::string& message)
      : TransportError(message), status_(status) {}
  int status() const noexcept { return status_; }
  /// A 4xx other than 408 and 429: the request or the URL is wrong, so retrying cannot help.
  bool permanent() const noexcept {
    return status_ >= 400 && status_ < 500 && status_ != 408 && status_ != 429;
  }

 private:
  int status_;
};

/// The HTTPS peer's certificate was refused (unknown CA, another host name, expired): the
/// connection is not trusted, and retrying cannot help until the server or `ca_file` changes.
class CertificateError : public TransportError {
 public:
  using TransportError::TransportError;
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

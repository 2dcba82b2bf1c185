// The outbound side of one incoming message: how the engine talks back to a transport.
#pragma once

#include <boost/json/value.hpp>

#include <memory>
#include <optional>

namespace mcpclass::server {

/// Receives what the engine sends in answer to one incoming message. A transport implements it:
/// stdio writes lines, Streamable HTTP picks a JSON body or an SSE stream.
/// Thread-safety: implementations must accept calls from any thread. For a request's stream the
/// engine calls close exactly once and never sends after it; the standalone notification stream
/// of a session only ever gets send().
class Stream {
 public:
  virtual ~Stream() = default;
  /// A notification or server→client request related to the message (progress, logs, sampling).
  virtual void send(boost::json::value message) = 0;
  /// The end: the response (or batch of responses), or nothing for notifications, responses and
  /// cancelled requests.
  virtual void close(std::optional<boost::json::value> final_message) = 0;
  /// Ends the connection that carries this stream while the request goes on (SEP-1699 polling):
  /// what is sent afterwards, the final message included, is kept for the client to fetch by
  /// reconnecting. Returns false, changing nothing, when the transport cannot resume the stream
  /// (the default; Streamable HTTP can once it sent an event id).
  virtual bool close_for_reconnect() { return false; }
};

using StreamPtr = std::shared_ptr<Stream>;

}  // namespace mcpclass::server

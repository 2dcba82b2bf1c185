// Internal: pieces the HTTP client transports share.
#pragma once

#include "mcpclass/client/transport.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "net/http_client.hpp"

#include <boost/json.hpp>

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::transport::client::detail {

/// options.headers with `${ENV}` expanded, as a list.
std::vector<std::pair<std::string, std::string>> expanded_headers(const HttpClientOptions& options);

/// What a message is, for routing its answer.
struct MessageKind {
  std::optional<jsonrpc::Id> request_id;  ///< set for requests
  std::string method;                     ///< empty for responses
};
MessageKind kind_of(const boost::json::value& message);

/// Parses a JSON body; nullopt when it is not JSON.
std::optional<boost::json::value> parse_body(std::string_view body);

/// True when `v` is a response (or batch holding one) whose id is `id`.
bool answers(const boost::json::value& v, const jsonrpc::Id& id);

/// Sends the W3C `traceparent` and `tracestate` a request carries in `params._meta` (MCP
/// 2026-07-28, SEP-414) as the HTTP headers too, so HTTP middleboxes and servers that read only
/// the headers join the same trace. Only a well-formed `traceparent` is sent (W3C: a header
/// value the receiver would have to drop is not worth sending).
void add_trace_headers(net::HttpRequest& request, const boost::json::value& message);

/// `Mcp-Name` value: ASCII as is, anything else as `=?base64?…?=`.
std::string header_safe(std::string_view value);

/// The client error for an engine failure of `kind`: mcpclass::client::CertificateError when the
/// peer's certificate was refused, else mcpclass::client::TransportError, with `message`.
std::exception_ptr transport_error(net::HttpFailure kind, const std::string& message);

}  // namespace mcpclass::transport::client::detail

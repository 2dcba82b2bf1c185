// JSON-RPC 2.0 messages as plain values, parsed from and written to Boost.JSON.
// Thread-safety: all types are values; free functions are reentrant.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

namespace mcpclass::jsonrpc {

namespace json = boost::json;

/// Standard JSON-RPC 2.0 error codes plus the MCP-defined ones we emit.
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kResourceNotFound = -32002,  ///< MCP: resources/read of an unknown URI.
  kRequestCancelled = -32800,  ///< Local only: an awaited request was cancelled.
  kRequestTimeout = -32001,    ///< Local only: an awaited request timed out.
};

/// A request id: a string or an integer, never null.
using Id = std::variant<std::int64_t, std::string>;

json::value to_json(const Id& id);
/// A stable textual key for maps ("i:7", "s:abc") so 7 and "7" stay distinct.
std::string id_key(const Id& id);

/// The error object of a response.
struct Error {
  Error() = default;
  Error(int error_code, std::string error_message, std::optional<json::value> error_data = {})
      : code(error_code), message(std::move(error_message)), data(std::move(error_data)) {}

  int code = kInternalError;
  std::string message;
  std::optional<json::value> data;

  json::object to_json() const;
};

struct Request {
  Id id;
  std::string method;
  json::value params;  ///< null when absent; otherwise an object or array.
};

struct Notification {
  std::string method;
  json::value params;  ///< null when absent.
};

/// A response: exactly one of result or error. `id` is empty only for errors about a message
/// whose id could not be read (parse errors, invalid requests).
struct Response {
  std::optional<Id> id;
  std::variant<json::value, Error> outcome;

  bool is_error() const { return std::holds_alternative<Error>(outcome); }
  const json::value& result() const { return std::get<json::value>(outcome); }
  const Error& error() const { return std::get<Error>(outcome); }
};

using Message = std::variant<Request, Notification, Response>;

/// An invalid message: the error to answer with, and the id if one could be recovered.
struct Invalid {
  std::optional<Id> id;
  Error error;
};

/// Limits that turn hostile input into a clean parse error.
struct ParseLimits {
  std::size_t max_bytes = 4 * 1024 * 1024;
  std::size_t max_depth = 64;
};

/// Parses text into JSON within the limits; on failure returns a kParseError error.
std::variant<json::value, Error> parse_json(std::string_view text, const ParseLimits& limits = {});

/// Reads one message (not a batch) from a JSON value.
std::variant<Message, Invalid> from_json(const json::value& v);
/// The same, moving a request's or notification's params out of `v` instead of copying them.
std::variant<Message, Invalid> from_json(json::value&& v);

json::object to_json(const Request& r);
json::object to_json(const Notification& n);
json::object to_json(const Response& r);
json::object to_json(const Message& m);

/// In `result`'s storage, so a result built in a per-request resource is moved, not copied.
json::object make_result(const Id& id, json::value result);
json::object make_error(const std::optional<Id>& id, Error error);
json::object make_request(const Id& id, std::string_view method, json::value params);
json::object make_notification(std::string_view method, json::value params);

/// `params._meta` when params is an object holding an object there (MCP's request metadata:
/// progress tokens, and the stateless revision's protocol version); otherwise nullptr.
const json::object* meta_of(const json::value& params);

/// Thrown by request handlers to answer with a JSON-RPC error instead of a result.
class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(int code, std::string message, std::optional<json::value> data = std::nullopt);
  const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

}  // namespace mcpclass::jsonrpc

// Tools: definition, result, handler.
#pragma once

#include "mcpclass/server/request_context.hpp"
#include "mcpclass/server/tool_admission.hpp"

#include <boost/json.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace mcpclass::server {

/// What a tool returns: content blocks, optional structured content, and whether it failed.
struct ToolResult {
  json::array content;
  std::optional<json::value> structured_content;
  bool is_error = false;
  /// The result's `_meta` (namespaced keys, e.g. io.mcpclass/provenance); absent when empty.
  json::object meta;

  json::object to_json() const&;
  /// The same, moving the content out instead of copying it.
  json::object to_json() &&;
  /// One text block; the common case.
  static ToolResult text(std::string text, bool is_error = false);
  /// A failure the model should see (isError:true), not a protocol error.
  static ToolResult error(std::string message) { return text(std::move(message), true); }
};

/// Thrown by a tool handler to fail with an isError:true result carrying the message.
class ToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs a tool. Arguments were already validated against the input schema. May run on a worker
/// thread; must be safe to call concurrently.
using ToolHandler = std::function<ToolResult(const json::object& arguments, RequestContext& ctx)>;

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  json::object input_schema{{"type", "object"}, {"properties", json::object{}}};
  std::optional<json::object> output_schema;
  json::object annotations;
  ToolHandler handler;
  /// Run on the transport's thread instead of the executor: for handlers that take microseconds
  /// and never block (no sleeps, no client requests).
  bool run_inline = false;
  /// Admission control (optional): what bounds the calls waiting for the executor.
  ToolAdmit admit;

  /// The `tools/list` entry (input schema served verbatim).
  json::object definition() const;
};

}  // namespace mcpclass::server

// Internal: what every tool of the service shares: a handler timed into ToolMetrics, and a
// result whose structured content is also its text block.
#pragma once

#include "mcpclass/server/server.hpp"
#include "mcpclass/service/tool_metrics.hpp"

#include <boost/json.hpp>

#include <memory>
#include <string>

namespace mcpclass::service::detail {

/// `handler` timed into `metrics` under (tool, kind); `handler` itself when there are none.
server::ToolHandler timed(server::ToolHandler handler, std::shared_ptr<ToolMetrics> metrics,
                          std::string tool, std::string kind);

/// The text block and the structured content, both in `value`'s storage.
server::ToolResult structured(boost::json::object value);

}  // namespace mcpclass::service::detail

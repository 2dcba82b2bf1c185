// MCP logging levels (RFC 5424 severities), lowest first.
#pragma once

#include <optional>
#include <string_view>

namespace mcpclass::server {

enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };

std::string_view to_string(LogLevel level);
std::optional<LogLevel> parse_log_level(std::string_view name);

}  // namespace mcpclass::server

#include "service/tool_results.hpp"

#include <chrono>

namespace mcpclass::service::detail {

namespace json = boost::json;

server::ToolHandler timed(server::ToolHandler handler, std::shared_ptr<ToolMetrics> metrics,
                          std::string tool, std::string kind) {
  if (!metrics) return handler;
  // The series is looked up once, here: a call only adds to its counters.
  ToolMetrics::Series& series = metrics->series(tool, kind);
  return [handler = std::move(handler), metrics = std::move(metrics), &series](
             const json::object& args, server::RequestContext& ctx) {
    const auto start = std::chrono::steady_clock::now();
    try {
      server::ToolResult result = handler(args, ctx);
      ToolMetrics::record(series, std::chrono::steady_clock::now() - start, result.is_error);
      return result;
    } catch (...) {
      ToolMetrics::record(series, std::chrono::steady_clock::now() - start, true);
      throw;
    }
  };
}

server::ToolResult structured(json::object value) {
  const json::storage_ptr& sp = value.storage();
  json::string text(sp);
  json::serializer serializer;
  serializer.reset(&value);
  char buffer[1024];
  while (!serializer.done()) text.append(serializer.read(buffer));
  json::object block(2, sp);
  block.emplace("type", "text");
  block.emplace("text", std::move(text));
  // Constructed, never assigned: a Boost.JSON assignment keeps the target's storage, so it
  // would copy everything back into the default resource.
  server::ToolResult r{json::array(sp), json::value(std::move(value)), false, json::object(sp)};
  r.content.emplace_back(std::move(block));
  return r;
}

}  // namespace mcpclass::service::detail

// Internal: the built-in handlers of the HTTP front, one file each; make_front() (handlers.cpp)
// registers them in the table.
// Thread-safety: handlers hold no per-request state; serve() runs on connection strands,
// concurrently.
#pragma once

#include "transport/server/http/front.hpp"

#include <memory>

namespace mcpclass::transport::server {

class HttpApp;

/// Streamable HTTP: POST /mcp (handler_mcp_post.cpp), GET /mcp, the SSE stream
/// (handler_mcp_get.cpp), DELETE /mcp (handler_mcp_delete.cpp).
std::shared_ptr<HttpHandler> mcp_post_handler();
std::shared_ptr<HttpHandler> mcp_get_handler();
std::shared_ptr<HttpHandler> mcp_delete_handler();
/// Legacy HTTP+SSE: GET /sse and POST /messages (handler_legacy.cpp).
std::shared_ptr<HttpHandler> legacy_sse_handler();
std::shared_ptr<HttpHandler> legacy_messages_handler();
/// The router dialects: POST /mcp/<method> (handler_router.cpp).
std::shared_ptr<HttpHandler> router_handler();
/// GET /health, /health/live, /health/ready (handler_health.cpp).
std::shared_ptr<HttpHandler> health_handler();
std::shared_ptr<HttpHandler> liveness_handler();
std::shared_ptr<HttpHandler> readiness_handler();
/// GET /metrics (handler_metrics.cpp).
std::shared_ptr<HttpHandler> metrics_handler();
/// /.well-known/*: the protected-resource metadata, 404 for the rest (handler_metadata.cpp).
std::shared_ptr<HttpHandler> metadata_handler();
/// A mounted application, every method (handler_app.cpp).
std::shared_ptr<HttpHandler> app_handler(std::shared_ptr<HttpApp> app);

}  // namespace mcpclass::transport::server

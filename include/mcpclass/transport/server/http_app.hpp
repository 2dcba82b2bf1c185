// An application mounted on the HTTP server next to MCP (e.g. the OpenAI-compatible routing
// proxy, mcpclass/route/route_proxy.hpp): the server reads the request with its limits, checks
// Host, Origin and the access token, then hands requests on the app's paths to the app, which
// answers through an HttpAppResponse, whole or streamed, from any thread.
// Thread-safety: handle() is called from the server's I/O threads, concurrently; it must return
// quickly (slow work goes elsewhere) and every HttpAppResponse member may be called from any
// thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace mcpclass::transport::server {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

/// A request the server read completely (body within max_body_bytes).
struct HttpAppRequest {
  std::string method;  ///< "GET", "POST", ...
  std::string target;  ///< path and query, as sent
  std::string path;    ///< target without the query
  HttpHeaders headers;
  std::string body;
  /// The address of the connection's peer ("127.0.0.1", "::1"): the caller as the socket sees it
  /// (behind a proxy, the proxy's), for per-caller scoping when a request names no caller.
  std::string client_address;
  /// The io_context of the connection's I/O thread, which handle() runs on: work the app starts
  /// there (e.g. an upstream exchange) answers without waking another thread.
  std::shared_ptr<boost::asio::io_context> io_context;

  /// The first header of that name (case-insensitive), or empty.
  std::string_view header(std::string_view name) const;
};

/// The answer to one HttpAppRequest. Either respond() once, or begin(), write()..., end() (a
/// chunked body). Calls after the exchange ended, or after the client went away, are ignored.
class HttpAppResponse {
 public:
  virtual ~HttpAppResponse() = default;

  /// A whole response with Content-Length.
  virtual void respond(unsigned status, HttpHeaders headers, std::string body) = 0;
  /// Starts a chunked response: the status line and headers go out now.
  virtual void begin(unsigned status, HttpHeaders headers) = 0;
  /// One piece of the body, sent as soon as the connection can take it.
  virtual void write(std::string data) = 0;
  /// The last chunk: the response is complete.
  virtual void end() = 0;
  /// Ends the response without its last chunk and closes the connection: the client sees a
  /// truncated answer (for an upstream that broke mid-answer).
  virtual void abort() = 0;
  /// `f` runs once (on some thread) when the client goes away or the server stops before the
  /// response ended; at once when that already happened. Replaces an earlier callback.
  virtual void on_cancel(std::function<void()> f) = 0;
};

class HttpApp {
 public:
  virtual ~HttpApp() = default;
  /// Whether `path` belongs to the app (checked before the server's own routes 404 it).
  virtual bool handles(std::string_view path) const = 0;
  virtual void handle(HttpAppRequest request, std::shared_ptr<HttpAppResponse> response) = 0;
  /// The route label of /metrics' request counters for these paths (e.g. "route").
  virtual std::string metrics_label() const { return "app"; }
  /// The MCP tool whose JWT scopes (`server.http.auth.jwt.scopes.tools`) a request on `path`
  /// needs, as if it called that tool: an app that answers what a tool answers asks for the
  /// same scopes (403 insufficient_scope before handle()). Empty: the default scopes only.
  virtual std::string scope_tool(std::string_view path) const {
    (void)path;
    return {};
  }
  /// The body of a 413 the server answers on the app's paths before handle() ran (the app's
  /// error format). Empty: the server's own JSON-RPC error body.
  virtual std::string too_large_body(std::string_view message) const {
    (void)message;
    return {};
  }
  /// HttpServer::stop() calls this once requests in flight outlived shutdown_timeout: cut the
  /// app's work short, so each of them still answers (an error, or a truncated stream).
  virtual void cancel_all() {}
};

}  // namespace mcpclass::transport::server

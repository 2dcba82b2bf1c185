// Internal: what the HTTP front does with a request, apart from the connection's I/O: the
// middleware chain run when its header arrives (before its body is read), and the handler table
// that serves it once the body is in. Handlers and middleware are registered, each in its own
// file; make_front() (handlers.cpp) builds the server's table from its options.
// Thread-safety: built before the server starts, then only read; admit(), serve() and
// refuse_unreadable() run on connection strands, concurrently.
#pragma once

#include "transport/server/http/exchange.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/verb.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::transport::server {

/// Serves the requests of one method on one path (or family of paths).
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  /// The request's body is in. Answers through `exchange`: now, or later from any thread through
  /// exchange.post() (holding the exchange).
  virtual void serve(Exchange& exchange, Request& request) = 0;
  /// The body of a 413 answered on this handler's paths before it ran (its error format).
  /// Empty: the server's JSON-RPC error body.
  virtual std::string too_large_body(std::string_view message) const {
    (void)message;
    return {};
  }
};

/// Runs when a request's header arrives: true when the request may go on; otherwise it answered
/// through the exchange (and the body is never read).
class HttpMiddleware {
 public:
  virtual ~HttpMiddleware() = default;
  virtual bool admit(Exchange& exchange, const Request& header) = 0;
};

/// Who may call a route.
enum class Access {
  token,  ///< the access token middleware checks the request (when auth is configured)
  open,   ///< anyone: probes, the protected-resource metadata
};

/// One entry of the table: a path (or path family), its handlers by method, and how it counts.
struct HttpRoute {
  std::string label;  ///< the /metrics route label
  Access access = Access::token;
  /// By method, in the order of the Allow header; `any` stands for every method.
  std::vector<std::pair<boost::beast::http::verb, std::shared_ptr<HttpHandler>>> handlers;
  std::shared_ptr<HttpHandler> any;

  /// Adds the handler of `method`.
  HttpRoute& on(boost::beast::http::verb method, std::shared_ptr<HttpHandler> handler);
  /// The handler of `method`, or nullptr.
  HttpHandler* handler(boost::beast::http::verb method) const;
  /// "GET, POST": the Allow header of a 405.
  std::string allow() const;
};

class HttpFront {
 public:
  /// The route of exactly `path`.
  HttpRoute& route(std::string path, std::string label, Access access = Access::token);
  /// The route of every path that starts with `prefix` (after the exact ones, in order added).
  HttpRoute& prefix(std::string prefix, std::string label, Access access = Access::token);
  /// The route of the paths `claims` accepts (a mounted application's), after the prefixes.
  HttpRoute& mount(std::function<bool(std::string_view path)> claims, std::string label,
                   Access access = Access::token);
  /// Appends to the chain run when a header arrives.
  void use(std::shared_ptr<HttpMiddleware> middleware);

  /// The route of `path`, or nullptr.
  const HttpRoute* find(std::string_view path) const;

  /// The chain, when the header arrives; false when the request was answered.
  bool admit(Exchange& exchange, const Request& header) const;
  /// The admitted request, its body in: its handler, or 405.
  void serve(Exchange& exchange, Request request) const;
  /// Answers a request that could not be read (413, 431, 400).
  void refuse_unreadable(Exchange& exchange, const Request& partial,
                         boost::beast::error_code ec) const;

 private:
  struct Matcher {
    std::function<bool(std::string_view)> matches;
    HttpRoute route;
  };
  std::map<std::string, HttpRoute, std::less<>> exact_;
  std::vector<Matcher> matchers_;
  std::vector<std::shared_ptr<HttpMiddleware>> chain_;
};

/// Splits a request target into path and query (after '?').
std::pair<std::string_view, std::string_view> split_target(std::string_view target);

/// The server's front: every built-in handler and the middleware, from `shared`'s options.
std::shared_ptr<const HttpFront> make_front(const HttpShared& shared);

}  // namespace mcpclass::transport::server

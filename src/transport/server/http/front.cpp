// The handler table (lookup by path, then method) and the chain run when a header arrives.
#include "transport/server/http/front.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/beast/http/error.hpp>

#include <fmt/format.h>

namespace mcpclass::transport::server {

namespace beast = boost::beast;
namespace http = beast::http;

std::pair<std::string_view, std::string_view> split_target(std::string_view target) {
  const auto question = target.find('?');
  return {target.substr(0, question),
          question == std::string_view::npos ? "" : target.substr(question + 1)};
}

HttpRoute& HttpRoute::on(http::verb method, std::shared_ptr<HttpHandler> handler) {
  if (method == http::verb::unknown) {
    any = std::move(handler);
  } else {
    handlers.emplace_back(method, std::move(handler));
  }
  return *this;
}

HttpHandler* HttpRoute::handler(http::verb method) const {
  if (any) return any.get();
  for (const auto& [verb, h] : handlers)
    if (verb == method) return h.get();
  return nullptr;
}

std::string HttpRoute::allow() const {
  std::string out;
  for (const auto& [verb, h] : handlers) {
    if (!out.empty()) out += ", ";
    out += http::to_string(verb);
  }
  return out;
}

HttpRoute& HttpFront::route(std::string path, std::string label, Access access) {
  auto& r = exact_[std::move(path)];
  r.label = std::move(label);
  r.access = access;
  return r;
}

HttpRoute& HttpFront::prefix(std::string prefix, std::string label, Access access) {
  return mount(
      [prefix = std::move(prefix)](std::string_view path) { return path.starts_with(prefix); },
      std::move(label), access);
}

HttpRoute& HttpFront::mount(std::function<bool(std::string_view)> claims, std::string label,
                            Access access) {
  HttpRoute route;
  route.label = std::move(label);
  route.access = access;
  matchers_.push_back({std::move(claims), std::move(route)});
  return matchers_.back().route;
}

void HttpFront::use(std::shared_ptr<HttpMiddleware> middleware) {
  chain_.push_back(std::move(middleware));
}

const HttpRoute* HttpFront::find(std::string_view path) const {
  if (auto it = exact_.find(path); it != exact_.end()) return &it->second;
  for (const auto& m : matchers_)
    if (m.matches(path)) return &m.route;
  return nullptr;
}

bool HttpFront::admit(Exchange& exchange, const Request& header) const {
  std::tie(exchange.path, exchange.query) = split_target(header.target());
  exchange.target = find(exchange.path);
  for (const auto& middleware : chain_)
    if (!middleware->admit(exchange, header)) return false;
  return true;
}

void HttpFront::serve(Exchange& exchange, Request request) const {
  exchange.keep_alive = request.keep_alive();
  std::tie(exchange.path, exchange.query) = split_target(request.target());
  HttpHandler* handler = exchange.target ? exchange.target->handler(request.method()) : nullptr;
  if (!handler) {
    if (!exchange.target)
      return exchange.respond(http::status::not_found, R"({"error":"not found"})");
    return exchange.method_not_allowed(exchange.target->allow());
  }
  handler->serve(exchange, request);
}

void HttpFront::refuse_unreadable(Exchange& exchange, const Request& partial,
                                  beast::error_code ec) const {
  const auto& options = exchange.shared->options;
  if (ec == http::error::body_limit) {
    const std::string message =
        fmt::format("Payload Too Large: the body exceeds {} bytes", options.max_body_bytes);
    const HttpRoute* route = find(split_target(partial.target()).first);
    const HttpHandler* handler = route ? route->handler(partial.method()) : nullptr;
    if (!handler && route && !route->handlers.empty())
      handler = route->handlers.front().second.get();
    if (handler) {
      if (auto body = handler->too_large_body(message); !body.empty())
        return exchange.respond(http::status::payload_too_large, std::move(body));
    }
    return exchange.respond(http::status::payload_too_large,
                            rpc_error_body(jsonrpc::kInvalidRequest, message));
  }
  if (ec == http::error::header_limit) {
    return exchange.respond(
        http::status::request_header_fields_too_large,
        rpc_error_body(jsonrpc::kInvalidRequest, "Request Header Fields Too Large"));
  }
  if (ec == http::error::buffer_overflow) {
    return exchange.respond(
        http::status::bad_request,
        rpc_error_body(jsonrpc::kInvalidRequest,
                       fmt::format("Bad Request: a chunk-size line (with its extensions) "
                                   "or the trailer section exceeds {} bytes",
                                   options.max_header_bytes)));
  }
  exchange.respond(http::status::bad_request,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: " + ec.message()));
}

}  // namespace mcpclass::transport::server

// The router dialects: POST /mcp/<method> served by the request's session (a known
// Mcp-Session-Id) or a throwaway one, answered with the bare result.
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/mcp_common.hpp"
#include "transport/server/http/middleware.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "transport/server/http/router_dialect.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <atomic>
#include <functional>

namespace mcpclass::transport::server {

class Connection;

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The engine's view of a router-dialect request: only the final message matters.
class RouterStream final : public mcpclass::server::Stream {
 public:
  RouterStream(std::shared_ptr<Exchange> exchange, bool request, std::function<void(bool)> on_close)
      : connection_(exchange->connection()),
        exchange_(std::move(exchange)),
        request_(request),
        on_close_(std::move(on_close)) {}

  void send(json::value) override {}  // no channel for progress or client requests

  void close(std::optional<json::value> final_message) override {
    if (closed_.exchange(true)) return;
    if (on_close_) on_close_(is_error_message(final_message));
    if (auto connection = std::move(connection_)) {
      exchange_->run_on_self([connection, exchange = exchange_, request = request_,
                              final_message = std::move(final_message)]() mutable {
        if (!exchange->waiting()) return;
        RouterReply reply = router_reply(final_message, request);
        HeaderList headers;
        if (!reply.retry_after.empty()) headers.emplace_back("Retry-After", reply.retry_after);
        const std::string_view type = reply.body.empty() ? "" : "application/json";
        exchange->respond(static_cast<http::status>(reply.status), std::move(reply.body), type,
                          std::move(headers));
      });
    }
  }

 private:
  std::shared_ptr<Connection> connection_;  // strong until close, as in PostStream
  const std::shared_ptr<Exchange> exchange_;
  const bool request_;
  std::function<void(bool)> on_close_;
  std::atomic<bool> closed_{false};
};

class Router final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override;
};

void Router::serve(Exchange& exchange, Request& req) {
  const auto& shared = exchange.shared;
  const std::string_view method = exchange.path.substr(5);
  if (method.empty()) return exchange.respond(http::status::not_found, R"({"error":"not found"})");
  auto built = router_request(method, req.body(), shared->server->options().limits);
  if (auto* reply = std::get_if<RouterReply>(&built)) {
    return exchange.respond(static_cast<http::status>(reply->status), std::move(reply->body));
  }
  const json::value& message = std::get<json::value>(built);
  if (!scopes_allow(exchange, message)) return;
  if (const auto timeout = req[util::kRequestTimeoutHeader]; !timeout.empty()) {
    if (auto problem = apply_request_timeout(std::get<json::value>(built), timeout))
      return exchange.respond(http::status::bad_request,
                              rpc_error_body(jsonrpc::kInvalidRequest, *problem));
  }
  apply_trace_headers(std::get<json::value>(built), req[util::kTraceparentHeader],
                      req[util::kTracestateHeader]);
  auto metrics = shared->metrics;
  const std::string method_name(HttpMetrics::method_label(method));
  const bool answers = has_request(message);

  // A known Mcp-Session-Id keeps the router's calls in that session; otherwise each call is
  // served by a throwaway session that needs no handshake.
  std::shared_ptr<mcpclass::server::Session> session;
  std::function<void(bool)> on_close;
  std::shared_ptr<HttpSession> entry;
  if (const std::string_view id = req[kSessionHeader]; !id.empty() && !shared->options.stateless) {
    entry = shared->sessions->find(std::string(id));
  }
  if (entry) {
    session = entry->session;
    on_close = [metrics, method_name, answers](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  } else {
    mcpclass::server::SessionOptions options;
    options.require_initialize = method == "initialize";
    options.assumed_version = std::string(protocol::kFallbackVersion);
    session = shared->server->create_session(options);
    shared->sessions->add_transient(session);
    on_close = [metrics, method_name, answers, sessions = shared->sessions,
                weak = std::weak_ptr<mcpclass::server::Session>(session)](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
      if (auto s = weak.lock()) sessions->remove_transient(s);
    };
  }
  exchange.guard.emplace(*shared, entry);
  auto stream = std::make_shared<RouterStream>(exchange.shared_from_this(), answers, on_close);
  hand_over(*session, std::move(std::get<json::value>(built)), stream);
}

}  // namespace

std::shared_ptr<HttpHandler> router_handler() {
  return std::make_shared<Router>();
}

}  // namespace mcpclass::transport::server

// Legacy HTTP+SSE (2024-11-05): GET /sse opens a session and announces its POST endpoint;
// POST /messages?sessionId=… hands a message to that session, whose answers go out on the stream.
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/mcp_common.hpp"
#include "transport/server/http/middleware.hpp"
#include "transport/server/http/rpc_message.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The engine's view of a legacy POST /messages: everything goes out on the session's GET /sse.
class LegacyStream final : public mcpclass::server::Stream {
 public:
  explicit LegacyStream(std::shared_ptr<SseChannel> channel) : channel_(std::move(channel)) {}
  void send(json::value message) override { channel_->append(message); }
  void close(std::optional<json::value> final_message) override {
    if (final_message) channel_->append(*final_message);
  }

 private:
  std::shared_ptr<SseChannel> channel_;
};

class LegacySse final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request&) override {
    if (!exchange.take_stream_slot()) return;
    const auto& sessions = exchange.shared->sessions;
    auto entry = sessions->create(true);
    if (!entry) {
      return exchange.respond(
          http::status::service_unavailable,
          rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
    }
    // The session lives as long as its stream.
    exchange.on_release([sessions, id = entry->id] { sessions->remove(id); });
    const auto& channel = entry->standalone;
    exchange.adopt_channel(channel, channel->attach(exchange.make_sink(), std::nullopt), {});
    exchange.start_sse(false);
    channel->append_raw("endpoint", "/messages?sessionId=" + entry->id);
    exchange.watch_client(false);
    exchange.keep_stream_alive();
  }
};

class LegacyMessages final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override {
    const std::string_view query = exchange.query;
    std::string id;
    if (query.starts_with("sessionId=")) id = std::string(query.substr(10, query.find('&') - 10));
    if (const auto pos = query.find("&sessionId="); id.empty() && pos != std::string_view::npos) {
      const auto rest = query.substr(pos + 11);
      id = std::string(rest.substr(0, rest.find('&')));
    }
    if (id.empty()) {
      return exchange.respond(
          http::status::bad_request,
          rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: sessionId is required"));
    }
    auto entry = exchange.shared->sessions->find(id);
    if (!entry || !entry->legacy) return session_not_found(exchange);
    auto body = read_rpc_body(exchange, req);
    if (!body || !scopes_allow(exchange, *body)) return;
    apply_trace_headers(*body, req[util::kTraceparentHeader], req[util::kTracestateHeader]);
    if (has_request(*body)) exchange.shared->metrics->record_rpc(method_of(*body), false);
    try {
      entry->session->handle(*body, std::make_shared<LegacyStream>(entry->standalone));
    } catch (const std::exception&) {
      // The engine answers on the stream; nothing else to do here.
    }
    exchange.respond(http::status::accepted, "Accepted", "text/plain");
  }
};

}  // namespace

std::shared_ptr<HttpHandler> legacy_sse_handler() {
  return std::make_shared<LegacySse>();
}
std::shared_ptr<HttpHandler> legacy_messages_handler() {
  return std::make_shared<LegacyMessages>();
}

}  // namespace mcpclass::transport::server

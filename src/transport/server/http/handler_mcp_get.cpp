// Streamable HTTP, GET /mcp: the session's standalone SSE stream, or a POST's stream resumed with
// Last-Event-ID. It holds a stream slot and ends with its connection.
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/mcp_common.hpp"
#include "transport/server/http/rpc_message.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

namespace {

// The events asked for existed but were dropped to stay within a replay budget: resuming would
// leave a gap the client cannot see, so it is told instead.
void replay_gone(Exchange& exchange) {
  exchange.respond(
      http::status::gone,
      rpc_error_body(jsonrpc::kInvalidRequest,
                     "Gone: the events after that Last-Event-ID were dropped from the replay "
                     "store (server.http.event_store_bytes, event_store_session_bytes, "
                     "event_store_total_bytes)"));
}

class McpGet final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override {
    if (!lists_event_stream(req[http::field::accept])) {
      return exchange.respond(
          http::status::not_acceptable,
          rpc_error_body(jsonrpc::kInvalidRequest,
                         "Not Acceptable: Accept must include text/event-stream"));
    }
    auto entry = find_session(exchange, req[kSessionHeader]);
    if (!entry) return;
    // Busy until the stream is attached: an attached session is not idle, so never evicted.
    RequestGuard busy(*exchange.shared, entry, RequestGuard::Adopt{});
    if (entry->session->state() == mcpclass::server::Session::State::closed) {
      return session_not_found(exchange);
    }
    std::shared_ptr<SseChannel> channel = entry->standalone;
    std::optional<std::uint64_t> after;
    if (const std::string_view last = req["Last-Event-ID"]; !last.empty()) {
      auto parsed = parse_event_id(last);
      bool forgotten = false;
      channel = parsed ? entry->find_channel(parsed->first, forgotten) : nullptr;
      if (forgotten) return replay_gone(exchange);
      // Not 404: to a client that means its session is gone.
      if (!channel) {
        return exchange.respond(http::status::bad_request,
                                rpc_error_body(jsonrpc::kInvalidRequest,
                                               "Bad Request: this session has no stream with that "
                                               "Last-Event-ID"));
      }
      after = parsed->second;
    }
    if (!exchange.take_stream_slot()) return;
    exchange.guard.reset();
    // Attached before the head is written: the sink posts to this strand, so its frames follow it.
    const std::uint64_t token = channel->attach(exchange.make_sink(), after);
    if (token == SseChannel::kForgotten) {
      exchange.return_stream_slot();
      return replay_gone(exchange);
    }
    exchange.adopt_channel(channel, token,
                           channel->priming_frame(exchange.shared->options.sse_retry_ms));
    exchange.start_sse(entry->session->protocol_version() >= protocol::k2025_11_25);
    exchange.bound_unacknowledged();
    exchange.watch_client(false);
    exchange.keep_stream_alive();
  }
};

}  // namespace

std::shared_ptr<HttpHandler> mcp_get_handler() {
  return std::make_shared<McpGet>();
}

}  // namespace mcpclass::transport::server

// Legacy HTTP+SSE (2024-11-05): GET /sse opens a session and announces its POST endpoint;
// POST /messages?sessionId=… hands a message to that session, whose answers go out on the stream.
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/rpc_message.hpp"

namespace mcpclass::transport {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The engine's view of a legacy POST /messages: everything goes out on the session's GET /sse.
class LegacyStream final : public server::Stream {
 public:
  explicit LegacyStream(std::shared_ptr<SseChannel> channel) : channel_(std::move(channel)) {}
  void send(json::value message) override { channel_->append(message); }
  void close(std::optional<json::value> final_message) override {
    if (final_message) channel_->append(*final_message);
  }

 private:
  std::shared_ptr<SseChannel> channel_;
};

}  // namespace

void Connection::get_legacy() {
  if (!open_stream_slot()) return;
  auto entry = shared_->sessions->create(true);
  if (!entry) {
    return respond(
        http::status::service_unavailable,
        rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
  }
  legacy_entry_ = entry;
  channel_ = entry->standalone;
  start_sse(false);
  sink_token_ = channel_->attach(make_sink(), std::nullopt);
  channel_->append_raw("endpoint", "/messages?sessionId=" + entry->id);
  watch_disconnect();
  schedule_heartbeat();
}

void Connection::post_legacy(const Request& req, std::string_view query) {
  std::string id;
  if (query.starts_with("sessionId=")) id = std::string(query.substr(10, query.find('&') - 10));
  if (const auto pos = query.find("&sessionId="); id.empty() && pos != std::string_view::npos) {
    const auto rest = query.substr(pos + 11);
    id = std::string(rest.substr(0, rest.find('&')));
  }
  if (id.empty()) {
    return respond(http::status::bad_request,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: sessionId is required"));
  }
  auto entry = shared_->sessions->find(id);
  if (!entry || !entry->legacy) {
    return session_not_found();
  }
  auto body = read_rpc_body(req);
  if (!body || !scopes_allow(*body)) return;
  if (has_request(*body)) shared_->metrics->record_rpc(method_of(*body), false);
  try {
    entry->session->handle(*body, std::make_shared<LegacyStream>(entry->standalone));
  } catch (const std::exception&) {
    // The engine answers on the stream; nothing else to do here.
  }
  respond(http::status::accepted, "Accepted", "text/plain");
}

}  // namespace mcpclass::transport

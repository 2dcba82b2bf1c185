#include "server/in_flight.hpp"

#include "mcpclass/server/session.hpp"

#include <cmath>

namespace mcpclass::server {

namespace {
const json::object kEmptyObject;

// Whole numbers go out as integers ("50", not "5E1"): easier on every reader.
json::value wire_number(double v) {
  if (std::abs(v) < 9.0e15 && v == std::floor(v)) return static_cast<std::int64_t>(v);
  return v;
}
// A value that is not a string is as malformed as a bad string: no trace context.
std::string_view string_at(const json::object& meta, std::string_view key) {
  const auto* v = meta.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::optional<util::TraceParent> trace_parent_of(const json::object& meta) {
  return util::parse_traceparent(string_at(meta, util::kTraceparentHeader),
                                 string_at(meta, util::kTracestateHeader));
}
}  // namespace

InFlight::InFlight(std::weak_ptr<Session> session, jsonrpc::Request request, StreamPtr out,
                   std::shared_ptr<const ClientInfo> client, bool stateless)
    : session_(std::move(session)),
      request_(std::move(request)),
      out_(std::move(out)),
      client_(std::move(client)),
      stateless_(stateless) {
  if (const auto* meta = jsonrpc::meta_of(request_.params)) {
    if (const auto* token = meta->if_contains("progressToken")) {
      if (token->is_string() || token->is_int64() || token->is_uint64()) progress_token_ = *token;
    }
    trace_parent_ = trace_parent_of(*meta);
  }
}

const json::object& InFlight::params_object() const {
  if (request_.params.is_null()) return kEmptyObject;
  if (const auto* o = request_.params.if_object()) return *o;
  throw jsonrpc::ProtocolError(jsonrpc::kInvalidParams,
                               "Invalid params: " + request_.method + " takes named parameters");
}

void InFlight::send(json::value message) {
  std::lock_guard lock(out_mutex_);
  if (!closed_) out_->send(std::move(message));
}

bool InFlight::close(std::optional<json::value> final_message) {
  std::lock_guard lock(out_mutex_);
  if (closed_) return false;
  closed_ = true;
  out_->close(std::move(final_message));
  return true;
}

bool InFlight::close_sse_stream() {
  std::lock_guard lock(out_mutex_);
  return !closed_ && out_->close_for_reconnect();
}

void InFlight::progress(double progress, std::optional<double> total, std::string_view message) {
  if (!progress_token_) return;
  json::object p{{"progressToken", *progress_token_}, {"progress", wire_number(progress)}};
  if (total) p["total"] = wire_number(*total);
  if (!message.empty()) p["message"] = message;
  send(jsonrpc::make_notification("notifications/progress", std::move(p)));
}

void InFlight::log(LogLevel level, json::value data, std::string_view logger) {
  auto session = session_.lock();
  if (!session || !session->log_enabled(level)) return;
  json::object p{{"level", to_string(level)}, {"data", std::move(data)}};
  if (!logger.empty()) p["logger"] = logger;
  send(jsonrpc::make_notification("notifications/message", std::move(p)));
}

void InFlight::notify(std::string_view method, json::value params) {
  send(jsonrpc::make_notification(method, std::move(params)));
}

json::value InFlight::request(std::string_view method, json::value params,
                              std::optional<std::chrono::milliseconds> timeout) {
  auto session = session_.lock();
  if (!session) throw jsonrpc::ProtocolError(jsonrpc::kRequestCancelled, "session closed");
  return session->request_client(*this, method, std::move(params), timeout);
}

}  // namespace mcpclass::server

// The session behind the remote classifiers: connection management, retries, circuit breaker.
#include "remote/tool_session.hpp"

#include <fmt/format.h>

namespace mcpclass::remote::detail {

namespace {

/// Runs `f`, turning client errors into the remote classifier's error types.
template <typename F>
auto mapped(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const client::TimeoutError& e) {
    throw RemoteTimeout(fmt::format("{}: {}", what, e.what()));
  } catch (const client::CertificateError& e) {
    throw RemoteUntrusted(fmt::format("{}: {}", what, e.what()));
  } catch (const client::HttpStatusError& e) {
    // A 4xx (a URL that is not an MCP endpoint, a refused request) will not change on retry.
    if (e.permanent()) throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
    throw RemoteUnreachable(fmt::format("{}: {}", what, e.what()));
  } catch (const client::TransportError& e) {
    throw RemoteUnreachable(fmt::format("{}: {}", what, e.what()));
  } catch (const client::RpcError& e) {
    throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
  } catch (const client::ProtocolViolation& e) {
    throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
  }
}

RemoteClassifierOptions checked(RemoteClassifierOptions options) {
  if (options.timeout <= std::chrono::milliseconds::zero())
    options.timeout = std::chrono::milliseconds{5'000};
  return options;
}

}  // namespace

ToolSession::ToolSession(const RemoteClassifierOptions& options,
                         std::shared_ptr<client::ClientTransport> transport,
                         std::string client_name, std::function<void()> on_connect,
                         std::function<void(std::string_view method)> on_notification)
    : options_(checked(options)),
      transport_(std::move(transport)),
      on_connect_(std::move(on_connect)),
      guard_(options_, transport_->describe()) {
  client::ClientOptions co;
  co.name = std::move(client_name);
  co.request_timeout = options_.timeout;
  if (!options_.protocol.empty()) client::choose_protocol(co, options_.protocol);
  if (on_notification)
    co.callbacks.on_notification = [f = std::move(on_notification)](
                                       std::string_view method, const json::value&) { f(method); };
  client_ = std::make_unique<client::Client>(transport_, std::move(co));
}

ToolSession::~ToolSession() {
  client_->close();
}

std::string ToolSession::where() const {
  return transport_->describe();
}

void ToolSession::connect(std::uint64_t seen) {
  std::lock_guard lock(connect_mutex_);
  if (generation_ != seen && client_->connected()) return;
  mapped(where(), [&] { client_->reconnect(); });
  on_connect_();
  ++generation_;
}

void ToolSession::connect_with_retries() {
  guard_.retrying([this] { connect(generation_.load()); });
}

json::object ToolSession::call_tool(const std::string& tool, json::object arguments,
                                    json::object meta) {
  client::RequestOptions options;
  options.meta = std::move(meta);
  return mapped(where(), [&] { return client_->call_tool(tool, std::move(arguments), options); });
}

json::array ToolSession::list_tools() {
  return mapped(where(), [&] { return client_->list_tools(); });
}

void ToolSession::call(const std::function<void()>& attempt) {
  guard_.call([&] {
    const auto seen = generation_.load();
    if (!client_->connected() || seen == 0) connect(seen);
    attempt();
  });
}

json::object ToolSession::stats() const {
  json::object out{{"endpoint", where()}};
  for (auto& [key, value] : guard_.stats()) out[key] = value;
  return out;
}

}  // namespace mcpclass::remote::detail

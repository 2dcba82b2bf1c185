// Legacy HTTP+SSE (2024-11-05), client side: GET the SSE stream, POST to its `endpoint`.
#include "mcpclass/client/errors.hpp"
#include "net/sse_parser.hpp"
#include "transport/client/http_common.hpp"
#include "transport/client/http_transport.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>

#include <future>
#include <mutex>

namespace mcpclass::transport::client {

namespace {

namespace json = boost::json;
using mcpclass::client::TransportError;
using net::HttpHead;
using net::HttpRequest;

class LegacySseTransport : public detail::HttpClientTransportBase,
                           public std::enable_shared_from_this<LegacySseTransport> {
 public:
  using HttpClientTransportBase::HttpClientTransportBase;
  ~LegacySseTransport() override { close(); }

  void start(mcpclass::client::TransportHandlers handlers) override {
    close();
    open_engine(std::move(handlers));
    auto endpoint = std::make_shared<std::promise<std::string>>();
    auto endpoint_future = endpoint->get_future();
    {
      std::lock_guard lock(mutex_);
      endpoint_.reset();
    }
    open_stream(endpoint);
    if (endpoint_future.wait_for(options_.io_timeout) != std::future_status::ready) {
      close();
      throw TransportError(describe() + ": no endpoint event from the SSE stream");
    }
    try {
      const auto where = endpoint_future.get();
      std::lock_guard lock(mutex_);
      endpoint_ = net::resolve_url(url_, where);
    } catch (const mcpclass::client::CertificateError& e) {
      close();
      throw mcpclass::client::CertificateError(describe() + ": " + e.what());
    } catch (const std::exception& e) {
      close();
      throw TransportError(describe() + ": " + e.what());
    }
  }

  void send(const json::value& message) override {
    const auto kind = detail::kind_of(message);
    HttpRequest req;
    req.method = "POST";
    req.headers = headers_;
    req.headers.emplace_back("Content-Type", "application/json");
    detail::add_trace_headers(req, message);
    req.body = json::serialize(message);
    req.timeout = options_.io_timeout;
    std::lock_guard lock(mutex_);
    if (!open_ || !endpoint_) throw TransportError(describe() + ": closed");
    req.target = endpoint_->target;
    std::weak_ptr<LegacySseTransport> weak = weak_from_this();
    auto reply = std::make_shared<detail::CollectedReply>();
    net::ExchangeCallbacks cb = detail::collect_into(reply);
    cb.on_end = [weak, reply, id = kind.request_id](const net::HttpError& failure) {
      const std::string& error = failure.message;
      auto self = weak.lock();
      if (!self || failure.kind == net::HttpFailure::cancelled) return;
      if (error.empty() && reply->status / 100 == 2) return;  // the answer comes on the SSE stream
      if (!error.empty() && id) {
        self->fail_exchange(*id, failure);
        return;
      }
      if (self->handlers_.on_failure)
        self->handlers_.on_failure(id, error.empty() ? fmt::format("HTTP {}: {}", reply->status,
                                                                   util::excerpt(reply->body))
                                                     : error);
    };
    start_exchange(*endpoint_, std::move(req), std::move(cb));
  }

 private:
  void open_stream(const std::shared_ptr<std::promise<std::string>>& endpoint) {
    HttpRequest req;
    req.method = "GET";
    req.target = url_.target;
    req.headers = headers_;
    req.headers.emplace_back("Accept", "text/event-stream");
    struct State {
      net::SseParser parser;
      int status = 0;
      bool announced = false;
    };
    auto state = std::make_shared<State>();
    state->parser = net::SseParser(options_.max_message_bytes);
    std::weak_ptr<LegacySseTransport> weak = weak_from_this();
    net::ExchangeCallbacks cb;
    cb.on_head = [state](const HttpHead& head) { state->status = head.status; };
    cb.on_data = [weak, state, endpoint](std::string_view data) {
      auto self = weak.lock();
      if (!self || state->status != 200) return;
      state->parser.feed(data, [&](net::SseEvent e) {
        if (e.type == "endpoint") {
          if (!state->announced) endpoint->set_value(e.data);
          state->announced = true;
        } else if (e.type == "message") {
          if (auto v = detail::parse_body(e.data); v && self->handlers_.on_message)
            self->handlers_.on_message(*v);
        }
      });
    };
    cb.on_end = [weak, state, endpoint](const net::HttpError& failure) {
      const std::string& error = failure.message;
      auto self = weak.lock();
      if (!self || failure.kind == net::HttpFailure::cancelled) return;
      const std::string reason = !error.empty() ? error
                                 : state->status != 200
                                     ? fmt::format("HTTP {} on the SSE stream", state->status)
                                     : "the SSE stream ended";
      if (!state->announced) {
        endpoint->set_exception(detail::transport_error(failure.kind, reason));
        return;
      }
      {
        std::lock_guard lock(self->mutex_);
        self->open_ = false;
      }
      if (self->handlers_.on_closed) self->handlers_.on_closed(reason);
    };
    std::lock_guard lock(mutex_);
    start_exchange(url_, std::move(req), std::move(cb));
  }

  std::optional<net::HttpUrl> endpoint_;
};

}  // namespace

std::shared_ptr<mcpclass::client::ClientTransport> make_legacy_sse_transport(
    HttpClientOptions options) {
  // 2024-11-05, the legacy transport's protocol, predates MCP authorization.
  if (options.oauth)
    throw TransportError(options.url +
                         ": OAuth needs Streamable HTTP or the REST dialect; the "
                         "legacy HTTP+SSE transport does not support it");
  return std::make_shared<LegacySseTransport>(std::move(options));
}

}  // namespace mcpclass::transport::client

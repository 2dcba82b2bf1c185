// The router dialect, client side: `POST <url>/<method>`, params as body, bare result back.
#include "mcpclass/client/errors.hpp"
#include "transport/client/http_common.hpp"
#include "transport/client/http_transport.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>

namespace mcpclass::transport::client {

namespace {

namespace json = boost::json;
using mcpclass::client::TransportError;
using net::HttpRequest;

/// The JSON-RPC response equivalent to a dialect answer.
json::object to_response(const jsonrpc::Id& id, int status, const std::string& body) {
  std::optional<json::value> v;
  if (body.find_first_not_of(" \t\r\n") == std::string::npos)
    v = json::object{};
  else
    v = detail::parse_body(body);
  if (status / 100 == 2) {
    if (!v) return jsonrpc::make_error(id, {jsonrpc::kParseError, "answer is not JSON"});
    if (v->is_object() && v->get_object().contains("jsonrpc")) {  // an envelope after all
      const auto& o = v->get_object();
      if (const auto* e = o.if_contains("error"); e != nullptr && e->is_object()) {
        auto copy = o;
        copy["id"] = jsonrpc::to_json(id);
        return copy;
      }
      if (const auto* r = o.if_contains("result")) return jsonrpc::make_result(id, *r);
    }
    return jsonrpc::make_result(id, std::move(*v));
  }
  if (v && v->is_object()) {
    if (const auto* e = v->get_object().if_contains("error"); e != nullptr && e->is_object()) {
      const auto& eo = e->get_object();
      const auto* code = eo.if_contains("code");
      const auto* message = eo.if_contains("message");
      return jsonrpc::make_error(
          id, {code != nullptr && code->is_int64() ? static_cast<int>(code->get_int64())
                                                   : jsonrpc::kInternalError,
               message != nullptr && message->is_string() ? std::string(message->get_string())
                                                          : fmt::format("HTTP {}", status)});
    }
  }
  const int code = status == 404 ? jsonrpc::kMethodNotFound : jsonrpc::kInvalidRequest;
  return jsonrpc::make_error(id, {code, fmt::format("HTTP {}: {}", status, util::excerpt(body))});
}

class RestTransport : public detail::HttpClientTransportBase,
                      public std::enable_shared_from_this<RestTransport> {
 public:
  using HttpClientTransportBase::HttpClientTransportBase;
  ~RestTransport() override { close(); }

  void start(mcpclass::client::TransportHandlers handlers) override {
    close();
    open_engine(std::move(handlers));
    while (url_.target.size() > 1 && url_.target.back() == '/') url_.target.pop_back();
  }

  void send(const json::value& message) override {
    const auto kind = detail::kind_of(message);
    if (!kind.request_id) return;  // the dialect has no notifications or client responses
    renew_expired_token();
    HttpRequest req;
    req.method = "POST";
    req.target = (url_.target == "/" ? std::string() : url_.target) + "/" + kind.method;
    req.headers = headers_;
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json");
    detail::add_trace_headers(req, message);
    if (kind.method != "ping") {
      const auto* params = message.get_object().if_contains("params");
      req.body = params != nullptr && !params->is_null() ? json::serialize(*params) : "{}";
    }
    auto call = std::make_shared<Call>();
    call->id = *kind.request_id;
    call->request = std::move(req);
    post(call);
  }

  std::string describe() const override { return options_.url + " (POST <url>/<method>)"; }

 private:
  /// One request: kept whole so that it can be sent again after an authorization flow.
  struct Call {
    jsonrpc::Id id;
    HttpRequest request;
    int auth_attempts = 0;
  };

  void post(const std::shared_ptr<Call>& call) {
    HttpRequest req = call->request;
    const std::string sent_authorization = authorize(req);
    auto reply = std::make_shared<detail::CollectedReply>();
    std::weak_ptr<RestTransport> weak = weak_from_this();
    net::ExchangeCallbacks cb = detail::collect_into(reply);
    cb.on_end = [weak, reply, call, sent_authorization](const net::HttpError& failure) {
      const std::string& error = failure.message;
      auto self = weak.lock();
      if (!self || failure.kind == net::HttpFailure::cancelled) return;
      if (error.empty() && (reply->status == 401 || reply->status == 403) &&
          self->retry_after_authorization(call, *reply, sent_authorization))
        return;
      self->untrack(jsonrpc::id_key(call->id));
      if (!error.empty()) {
        self->fail_exchange(call->id, failure);
        return;
      }
      if (reply->status / 100 == 5) {
        if (self->handlers_.on_failure)
          self->handlers_.on_failure(
              call->id, fmt::format("HTTP {}: {}", reply->status, util::excerpt(reply->body)));
        return;
      }
      if (self->handlers_.on_message)
        self->handlers_.on_message(to_response(call->id, reply->status, reply->body));
    };
    std::lock_guard lock(mutex_);
    if (!open_) throw TransportError(describe() + ": closed");
    track(jsonrpc::id_key(call->id), start_exchange(url_, std::move(req), std::move(cb)));
  }

  bool retry_after_authorization(const std::shared_ptr<Call>& call,
                                 const detail::CollectedReply& reply,
                                 const std::string& sent_authorization) {
    std::weak_ptr<RestTransport> weak = weak_from_this();
    const auto key = jsonrpc::id_key(call->id);
    auto retry = [weak, call, key] {
      auto self = weak.lock();
      if (self && self->tracked(key)) self->post(call);  // not abandoned meanwhile
    };
    auto fail = [weak, call, key](std::exception_ptr error) {
      auto self = weak.lock();
      if (self && self->untrack(key)) self->fail_request(call->id, std::move(error));
    };
    return answer_challenge(reply.status, reply.www_authenticate, sent_authorization,
                            call->auth_attempts, std::move(retry), std::move(fail));
  }
};

}  // namespace

std::shared_ptr<mcpclass::client::ClientTransport> make_rest_transport(HttpClientOptions options) {
  return std::make_shared<RestTransport>(std::move(options));
}

}  // namespace mcpclass::transport::client

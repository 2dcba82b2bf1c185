#include "transport/client_http_transport.hpp"

#include "transport/client_http_common.hpp"

namespace mcpclass::transport::detail {

void HttpClientTransportBase::close() {
  if (auto engine = take_engine()) engine->stop();
}

bool HttpClientTransportBase::is_open() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void HttpClientTransportBase::abandon(const jsonrpc::Id& id) {
  std::lock_guard lock(mutex_);
  auto it = exchanges_.find(jsonrpc::id_key(id));
  if (it == exchanges_.end()) return;
  if (engine_) engine_->cancel(it->second);
  exchanges_.erase(it);
}

void HttpClientTransportBase::open_engine(client::TransportHandlers handlers) {
  url_ = parse_http_url(options_.url);
  headers_ = expanded_headers(options_);
  handlers_ = std::move(handlers);
  auto engine = std::make_unique<HttpEngine>(options_.connect_timeout, options_.ca_file);
  if (url_.tls) engine->prepare_tls();  // an unusable CA file fails start(), not each request
  std::lock_guard lock(mutex_);
  engine_ = std::move(engine);
  exchanges_.clear();
  open_ = true;
}

std::unique_ptr<HttpEngine> HttpClientTransportBase::take_engine() {
  std::lock_guard lock(mutex_);
  open_ = false;
  exchanges_.clear();
  return std::move(engine_);
}

bool HttpClientTransportBase::untrack(const std::string& key) {
  std::lock_guard lock(mutex_);
  return exchanges_.erase(key) > 0;
}

bool HttpClientTransportBase::tracked(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return exchanges_.contains(key);
}

ExchangeCallbacks collect_into(const std::shared_ptr<CollectedReply>& reply) {
  ExchangeCallbacks cb;
  cb.on_head = [reply](const HttpHead& head) { reply->status = head.status; };
  cb.on_data = [reply](std::string_view d) { reply->body.append(d); };
  return cb;
}

}  // namespace mcpclass::transport::detail

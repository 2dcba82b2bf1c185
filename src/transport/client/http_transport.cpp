#include "transport/client/http_transport.hpp"

#include "auth/oauth_session.hpp"
#include "auth/www_authenticate.hpp"
#include "mcpclass/client/errors.hpp"
#include "transport/client/http_common.hpp"

#include <fmt/format.h>

#include <strings.h>

namespace mcpclass::transport::client::detail {

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

void HttpClientTransportBase::open_engine(mcpclass::client::TransportHandlers handlers) {
  std::unique_ptr<net::HttpEngine> engine;
  try {
    url_ = net::parse_http_url(options_.url);
    engine =
        std::make_unique<net::HttpEngine>(options_.connect_timeout, options_.ca_file,
                                          options_.max_message_bytes, 0, options_.max_header_bytes);
    if (url_.tls) engine->prepare_tls();  // an unusable CA file fails start(), not each request
  } catch (const net::HttpClientError& e) {
    std::rethrow_exception(transport_error(e.kind(), e.what()));
  }
  headers_ = expanded_headers(options_);
  handlers_ = std::move(handlers);
  std::shared_ptr<auth::OAuthSession> oauth;
  if (options_.oauth)
    oauth = std::make_shared<auth::OAuthSession>(*options_.oauth, options_.url,
                                                 options_.connect_timeout, options_.ca_file);
  {
    std::lock_guard lock(oauth_mutex_);
    oauth_ = std::move(oauth);
  }
  std::lock_guard lock(mutex_);
  engine_ = std::move(engine);
  exchanges_.clear();
  open_ = true;
}

std::unique_ptr<net::HttpEngine> HttpClientTransportBase::take_engine() {
  std::shared_ptr<auth::OAuthSession> oauth;
  std::unique_ptr<net::HttpEngine> engine;
  {
    std::lock_guard lock(mutex_);
    open_ = false;
    exchanges_.clear();
    engine = std::move(engine_);
  }
  {
    std::lock_guard lock(oauth_mutex_);
    oauth = std::move(oauth_);
  }
  if (oauth) oauth->stop();  // a flow under way fails at its next network step
  std::vector<Worker> workers;
  {
    std::lock_guard lock(workers_mutex_);
    workers.swap(workers_);
  }
  for (auto& w : workers) {
    if (w.thread.get_id() == std::this_thread::get_id())
      w.thread.detach();  // closed from a flow's own callback
    else if (w.thread.joinable())
      w.thread.join();
  }
  return engine;
}

std::string HttpClientTransportBase::authorization() const {
  std::shared_ptr<auth::OAuthSession> oauth;
  {
    std::lock_guard lock(oauth_mutex_);
    oauth = oauth_;
  }
  return oauth ? oauth->authorization() : std::string();
}

void HttpClientTransportBase::renew_expired_token() {
  std::shared_ptr<auth::OAuthSession> oauth;
  {
    std::lock_guard lock(oauth_mutex_);
    oauth = oauth_;
  }
  if (oauth) oauth->renew_if_expired();
}

std::string HttpClientTransportBase::authorize(net::HttpRequest& req) const {
  auto value = authorization();
  if (value.empty()) return value;
  std::erase_if(req.headers,
                [](const auto& h) { return strcasecmp(h.first.c_str(), "Authorization") == 0; });
  req.headers.emplace_back("Authorization", value);
  return value;
}

bool HttpClientTransportBase::answer_challenge(int status, const std::string& www_authenticate,
                                               const std::string& sent_authorization, int& attempts,
                                               std::function<void()> retry,
                                               std::function<void(std::exception_ptr)> fail) {
  if (!is_open()) return false;
  std::shared_ptr<auth::OAuthSession> oauth;
  {
    std::lock_guard lock(oauth_mutex_);
    oauth = oauth_;
  }
  if (!oauth) return false;
  const auto challenge = auth::parse_www_authenticate(www_authenticate);
  if (status != 401 && !(status == 403 && challenge.error == "insufficient_scope")) return false;
  if (attempts >= oauth->options().max_attempts) {
    fail(std::make_exception_ptr(auth::AuthorizationError(
        "access", status, challenge.error,
        fmt::format("still refused after {} authorization attempts{}{}", attempts,
                    challenge.error_description.empty() ? "" : ": ",
                    challenge.error_description))));
    return true;
  }
  ++attempts;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([oauth, status, www_authenticate, sent_authorization, retry = std::move(retry),
                      fail = std::move(fail), done] {
    std::exception_ptr failure;
    try {
      oauth->answer_challenge(status, www_authenticate, sent_authorization);
      retry();
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) fail(failure);
    done->store(true);
  });
  std::lock_guard lock(workers_mutex_);
  std::erase_if(workers_, [](Worker& w) {
    if (!w.done->load()) return false;
    w.thread.join();
    return true;
  });
  workers_.push_back({std::move(thread), std::move(done)});
  return true;
}

void HttpClientTransportBase::fail_request(const jsonrpc::Id& id, std::exception_ptr error) const {
  if (handlers_.on_request_error) {
    handlers_.on_request_error(id, std::move(error));
    return;
  }
  if (!handlers_.on_failure) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    handlers_.on_failure(id, e.what());
  } catch (...) {
    handlers_.on_failure(id, "unknown error");
  }
}

void HttpClientTransportBase::fail_exchange(const jsonrpc::Id& id,
                                            const net::HttpError& error) const {
  fail_request(id, transport_error(error.kind, error.message));
}

net::HttpEngine::ExchangeId HttpClientTransportBase::start_exchange(
    const net::HttpUrl& url, net::HttpRequest request, net::ExchangeCallbacks callbacks) {
  try {
    return engine_->start(url, std::move(request), std::move(callbacks));
  } catch (const net::HttpClientError& e) {
    std::rethrow_exception(transport_error(e.kind(), e.what()));
  }
}

bool HttpClientTransportBase::untrack(const std::string& key) {
  std::lock_guard lock(mutex_);
  return exchanges_.erase(key) > 0;
}

bool HttpClientTransportBase::tracked(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return exchanges_.contains(key);
}

net::ExchangeCallbacks collect_into(const std::shared_ptr<CollectedReply>& reply) {
  net::ExchangeCallbacks cb;
  cb.on_head = [reply](const net::HttpHead& head) {
    reply->status = head.status;
    reply->www_authenticate = head.header("www-authenticate");
  };
  cb.on_data = [reply](std::string_view d) { reply->body.append(d); };
  return cb;
}

}  // namespace mcpclass::transport::client::detail

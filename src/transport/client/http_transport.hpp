// Internal: what the three HTTP client transports (Streamable HTTP, legacy SSE, REST dialect)
// share: the options, the parsed URL and expanded headers, the engine and its open/closed state,
// and the exchanges that carry a request's answer (so abandon() can cancel them).
// Thread-safety: as ClientTransport; members marked "holds mutex_" expect the caller to hold it.
#pragma once

#include "mcpclass/client/transport.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "net/http_client.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mcpclass::auth {
class OAuthSession;
}

namespace mcpclass::transport::client::detail {

class HttpClientTransportBase : public mcpclass::client::ClientTransport {
 public:
  explicit HttpClientTransportBase(HttpClientOptions options) : options_(std::move(options)) {}

  /// Stops the engine (derived classes call it from their destructors).
  void close() override;
  bool is_open() const override;
  /// Cancels the exchange tracked for `id`, if any.
  void abandon(const jsonrpc::Id& id) override;
  std::string describe() const override { return options_.url; }

 protected:
  /// Parses the URL, expands the headers, keeps the handlers and makes a fresh engine; the
  /// transport is open afterwards. Throws mcpclass::client::TransportError (bad URL, unreadable CA
  /// file). Call close() first.
  void open_engine(mcpclass::client::TransportHandlers handlers);
  /// Marks the transport closed, forgets the tracked exchanges, ends the OAuth flows (waiting
  /// for their threads) and hands over the engine (null when it was not open) for the caller to
  /// stop outside the lock.
  std::unique_ptr<net::HttpEngine> take_engine();

  /// With OAuth and a token: sets `Authorization: Bearer` on `req` (replacing a configured
  /// one). Returns the header's value, empty when none was set.
  std::string authorize(net::HttpRequest& req) const;
  /// Renews an expired OAuth token before a request goes out (blocks for the renewal). Call it
  /// from send(), before taking mutex_.
  void renew_expired_token();
  /// The current `Bearer ...` value, empty without OAuth or token.
  std::string authorization() const;
  /// An answer with `status` and `www_authenticate` to a request sent with `sent_authorization`
  /// that has been through `attempts` authorization flows: when it is a challenge OAuth answers
  /// (401, or 403 insufficient_scope) returns true and, on a thread of its own, runs the flow
  /// and calls `retry`, or calls `fail` (flow failed, or options.max_attempts reached). False:
  /// not for OAuth; the caller handles the answer. Not while holding mutex_.
  bool answer_challenge(int status, const std::string& www_authenticate,
                        const std::string& sent_authorization, int& attempts,
                        std::function<void()> retry, std::function<void(std::exception_ptr)> fail);
  /// Fails request `id` with a typed error: on_request_error when the engine set it, else
  /// on_failure with the message.
  void fail_request(const jsonrpc::Id& id, std::exception_ptr error) const;
  /// fail_request with the exchange error `error`: mcpclass::client::CertificateError for a refused
  /// certificate, else mcpclass::client::TransportError.
  void fail_exchange(const jsonrpc::Id& id, const net::HttpError& error) const;
  /// engine_->start(), its HttpClientError (the engine stopped) thrown as
  /// mcpclass::client::TransportError (holds mutex_).
  net::HttpEngine::ExchangeId start_exchange(const net::HttpUrl& url, net::HttpRequest request,
                                             net::ExchangeCallbacks callbacks);

  /// Remembers which exchange carries the answer to the request with key `key` (holds mutex_).
  void track(const std::string& key, net::HttpEngine::ExchangeId exchange) {
    exchanges_[key] = exchange;
  }
  /// Forgets it; false when it was not tracked (abandoned or closed).
  bool untrack(const std::string& key);
  bool tracked(const std::string& key) const;

  const HttpClientOptions options_;
  net::HttpUrl url_;
  std::vector<std::pair<std::string, std::string>> headers_;
  mcpclass::client::TransportHandlers handlers_;

  mutable std::mutex mutex_;
  std::unique_ptr<net::HttpEngine> engine_;
  bool open_ = false;

 private:
  std::map<std::string, net::HttpEngine::ExchangeId> exchanges_;
  // Its own mutex, so that requests built while mutex_ is held can still be authorized.
  mutable std::mutex oauth_mutex_;
  std::shared_ptr<auth::OAuthSession> oauth_;

  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex workers_mutex_;
  std::vector<Worker> workers_;
};

/// Collects an exchange's status and body for callers that want both at the end.
struct CollectedReply {
  int status = 0;
  std::string www_authenticate;
  std::string body;
};
/// Callbacks that fill `reply`; on_end is left for the caller.
net::ExchangeCallbacks collect_into(const std::shared_ptr<CollectedReply>& reply);

}  // namespace mcpclass::transport::client::detail

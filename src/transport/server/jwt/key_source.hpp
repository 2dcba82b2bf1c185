// Internal: where the signing keys come from: a JWK Set file (read once, by the constructor) or
// an http(s) URL, fetched by the constructor (waiting for it, up to jwks_timeout) and kept;
// fetched again when a token names a kid the set lacks or the set is older than max_age, at most
// once per refetch_interval (a flood of tokens with made-up kids costs one fetch per interval).
// Refetches run on the HTTP client's own thread: find() never waits for the network, so a slow
// JWKS host cannot hold the server's I/O threads. A token whose kid is unknown while a refetch
// is under way gets TokenError(keys_pending): the caller answers 503 with a short Retry-After.
// Thread-safety: find() and fetches() may be called from any thread, concurrently.
#pragma once

#include "mcpclass/transport/server/jwt_auth.hpp"
#include "net/http_client.hpp"
#include "transport/server/jwt/jwk.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace mcpclass::transport::server::jwt {

class KeySource {
 public:
  using Clock = std::chrono::steady_clock;

  /// Reads jwks_file now, or checks jwks_url (https://, or http:// to a loopback host) and
  /// fetches it once (a failure is kept for find() to report, and retried later). Throws
  /// std::runtime_error naming the option for a file that cannot be read or used, a bad URL, or
  /// neither or both set.
  explicit KeySource(const JwtAuthOptions& options);
  /// Cancels a fetch under way.
  ~KeySource();
  KeySource(const KeySource&) = delete;
  KeySource& operator=(const KeySource&) = delete;

  /// The key named `kid`, or nullptr (unknown, and no fetch under way). Starts a refetch when one
  /// is due, without waiting for it. Throws TokenError(keys_pending) when the kid is unknown
  /// while a fetch is under way, TokenError(keys_unavailable) when the URL's keys were never
  /// fetched and no fetch is under way.
  std::shared_ptr<const Jwk> find(std::string_view kid);

  /// Fetches that happened (tests watch the rate limit).
  std::size_t fetches() const;

 private:
  // Starts a fetch when one is due (`unknown_kid`: a token named a kid the set lacks). Called
  // with `lock` held; releases it to start the exchange.
  void refetch_if_due(std::unique_lock<std::mutex>& lock, bool unknown_kid);
  // The end of a fetch, on the HTTP client's thread: the new set, or the error kept.
  void fetched(int status, const std::string& body, const std::string& error);

  const JwtAuthOptions options_;
  net::HttpUrl url_;                         // URL only
  std::unique_ptr<net::HttpEngine> engine_;  // URL only
  mutable std::mutex mutex_;                 // guards the members below
  std::condition_variable fetch_done_;       // the constructor waits for the first fetch
  std::shared_ptr<const KeySet> keys_;
  Clock::time_point fetched_at_{};    // when keys_ were fetched
  Clock::time_point attempted_at_{};  // the last fetch, successful or not
  bool attempted_ = false;
  bool fetching_ = false;
  std::string last_error_;
  std::size_t fetches_ = 0;
};

}  // namespace mcpclass::transport::server::jwt

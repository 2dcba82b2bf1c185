// Internal: where the signing keys come from: a JWK Set file (read once, by the constructor) or
// an http(s) URL, fetched on first use with the server's own HTTP client and kept; fetched again
// when a token names a kid the set lacks or the set is older than max_age, at most once per
// refetch_interval (a flood of tokens with made-up kids costs one fetch per interval).
// Thread-safety: find() may be called from any thread; one fetch runs at a time, and the caller
// that runs it blocks for up to jwks_timeout (an I/O thread of the server).
#pragma once

#include "mcpclass/transport/server/jwt_auth.hpp"
#include "transport/server/jwt/jwk.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace mcpclass::transport::detail {
class HttpEngine;
}

namespace mcpclass::transport::jwt {

class KeySource {
 public:
  using Clock = std::chrono::steady_clock;

  /// Reads jwks_file now, or checks jwks_url (https://, or http:// to a loopback host). Throws
  /// std::runtime_error naming the option for a file that cannot be read or used, a bad URL, or
  /// neither or both set.
  explicit KeySource(const JwtAuthOptions& options);
  ~KeySource();
  KeySource(const KeySource&) = delete;
  KeySource& operator=(const KeySource&) = delete;

  /// The key named `kid`, or nullptr. Throws TokenError(keys_unavailable) when the URL's keys
  /// were never fetched and cannot be now.
  std::shared_ptr<const Jwk> find(std::string_view kid);

  /// Fetches that happened (tests watch the rate limit).
  std::size_t fetches() const;

 private:
  // Fetches when allowed; returns the set to search (possibly the old one).
  std::shared_ptr<const KeySet> refresh_if_due(bool unknown_kid);

  const JwtAuthOptions options_;
  std::unique_ptr<detail::HttpEngine> engine_;  // URL only
  mutable std::mutex mutex_;                    // guards the members below
  std::shared_ptr<const KeySet> keys_;
  Clock::time_point fetched_at_{};    // when keys_ were fetched
  Clock::time_point attempted_at_{};  // the last fetch, successful or not
  bool attempted_ = false;
  std::string last_error_;
  std::size_t fetches_ = 0;
  std::mutex fetch_mutex_;  // one fetch at a time; taken before mutex_
};

}  // namespace mcpclass::transport::jwt

// The JWK Set from a file or a URL, with the fetch rate limit.
#include "transport/server/jwt/key_source.hpp"

#include "net/http_client.hpp"
#include "transport/server/jwt/token.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mcpclass::transport::jwt {

namespace {

KeySet read_file(const JwtAuthOptions& o) {
  std::ifstream in(o.jwks_file, std::ios::binary);
  if (!in) throw std::runtime_error("JWT: cannot read jwks_file '" + o.jwks_file + "'");
  std::string text(o.max_jwks_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > o.max_jwks_bytes)
    throw std::runtime_error("JWT: jwks_file '" + o.jwks_file + "' is larger than " +
                             std::to_string(o.max_jwks_bytes) + " bytes");
  try {
    return parse_jwks(text, o.max_jwks_keys);
  } catch (const JwksError& e) {
    throw std::runtime_error("JWT: jwks_file '" + o.jwks_file + "': " + e.what());
  }
}

}  // namespace

KeySource::KeySource(const JwtAuthOptions& options) : options_(options) {
  if (options_.jwks_file.empty() == options_.jwks_url.empty())
    throw std::runtime_error("JWT: set exactly one of jwks_file and jwks_url");
  if (!options_.jwks_file.empty()) {
    keys_ = std::make_shared<const KeySet>(read_file(options_));
    return;
  }
  detail::HttpUrl url;
  try {
    url = detail::parse_http_url(options_.jwks_url);
  } catch (const std::exception& e) {
    throw std::runtime_error("JWT: jwks_url: " + std::string(e.what()));
  }
  // Keys fetched in the clear could be swapped on the way: only to this machine.
  if (!url.tls && !detail::is_loopback_host(url.host))
    throw std::runtime_error("JWT: jwks_url must be https:// (http:// only to a loopback host)");
  engine_ = std::make_unique<detail::HttpEngine>(options_.jwks_timeout, options_.jwks_ca_file,
                                                 options_.max_jwks_bytes);
  if (url.tls) engine_->prepare_tls();
}

KeySource::~KeySource() {
  if (engine_) engine_->stop();
}

std::size_t KeySource::fetches() const {
  std::lock_guard lock(mutex_);
  return fetches_;
}

std::shared_ptr<const KeySet> KeySource::refresh_if_due(bool unknown_kid) {
  auto due = [&](Clock::time_point now) {
    if (!attempted_) return true;
    if (now - attempted_at_ < options_.jwks_refetch_interval) return false;
    return unknown_kid || !keys_ || now - fetched_at_ >= options_.jwks_max_age;
  };
  {
    std::lock_guard lock(mutex_);
    if (!engine_ || !due(Clock::now())) return keys_;
  }
  std::lock_guard fetching(fetch_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (!due(Clock::now())) return keys_;  // another thread fetched meanwhile
    attempted_ = true;
    attempted_at_ = Clock::now();
    ++fetches_;
  }
  std::string error;
  std::shared_ptr<const KeySet> fetched;
  try {
    detail::HttpRequest req;
    req.method = "GET";
    const auto url = detail::parse_http_url(options_.jwks_url);
    req.target = url.target;
    req.headers.emplace_back("Accept", "application/json");
    req.timeout = options_.jwks_timeout;
    auto result = engine_->perform(url, std::move(req));
    if (result.error)
      error = result.error.message;
    else if (result.head.status != 200)
      error = "HTTP " + std::to_string(result.head.status);
    else
      fetched = std::make_shared<const KeySet>(parse_jwks(result.body, options_.max_jwks_keys));
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mutex_);
  if (fetched) {
    keys_ = std::move(fetched);
    fetched_at_ = attempted_at_;
    last_error_.clear();
  } else {
    last_error_ = error;  // the old keys, if any, stay in use
  }
  return keys_;
}

std::shared_ptr<const Jwk> KeySource::find(std::string_view kid) {
  auto lookup = [&](const std::shared_ptr<const KeySet>& set) -> std::shared_ptr<const Jwk> {
    if (!set) return nullptr;
    const auto it = set->find(kid);
    // Aliasing: the key lives as long as its set.
    return it == set->end() ? nullptr : std::shared_ptr<const Jwk>(set, &it->second);
  };
  auto set = refresh_if_due(false);
  if (auto key = lookup(set)) return key;
  set = refresh_if_due(true);
  if (!set) {
    std::lock_guard lock(mutex_);
    throw TokenError(TokenError::Kind::keys_unavailable,
                     "the authorization server's signing keys could not be fetched: " +
                         last_error_.substr(0, 200));
  }
  return lookup(set);
}

}  // namespace mcpclass::transport::jwt

// The JWK Set from a file or a URL, with the fetch rate limit.
#include "transport/server/jwt/key_source.hpp"

#include "transport/server/jwt/token.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mcpclass::transport::server::jwt {

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
  try {
    url_ = net::parse_http_url(options_.jwks_url);
  } catch (const std::exception& e) {
    throw std::runtime_error("JWT: jwks_url: " + std::string(e.what()));
  }
  // Keys fetched in the clear could be swapped on the way: only to this machine.
  if (!url_.tls && !net::is_loopback_host(url_.host))
    throw std::runtime_error("JWT: jwks_url must be https:// (http:// only to a loopback host)");
  engine_ = std::make_unique<net::HttpEngine>(options_.jwks_timeout, options_.jwks_ca_file,
                                              options_.max_jwks_bytes);
  if (url_.tls) engine_->prepare_tls();
  // The first fetch, waited for here (the server's start, not an I/O thread): the first
  // requests find the keys. The exchange's own deadline (jwks_timeout) ends the wait.
  std::unique_lock lock(mutex_);
  refetch_if_due(lock, false);
  fetch_done_.wait(lock, [this] { return !fetching_; });
}

KeySource::~KeySource() {
  if (engine_) engine_->stop();  // a fetch under way ends ("cancelled") before this returns
}

std::size_t KeySource::fetches() const {
  std::lock_guard lock(mutex_);
  return fetches_;
}

void KeySource::refetch_if_due(std::unique_lock<std::mutex>& lock, bool unknown_kid) {
  const auto now = Clock::now();
  if (!engine_ || fetching_) return;
  if (attempted_ && (now - attempted_at_ < options_.jwks_refetch_interval ||
                     (!unknown_kid && keys_ && now - fetched_at_ < options_.jwks_max_age)))
    return;
  attempted_ = true;
  attempted_at_ = now;
  fetching_ = true;
  ++fetches_;
  lock.unlock();  // the engine may end the exchange at once, on its thread, in fetched()
  net::HttpRequest req;
  req.method = "GET";
  req.target = url_.target;
  req.headers.emplace_back("Accept", "application/json");
  req.timeout = options_.jwks_timeout;
  auto status = std::make_shared<int>(0);
  auto body = std::make_shared<std::string>();
  net::ExchangeCallbacks callbacks;
  callbacks.on_head = [status](const net::HttpHead& head) { *status = head.status; };
  callbacks.on_data = [body](std::string_view data) { body->append(data); };
  callbacks.on_end = [this, status, body](const net::HttpError& error) {
    fetched(*status, *body, error.message);
  };
  try {
    engine_->start(url_, std::move(req), std::move(callbacks));
  } catch (const std::exception& e) {  // the engine is stopping
    fetched(0, "", e.what());
  }
  lock.lock();
}

void KeySource::fetched(int status, const std::string& body, const std::string& error) {
  std::string problem = error;
  std::shared_ptr<const KeySet> set;
  if (problem.empty() && status != 200) problem = "HTTP " + std::to_string(status);
  if (problem.empty()) {
    try {
      set = std::make_shared<const KeySet>(parse_jwks(body, options_.max_jwks_keys));
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (set) {
      keys_ = std::move(set);
      fetched_at_ = attempted_at_;
      last_error_.clear();
    } else {
      last_error_ = problem;  // the old keys, if any, stay in use
    }
    fetching_ = false;
  }
  fetch_done_.notify_all();
}

std::shared_ptr<const Jwk> KeySource::find(std::string_view kid) {
  std::unique_lock lock(mutex_);
  auto lookup = [&]() -> std::shared_ptr<const Jwk> {
    if (!keys_) return nullptr;
    const auto it = keys_->find(kid);
    // Aliasing: the key lives as long as its set.
    return it == keys_->end() ? nullptr : std::shared_ptr<const Jwk>(keys_, &it->second);
  };
  if (auto key = lookup()) {
    refetch_if_due(lock, false);  // an old set is renewed in the background
    return key;
  }
  refetch_if_due(lock, true);
  if (auto key = lookup()) return key;  // a fetch that ended at once
  if (fetching_)
    throw TokenError(TokenError::Kind::keys_pending,
                     keys_ ? "the token's kid is not among the authorization server's signing "
                             "keys known now; they are being fetched again"
                           : "the authorization server's signing keys are being fetched");
  if (!keys_)
    throw TokenError(TokenError::Kind::keys_unavailable,
                     "the authorization server's signing keys could not be fetched: " +
                         last_error_.substr(0, 200));
  return nullptr;
}

}  // namespace mcpclass::transport::server::jwt

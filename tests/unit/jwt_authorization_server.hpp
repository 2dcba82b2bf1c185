// Test helper: an OAuth authorization server on 127.0.0.1 (a real socket, one request per
// connection) that issues JWT access tokens by client credentials (client_secret_basic) and
// publishes its keys as a JWK Set: RFC 8414 metadata, POST /token, GET /jwks.
// Clients: "router" may have any scope it asks for; "reader" gets at most "mcp".
// Thread-safety: the server runs its own thread; every member may be called from any thread.
#pragma once

#include "jwt_test_keys.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace mcpclass::test {

class JwtAuthorizationServer {
 public:
  explicit JwtAuthorizationServer(TestKey key) : keys_{std::move(key)} {
    using boost::asio::ip::tcp;
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { run(); });
  }
  ~JwtAuthorizationServer() {
    stop_ = true;
    release_jwks();
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket wake(ioc_);
    wake.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    thread_.join();
  }
  JwtAuthorizationServer(const JwtAuthorizationServer&) = delete;
  JwtAuthorizationServer& operator=(const JwtAuthorizationServer&) = delete;

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// The key tokens are signed with now (and published first in the JWK Set).
  TestKey signing_key() const {
    std::lock_guard lock(mutex_);
    return keys_.front();
  }
  /// Signs with `key` from now on, publishing it beside the old ones.
  void rotate(TestKey key) {
    std::lock_guard lock(mutex_);
    keys_.insert(keys_.begin(), std::move(key));
  }
  int issued() const { return issued_; }
  int jwks_fetches() const { return jwks_fetches_; }
  /// GET /jwks answered (fetches less the one held, if any).
  int jwks_answers() const { return jwks_answers_; }
  /// From now on a GET /jwks is counted, then held (and with it this server) until release().
  void hold_jwks() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  void release_jwks() {
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
    }
    released_.notify_all();
  }
  /// The scopes of the last token issued.
  std::string last_scope() const {
    std::lock_guard lock(mutex_);
    return last_scope_;
  }

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  void run() {
    while (!stop_) {
      boost::asio::ip::tcp::socket socket(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stop_) continue;
      boost::beast::flat_buffer buffer;
      Request req;
      boost::beast::http::read(socket, buffer, req, ec);
      if (ec) continue;
      Response res = handle(req);
      res.set(boost::beast::http::field::connection, "close");
      res.prepare_payload();
      boost::beast::http::write(socket, res, ec);
      socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    }
  }

  static Response reply(unsigned status, const boost::json::value& body) {
    Response res{static_cast<boost::beast::http::status>(status), 11};
    res.set(boost::beast::http::field::content_type, "application/json");
    res.body() = boost::json::serialize(body);
    return res;
  }

  static std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        out.push_back(' ');
      } else if (s[i] == '%' && i + 2 < s.size()) {
        out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  }

  static std::map<std::string, std::string> form(std::string_view body) {
    std::map<std::string, std::string> out;
    while (!body.empty()) {
      const auto amp = body.find('&');
      const std::string_view pair = body.substr(0, amp);
      const auto eq = pair.find('=');
      if (eq != std::string_view::npos)
        out[percent_decode(pair.substr(0, eq))] = percent_decode(pair.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      body.remove_prefix(amp + 1);
    }
    return out;
  }

  static std::string basic_user(std::string_view authorization) {
    if (!authorization.starts_with("Basic ")) return {};
    std::string b64(authorization.substr(6));
    std::string out(b64.size(), '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(b64.data()),
                                  static_cast<int>(b64.size()));
    if (n < 0) return {};
    out.resize(static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '\0') out.pop_back();  // the padding's zero bytes
    return out;
  }

  Response handle(const Request& req) {
    namespace json = boost::json;
    const std::string target(req.target());
    if (req.method() == boost::beast::http::verb::get &&
        target == "/.well-known/oauth-authorization-server") {
      return reply(200, json::object{{"issuer", base()},
                                     {"token_endpoint", base() + "/token"},
                                     {"jwks_uri", base() + "/jwks"},
                                     {"grant_types_supported", json::array{"client_credentials"}},
                                     {"token_endpoint_auth_methods_supported",
                                      json::array{"client_secret_basic"}}});
    }
    if (req.method() == boost::beast::http::verb::get && target == "/jwks") {
      ++jwks_fetches_;
      std::unique_lock lock(mutex_);
      released_.wait(lock, [this] { return !hold_ || stop_; });
      ++jwks_answers_;
      json::array list;
      for (const auto& k : keys_) list.emplace_back(k.jwk());
      return reply(200, json::object{{"keys", std::move(list)}});
    }
    if (req.method() == boost::beast::http::verb::post && target == "/token") {
      const std::string user = basic_user(req[boost::beast::http::field::authorization]);
      const std::string client = user.substr(0, user.find(':'));
      if (user != "router:router-secret" && user != "reader:reader-secret")
        return reply(401, json::object{{"error", "invalid_client"}});
      auto f = form(req.body());
      if (f["grant_type"] != "client_credentials")
        return reply(400, json::object{{"error", "unsupported_grant_type"}});
      // "reader" is granted no more than "mcp", whatever it asks for.
      std::string scope;
      std::istringstream asked(f["scope"]);
      for (std::string s; asked >> s;)
        if (client == "router" || s == "mcp") scope += (scope.empty() ? "" : " ") + s;
      json::object claims{
          {"iss", base()},          {"sub", client},
          {"client_id", client},    {"aud", f["resource"]},
          {"iat", epoch_seconds()}, {"exp", epoch_seconds(std::chrono::seconds(3600))},
          {"scope", scope}};
      std::lock_guard lock(mutex_);
      ++issued_;
      last_scope_ = scope;
      return reply(200, json::object{{"access_token", sign_token(keys_.front(), claims)},
                                     {"token_type", "Bearer"},
                                     {"expires_in", 3600},
                                     {"scope", scope}});
    }
    return reply(404, json::object{{"error", "not_found"}});
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_{ioc_};
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> issued_{0};
  std::atomic<int> jwks_fetches_{0};
  std::atomic<int> jwks_answers_{0};
  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool hold_ = false;
  std::vector<TestKey> keys_;
  std::string last_scope_;
  std::thread thread_;
};

}  // namespace mcpclass::test

// libFuzzer target: the socket-free half of the HTTP request path. Raw bytes go through the Beast
// request parser with the server's default header/body limits (as http_connection.cpp sets them),
// then every pure function the connection applies to a parsed request: the Host/Origin/bearer/
// Accept/Content-Type guards (http_guard.hpp) and the REST router dialect (router_request, and
// router_reply on whatever the body parses to). The Connection class itself is bound to a TCP
// socket and is not reached here (tests/unit/test_http_server.cpp drives it over loopback).
#include "transport/server/http/guard.hpp"
#include "transport/server/http/router_dialect.hpp"

#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using namespace mcpclass::transport::server;

std::string_view field(const http::request<http::string_body>& req, http::field f) {
  const auto it = req.find(f);
  if (it == req.end()) return {};
  return {it->value().data(), it->value().size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(4 * 1024 * 1024);
  parser.header_limit(16 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty() && !parser.is_done()) {
    const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    if (ec == http::error::need_more) break;
    if (ec) return 0;
    if (used == 0) break;
    rest.remove_prefix(used);
  }
  if (!parser.is_done()) {
    // As Beast's read does at end of stream: put_eof only once some bytes were parsed.
    if (!parser.got_some()) return 0;
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
  }
  const auto& req = parser.get();
  static const std::vector<std::string> hosts{"localhost", "127.0.0.1", "[::1]", "example.com"};
  static const std::vector<std::string> origins{"http://localhost:3000"};
  const std::string_view host = field(req, http::field::host);
  (void)host_without_port(host);
  (void)is_local_host(host_without_port(host));
  (void)host_allowed(host, hosts);
  (void)host_allowed(host, {});
  (void)origin_allowed(field(req, http::field::origin), origins);
  (void)origin_allowed(field(req, http::field::origin), {});
  (void)bearer_matches(field(req, http::field::authorization), "s3cret-token");
  (void)media_type_is(field(req, http::field::content_type), "application/json");
  (void)accepts(field(req, http::field::accept), "text/event-stream");
  (void)accepts(field(req, http::field::accept), "application/json");

  const std::string_view target(req.target().data(), req.target().size());
  constexpr std::string_view prefix = "/mcp/";
  if (target.substr(0, prefix.size()) == prefix) {
    auto built = router_request(target.substr(prefix.size()), req.body(), {});
    if (auto* message = std::get_if<json::value>(&built)) (void)json::serialize(*message);
  }
  // router_reply on the body read as an engine answer (a result, an error, or anything else).
  boost::system::error_code jec;
  json::value answer = json::parse(req.body(), jec);
  if (!jec) (void)router_reply(answer);
  (void)router_reply(std::nullopt);
  (void)router_reply(std::nullopt, false);
  return 0;
}

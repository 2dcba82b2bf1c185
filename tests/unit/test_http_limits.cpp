// Slow clients against the HTTP transport with small configured timeouts: a client that dribbles
// its headers (or body) byte by byte slower than the read timeout is cut, and the server answers
// the next request correctly. Also header blocks over max_header_bytes (431).
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"

#include <doctest/doctest.h>
#include <poll.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using namespace mcpclass;

struct LimitServer {
  LimitServer(std::chrono::milliseconds read_timeout, std::chrono::milliseconds idle_timeout,
              std::size_t max_header_bytes = 16 * 1024) {
    server = server::Server::create({}, pool.executor());
    server::Tool echo;
    echo.name = "echo";
    echo.description = "Echoes text";
    echo.input_schema = json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},
                                        "required":["text"]})")
                            .as_object();
    echo.handler = [](const json::object& args, server::RequestContext&) {
      return server::ToolResult::text(std::string(args.at("text").as_string()));
    };
    server->add_tool(echo);
    transport::HttpServerOptions options;
    options.read_timeout = read_timeout;
    options.idle_timeout = idle_timeout;
    options.max_header_bytes = max_header_bytes;
    http = std::make_unique<transport::HttpServer>(server, options);
    http->start();
    port = http->port();
  }
  ~LimitServer() { http->stop(); }

  util::ThreadPool pool{2};
  std::shared_ptr<server::Server> server;
  std::unique_ptr<transport::HttpServer> http;
  unsigned short port = 0;
};

std::string echo_request(unsigned short port, const std::string& text,
                         const std::string& extra_headers = {}) {
  const std::string body = R"({"name":"echo","arguments":{"text":")" + text + R"("}})";
  return "POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra_headers + "\r\n" + body;
}

// Reads one response from `socket`; returns its status and body.
std::pair<unsigned, std::string> read_response(tcp::socket& socket, beast::flat_buffer& buffer) {
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  return {res.result_int(), res.body()};
}

// Writes `data` one byte every `gap` until done or until the server answers or closes. Returns how
// many bytes were written.
std::size_t dribble(tcp::socket& socket, const std::string& data, std::chrono::milliseconds gap) {
  std::size_t sent = 0;
  for (; sent < data.size(); ++sent) {
    pollfd fd{socket.native_handle(), POLLIN, 0};
    if (::poll(&fd, 1, 0) > 0) break;  // a response or EOF: the server gave up on us
    boost::system::error_code ec;
    net::write(socket, net::buffer(&data[sent], 1), ec);
    if (ec) break;
    std::this_thread::sleep_for(gap);
  }
  return sent;
}

// Everything the server still sends until it closes; throws nothing.
std::string drain_until_closed(tcp::socket& socket, std::chrono::milliseconds limit) {
  std::string out;
  const auto deadline = Clock::now() + limit;
  char chunk[4096];
  while (Clock::now() < deadline) {
    pollfd fd{socket.native_handle(), POLLIN, 0};
    if (::poll(&fd, 1, 50) <= 0) continue;
    boost::system::error_code ec;
    const std::size_t n = socket.read_some(net::buffer(chunk), ec);
    if (ec) return out;  // EOF or reset: closed
    out.append(chunk, n);
  }
  out += "<still open>";
  return out;
}

void check_next_request_is_answered(unsigned short port, const std::string& text) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  net::write(socket, net::buffer(echo_request(port, text)));
  beast::flat_buffer buffer;
  const auto [status, body] = read_response(socket, buffer);
  CHECK(status == 200);
  CHECK(json::parse(body).at("content").at(0).at("text") == text.c_str());
}

}  // namespace

TEST_CASE("http limits: headers sent byte by byte slower than the read timeout are cut") {
  LimitServer t(300ms, 300ms);
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), t.port});
  const std::string request = echo_request(t.port, "slow");
  const std::size_t header_size = request.find("\r\n\r\n") + 4;
  // 40 ms a byte: the headers alone would take several seconds.
  const auto started = Clock::now();
  const std::size_t sent = dribble(socket, request.substr(0, header_size), 40ms);
  const std::string rest = drain_until_closed(socket, 3s);
  const auto elapsed = Clock::now() - started;
  CHECK(sent < header_size);  // cut before the headers were complete
  CHECK(rest.find("<still open>") == std::string::npos);
  CHECK(rest.find("HTTP/1.1 200") == std::string::npos);
  CHECK(elapsed < 2s);
  check_next_request_is_answered(t.port, "next");
}

TEST_CASE("http limits: a body dribbled slower than the read timeout is cut") {
  LimitServer t(300ms, 5s);
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), t.port});
  const std::string request = echo_request(t.port, std::string(200, 'x'));
  const std::size_t header_size = request.find("\r\n\r\n") + 4;
  net::write(socket, net::buffer(request.substr(0, header_size)));
  const auto started = Clock::now();
  const std::size_t sent = dribble(socket, request.substr(header_size), 20ms);
  const std::string rest = drain_until_closed(socket, 3s);
  CHECK(sent < request.size() - header_size);
  CHECK(rest.find("<still open>") == std::string::npos);
  CHECK(rest.find("HTTP/1.1 200") == std::string::npos);
  CHECK(Clock::now() - started < 2s);
  check_next_request_is_answered(t.port, "after-body");
}

TEST_CASE(
    "http limits: a fast client within the timeout is served, a slow second request on "
    "the same keep-alive connection is cut") {
  LimitServer t(2s, 300ms);
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), t.port});
  // Byte by byte but well within the 2 s read timeout: served.
  const std::string first = echo_request(t.port, "quick");
  const std::size_t header_size = first.find("\r\n\r\n") + 4;
  net::write(socket, net::buffer(first.substr(0, header_size)));
  CHECK(dribble(socket, first.substr(header_size), 5ms) == first.size() - header_size);
  beast::flat_buffer buffer;
  const auto [status, body] = read_response(socket, buffer);
  CHECK(status == 200);
  CHECK(json::parse(body).at("content").at(0).at("text") == "quick");
  // The next request on the same connection dribbles past the idle timeout: cut.
  const std::string second = echo_request(t.port, "late");
  const std::size_t sent = dribble(socket, second, 40ms);
  CHECK(sent < second.find("\r\n\r\n"));
  CHECK(drain_until_closed(socket, 3s).find("<still open>") == std::string::npos);
  check_next_request_is_answered(t.port, "fresh");
}

TEST_CASE(
    "http limits: a header block over max_header_bytes gets 431, then the next request is "
    "answered") {
  for (const std::size_t limit : {std::size_t{1024}, std::size_t{16 * 1024}}) {
    CAPTURE(limit);
    LimitServer t(5s, 5s, limit);
    // Just under the limit is served; a header line that alone exceeds it is refused.
    const std::string fits = "X-Padding: " + std::string(limit / 2, 'a') + "\r\n";
    const std::string too_big = "X-Padding: " + std::string(limit + 1, 'b') + "\r\n";
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), t.port});
    net::write(socket, net::buffer(echo_request(t.port, "fits", fits)));
    beast::flat_buffer buffer;
    const auto [ok_status, ok_body] = read_response(socket, buffer);
    CHECK(ok_status == 200);
    net::write(socket, net::buffer(echo_request(t.port, "too-big", too_big)));
    const auto [status, body] = read_response(socket, buffer);
    CHECK(status == 431);
    CHECK(json::parse(body).at("error").at("message") == "Request Header Fields Too Large");
    CHECK(drain_until_closed(socket, 3s).find("<still open>") == std::string::npos);
    check_next_request_is_answered(t.port, "after-431");
  }
}

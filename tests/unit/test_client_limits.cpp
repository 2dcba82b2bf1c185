// A hostile HTTP peer against the client side: a body, an SSE line, a chunk-size line or a
// trailer section that never ends. The client stops reading at max_message_bytes (bodies) or
// max_header_bytes (everything Beast buffers whole) with a clear error instead of buffering
// what it is sent.
#include "net/http_client.hpp"
#include "net/http_response.hpp"
#include "net/sse_parser.hpp"

#include <doctest/doctest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include <atomic>
#include <future>
#include <string>
#include <thread>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace mcpclass::net;

constexpr std::size_t kPeerCap = 256u << 20;  // the peer gives up here (the client never would)

// Answers one request with `head`, then streams `filler` until the client goes away or kPeerCap.
class EndlessPeer {
 public:
  explicit EndlessPeer(std::string head, std::string_view filler = "x")
      : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    std::string block;
    while (block.size() < (1u << 20)) block += filler;
    thread_ = std::thread([this, head = std::move(head), block = std::move(block)] {
      tcp::socket socket(ioc_);
      acceptor_.accept(socket);
      std::string request;
      asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n");
      boost::system::error_code ec;
      asio::write(socket, asio::buffer(head), ec);
      while (!ec && sent_ < kPeerCap) sent_ += asio::write(socket, asio::buffer(block), ec);
    });
  }
  ~EndlessPeer() { thread_.join(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::size_t sent() const { return sent_; }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<std::size_t> sent_{0};
  std::thread thread_;
};

HttpRequest get() {
  HttpRequest req;
  req.method = "GET";
  req.target = "/";
  req.timeout = std::chrono::seconds(60);
  return req;
}

}  // namespace

TEST_CASE("client limits: a JSON body that never ends fails at max_message_bytes") {
  HttpError error;
  std::size_t sent = 0;
  {
    EndlessPeer peer(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
    HttpEngine engine(std::chrono::seconds(5), "", 1 << 20);
    const auto result = engine.perform(parse_http_url(peer.url()), get());
    engine.stop();
    error = result.error;
    CHECK(result.body.size() <= (1u << 20) + 16384);
    sent = peer.sent();
  }
  CHECK(error.kind == HttpFailure::too_large);
  CHECK(error.message == "response body larger than 1048576 bytes (max_message_bytes)");
  CHECK(sent < kPeerCap);
}

TEST_CASE("client limits: an SSE line that never ends fails at max_message_bytes") {
  HttpError error;
  std::size_t sent = 0;
  {
    EndlessPeer peer(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: ");
    HttpEngine engine(std::chrono::seconds(5), "");
    SseParser parser(1 << 20);
    std::promise<HttpError> ended;
    ExchangeCallbacks cb;
    cb.on_data = [&](std::string_view d) { parser.feed(d, [](SseEvent) {}); };
    cb.on_end = [&](const HttpError& e) { ended.set_value(e); };
    engine.start(parse_http_url(peer.url()), get(), std::move(cb));
    error = ended.get_future().get();
    engine.stop();
    sent = peer.sent();
  }
  CHECK(error.kind == HttpFailure::too_large);
  CHECK(error.message == "SSE event larger than 1048576 bytes (max_message_bytes)");
  CHECK(sent < kPeerCap);
}

namespace {

// What read_response() makes of `answer` from an in-memory peer that then closes, read
// `read_size` bytes at a time (0: as much as the buffer takes).
struct MemoryRead {
  int heads = 0;
  std::string body;
  std::exception_ptr error;
};
MemoryRead read_from_memory(const std::string& answer, const ResponseLimits& limits,
                            std::size_t read_size = 0) {
  asio::io_context ioc;
  boost::beast::test::stream peer(ioc, answer);
  if (read_size > 0) peer.read_size(read_size);
  peer.close_remote();
  boost::beast::flat_buffer buffer(limits.header_bytes);
  struct Sink {
    MemoryRead& out;
    bool cancelled() const { return false; }
    void head(const HttpHead&) { ++out.heads; }
    void data(std::string_view bytes) { out.body += bytes; }
  };
  MemoryRead out;
  Sink sink{out};
  asio::co_spawn(ioc, read_response(peer, buffer, limits, sink),
                 [&](std::exception_ptr e, bool) { out.error = e; });
  ioc.run();
  return out;
}

}  // namespace

// Beast 1.81 parses complete header lines as they arrive and applies header_limit only to what
// is still unparsed: a read that leaves at most 3 bytes of a line unparsed never trips it (found
// by fuzz_http_client). read_response counts what was parsed.
TEST_CASE("client limits: a header block parsed a few lines at a time stops at max_header_bytes") {
  // 64-byte reads, each ending 3 bytes into a line: 83 bytes of fields passed a 64-byte limit.
  const std::string answer =
      "HTTP/1.1 200 OK\r\nX-First-Field: 0000000\r\nX-Second: 00000000\r\n"
      "X-Third-Field-Is-Longer: 0000000000000\r\nX-Fourth: 0000000\r\n\r\n";
  const auto read = read_from_memory(answer, {.header_bytes = 64, .body_bytes = 100});
  CHECK(read.heads == 0);
  REQUIRE(read.error);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(read.error),
                       "no response: header block larger than 64 bytes (max_header_bytes)",
                       HttpClientError);
}

// Beast keeps a chunk-size line (with its extensions) and the trailer section buffered until
// they end: only the read buffer's bound stops them.
TEST_CASE(
    "client limits: a chunk extension or a trailer that never ends fails at max_header_bytes") {
  const char* heads[] = {
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n1;x=",
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n2\r\n{}\r\n0\r\nx-trailer: ",
  };
  for (const char* head : heads) {
    CAPTURE(head);
    HttpEngine::Result result;
    std::size_t sent = 0;
    {
      EndlessPeer peer(head);
      HttpEngine engine(std::chrono::seconds(5), "", 1 << 20, 0, 8192);
      result = engine.perform(parse_http_url(peer.url()), get());
      engine.stop();
      sent = peer.sent();
    }
    CHECK(result.error.kind == HttpFailure::too_large);
    CHECK(result.error.message ==
          "response broken: response header, chunk-size line or trailer section larger than 8192 "
          "bytes (max_header_bytes)");
    CHECK(sent < kPeerCap);
  }
}

TEST_CASE("client limits: the SSE parser bounds an event's data, not only its lines") {
  SseParser parser(64);
  int events = 0;
  parser.feed("data: " + std::string(50, 'a') + "\n\n", [&](SseEvent) { ++events; });
  CHECK(events == 1);
  parser.feed("data: " + std::string(40, 'a') + "\n", [&](SseEvent) { ++events; });
  CHECK_THROWS_WITH_AS(parser.feed("data: " + std::string(40, 'b') + "\n", [](SseEvent) {}),
                       "SSE event larger than 64 bytes (max_message_bytes)", std::length_error);
}

TEST_CASE("client limits: an empty chunked body read a byte at a time ends the answer") {
  // Beast 1.81 asserts `n >= 5` on "0\r\n" + one byte (boostorg/beast#2861): a Debug build
  // aborted here before src/net/boost_assert_handler.cpp passed over that one assertion.
  const std::string answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n";
  const auto read = read_from_memory(answer, {.header_bytes = 1024, .body_bytes = 100}, 1);
  CHECK_FALSE(read.error);
  CHECK(read.heads == 1);
  CHECK(read.body.empty());
}

// libFuzzer target: a hostile HTTP peer against the client engine's response reading. The input is
// what the peer sends after the request (any framing, 1xx, repeated headers, chunk extensions,
// trailers, an early close), delivered in reads of a fuzzed size through Beast's in-memory test
// stream to read_response(), the coroutine HttpEngine runs on its TCP and TLS streams. Property:
// no crash, only HttpClientError escapes, and memory stays within the limits: the read buffer
// never grows past max_header_bytes, the header fields fit in it, a non-SSE body never passes
// max_body_bytes, and the head reported is a final one (status >= 200), at most once.
#include "net/http_response.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using namespace mcpclass::net;

void check(bool property) {
  if (!property) std::abort();
}

struct Sink {
  const beast::flat_buffer& buffer;
  const ResponseLimits& limits;
  bool event_stream = false;
  int heads = 0;
  std::size_t body = 0;

  bool cancelled() const { return false; }
  void bounded() const {
    check(buffer.capacity() <= limits.header_bytes);
    check(buffer.size() <= buffer.max_size());
  }
  void head(const HttpHead& h) {
    bounded();
    check(++heads == 1);
    check(h.status >= 200 && h.status <= 999);
    std::size_t bytes = 0;
    for (const auto& [name, value] : h.headers) bytes += name.size() + value.size();
    check(bytes <= limits.header_bytes);
    event_stream = h.header("content-type").find("text/event-stream") != std::string::npos;
  }
  void data(std::string_view d) {
    bounded();
    check(heads == 1 && !d.empty());
    body += d.size();
    if (!event_stream) check(body <= limits.body_bytes);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // Byte 0: the peer's read size (1..64 bytes per read, or whatever the reader asks for).
  // Byte 1: the limits, small enough that the fuzzer reaches them.
  static constexpr std::size_t kHeaderLimits[] = {64, 512, 4096, 65536};
  static constexpr std::size_t kBodyLimits[] = {0, 100, 4096, 1 << 20};
  const ResponseLimits limits{.header_bytes = kHeaderLimits[data[1] & 3],
                              .body_bytes = kBodyLimits[(data[1] >> 2) & 3]};
  asio::io_context ioc;
  beast::test::stream peer(ioc,
                           std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2));
  if (data[0] & 0x40) peer.read_size(1 + (data[0] & 0x3f));
  peer.close_remote();  // the peer's bytes end with end of stream

  beast::flat_buffer buffer(limits.header_bytes);
  Sink sink{buffer, limits};
  bool finished = false;
  asio::co_spawn(ioc, read_response(peer, buffer, limits, sink),
                 [&](std::exception_ptr error, bool reusable) {
                   finished = true;
                   sink.bounded();
                   if (!error) {
                     check(sink.heads == 1);
                     (void)reusable;
                     return;
                   }
                   try {
                     std::rethrow_exception(error);
                   } catch (const HttpClientError& e) {
                     check(e.kind() != HttpFailure::none && *e.what() != '\0');
                   }
                 });
  ioc.run();
  check(finished);
  return 0;
}

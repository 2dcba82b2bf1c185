// net::OtlpExporter against a collector that refuses connections (docs/tracing.md): failed
// exports back off, so spans arriving meanwhile are dropped and counted instead of each batch
// being encoded and sent to the dead port.
#include "mcpclass/net/otlp_exporter.hpp"

#include <doctest/doctest.h>

#include <boost/asio.hpp>

#include <chrono>
#include <string>
#include <thread>

using namespace mcpclass;
using namespace std::chrono_literals;

namespace {

// A loopback port nothing listens on: bound, then closed.
unsigned short refusing_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

util::SpanRecord span() {
  util::SpanRecord s;
  s.name = "test";
  s.start_unix_nano = s.end_unix_nano = util::SpanRecord::now_unix_nano();
  return s;
}

}  // namespace

TEST_CASE("otlp exporter: a refusing collector is tried once per backoff, not once per batch") {
  net::OtlpOptions options;
  options.endpoint = "http://127.0.0.1:" + std::to_string(refusing_port()) + "/v1/traces";
  options.batch = 4;
  options.max_spans = 8;
  options.interval = 50ms;
  net::OtlpExporter exporter(options);
  for (int i = 0; i < 4; ++i) exporter.record(span());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (exporter.counts().failed == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  REQUIRE(exporter.counts().failed == 4);
  // 25 more batches' worth over about 125 ms. Without the backoff each batch was sent as it
  // filled: 100 more failed, none dropped. With it: tries at about 50 and 150 ms.
  for (int round = 0; round < 25; ++round) {
    for (int i = 0; i < 4; ++i) exporter.record(span());
    std::this_thread::sleep_for(5ms);
  }
  const auto c = exporter.counts();
  MESSAGE("failed " << c.failed << ", dropped " << c.dropped << ", queued " << c.queued);
  CHECK(c.failed <= 40);
  CHECK(c.dropped >= 50);
  CHECK(c.failed + c.dropped + c.queued + c.exported == 104);
  exporter.stop();
  const auto end = exporter.counts();
  CHECK(end.exported == 0);
  CHECK(end.failed + end.dropped == 104);  // every span accounted for at shutdown
}

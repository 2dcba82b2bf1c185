// libFuzzer target: the client's text/event-stream parser. The input is split into chunks at
// points chosen by its first bytes, so one event stream is fed the way the network delivers it;
// the events (and whether the parser refuses an over-long line or event) must not depend on where
// the chunks break, and never carry empty data.
#include "net/sse_parser.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using mcpclass::net::SseEvent;
using mcpclass::net::SseParser;

// Small, so long lines and long multi-line data (hostile framing) reach it: the parser must
// refuse at the same byte however the stream is chunked.
constexpr std::size_t kMaxEventBytes = 256;

struct Outcome {
  std::vector<SseEvent> events;
  bool refused = false;
  std::optional<std::string> last_id;
  std::optional<long> retry;
};

template <typename Split>
Outcome run(std::string_view stream, Split&& next_chunk) {
  Outcome out;
  SseParser parser(kMaxEventBytes);
  auto on_event = [&](SseEvent e) {
    if (e.data.empty()) {
      std::fprintf(stderr, "fuzz_sse: event with empty data\n");
      std::abort();
    }
    out.events.push_back(std::move(e));
  };
  while (!stream.empty()) {
    const std::size_t n = std::min(stream.size(), next_chunk());
    try {
      parser.feed(stream.substr(0, n), on_event);
    } catch (const std::length_error&) {
      out.refused = true;
      break;
    }
    stream.remove_prefix(n);
  }
  out.last_id = parser.last_event_id();
  out.retry = parser.retry_ms();
  return out;
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.events.size() != b.events.size() || a.last_id != b.last_id || a.retry != b.retry ||
      a.refused != b.refused) {
    return false;
  }
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const auto& x = a.events[i];
    const auto& y = b.events[i];
    if (x.type != y.type || x.data != y.data || x.id != y.id) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::string_view splits(reinterpret_cast<const char*>(data), 4);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 4, size - 4);
  const Outcome whole = run(stream, [&] { return stream.size(); });
  std::size_t i = 0;
  const Outcome chunked = run(stream, [&] {
    return static_cast<std::size_t>(static_cast<unsigned char>(splits[i++ % splits.size()]) % 17) +
           1;
  });
  const Outcome bytewise = run(stream, [] { return std::size_t{1}; });
  if (!same(whole, chunked) || !same(whole, bytewise)) {
    std::fprintf(stderr, "fuzz_sse: events depend on where the chunks break\n");
    std::abort();
  }
  return 0;
}

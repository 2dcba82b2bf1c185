#include "mcpclass/util/trace_context.hpp"

#include <algorithm>
#include <random>

namespace mcpclass::util {

namespace {

constexpr std::size_t kTraceparentLength = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2
constexpr std::size_t kMaxTracestate = 512;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not HEXDIGLC
}

// `text` into `out` (2 hex digits a byte); false on anything but lower-case hex.
template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// Not cryptographic: ids need only be unlikely to collide.
template <std::size_t N>
void fill_random(std::array<std::uint8_t, N>& out) {
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }()};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      auto word = generator();
      for (std::size_t j = i; j < std::min(N, i + 8); ++j, word >>= 8)
        out[j] = static_cast<std::uint8_t>(word);
    }
  } while (all_zero(out));
}

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view traceparent,
                                             std::string_view tracestate) {
  if (traceparent.size() < kTraceparentLength) return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!read_hex(traceparent.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  // Version 00 is exactly its four fields; a later one may append fields after a '-'.
  if (version[0] == 0
          ? traceparent.size() != kTraceparentLength
          : traceparent.size() > kTraceparentLength && traceparent[kTraceparentLength] != '-')
    return std::nullopt;
  if (traceparent[2] != '-' || traceparent[35] != '-' || traceparent[52] != '-')
    return std::nullopt;
  TraceParent parent;
  std::array<std::uint8_t, 1> flags{};
  if (!read_hex(traceparent.substr(3, 32), parent.trace_id) ||
      !read_hex(traceparent.substr(36, 16), parent.parent_id) ||
      !read_hex(traceparent.substr(53, 2), flags) || all_zero(parent.trace_id) ||
      all_zero(parent.parent_id))
    return std::nullopt;
  parent.flags = flags[0];
  if (tracestate.size() <= kMaxTracestate && printable(tracestate))
    parent.tracestate = std::string(tracestate);
  return parent;
}

std::string hex_of(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string SpanContext::traceparent() const {
  return "00-" + trace_id_hex() + "-" + span_id_hex() + "-" + hex_of(&flags, 1);
}

std::string SpanContext::trace_id_hex() const {
  return hex_of(trace_id.data(), trace_id.size());
}

std::string SpanContext::span_id_hex() const {
  return hex_of(span_id.data(), span_id.size());
}

bool SpanContext::has_parent() const {
  return !all_zero(parent_id);
}

SpanContext SpanContext::child() const {
  SpanContext span = *this;
  span.parent_id = span_id;
  fill_random(span.span_id);
  return span;
}

SpanContext start_span(const std::optional<TraceParent>& parent) {
  SpanContext span;
  if (parent) {
    span.trace_id = parent->trace_id;
    span.parent_id = parent->parent_id;
    span.flags = parent->flags;
    span.tracestate = parent->tracestate;
  } else {
    fill_random(span.trace_id);
  }
  fill_random(span.span_id);
  return span;
}

}  // namespace mcpclass::util

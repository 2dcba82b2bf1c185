// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// a caller sends (HTTP headers, or the same keys in an MCP request's `_meta`, SEP-414), and the
// spans mcpclass opens under them. A malformed traceparent is not an error: it is ignored and
// the work starts a trace of its own.
// Thread-safety: the functions are reentrant; the values are plain data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::util {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

/// The header names, also the `_meta` keys of MCP's 2026-07-28 revision (SEP-414).
inline constexpr std::string_view kTraceparentHeader = "traceparent";
inline constexpr std::string_view kTracestateHeader = "tracestate";

/// What a caller's traceparent and tracestate said.
struct TraceParent {
  TraceId trace_id{};
  SpanId parent_id{};
  std::uint8_t flags = 0;
  std::string tracestate;  ///< as received (empty: none, or too long to keep)
};

/// Parses `traceparent` as W3C Trace Context level 1 does: version 00 exactly
/// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>` in lower-case hex, neither id all
/// zeros; a later version (not ff) by the same first four fields, followed by nothing or '-'.
/// nullopt when it is anything else. `tracestate` is kept only with a valid traceparent, and only
/// when it is at most 512 bytes of printable ASCII (W3C lets a receiver drop a longer one).
std::optional<TraceParent> parse_traceparent(std::string_view traceparent,
                                             std::string_view tracestate = {});

/// One unit of work of a trace.
struct SpanContext {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_id{};  ///< all zeros: the root of its trace
  std::uint8_t flags = 1;
  std::string tracestate;

  /// `00-<trace id>-<this span's id>-<flags>`: what this span's callees are sent.
  std::string traceparent() const;
  std::string trace_id_hex() const;
  std::string span_id_hex() const;
  bool has_parent() const;
  /// The W3C `sampled` flag (bit 0 of flags): only sampled spans are recorded.
  bool sampled() const { return (flags & 1) != 0; }
  /// A new span of the same trace whose parent is this one.
  SpanContext child() const;
};

/// A span under `parent` (its trace id, flags and tracestate), or the root of a new trace
/// (sampled) when there is none. Ids are random (a per-thread generator seeded from
/// std::random_device).
SpanContext start_span(const std::optional<TraceParent>& parent);

/// Lower-case hex of `bytes`.
std::string hex_of(const std::uint8_t* bytes, std::size_t size);

}  // namespace mcpclass::util

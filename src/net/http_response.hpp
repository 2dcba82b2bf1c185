// Internal: reading one HTTP/1.1 response from a peer that may be hostile, on any Beast stream
// (TCP, TLS, or an in-memory stream in tests/fuzz/fuzz_http_client.cpp). Everything the peer
// fills is bounded by bytes: the read buffer (and with it each chunk-size line, chunk extension
// and trailer section, which Beast keeps buffered until they end), the header blocks of the final
// and the informational responses together, and a non-SSE body.
// Thread-safety: read_response() runs on the stream's executor; none of it is shared.
#pragma once

#include "net/http_client.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::net {

struct ResponseLimits {
  /// The read buffer, and all header blocks of one response together (1xx included).
  std::size_t header_bytes = util::limits::kMaxClientHeaderBytes;
  /// The body, unless it is an SSE stream (bounded per event by SseParser).
  std::size_t body_bytes = util::limits::kMaxClientMessageBytes;
};

inline std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// The kind of a read error: a peer that exceeded a limit, broke the protocol, or the connection.
inline HttpFailure read_failure_kind(const boost::beast::error_code& ec) {
  namespace http = boost::beast::http;
  if (ec == boost::beast::error::timeout) return HttpFailure::timeout;
  if (ec == http::error::header_limit || ec == http::error::body_limit ||
      ec == http::error::buffer_overflow)
    return HttpFailure::too_large;
  if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return HttpFailure::protocol;
  return HttpFailure::broken;
}

/// Why a read failed, naming the limit a peer exceeded.
inline std::string read_failure_message(const boost::beast::error_code& ec,
                                        const ResponseLimits& limits) {
  namespace http = boost::beast::http;
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
    return fmt::format(
        "response header, chunk-size line or trailer section larger than {} bytes "
        "(max_header_bytes)",
        limits.header_bytes);
  return ec.message();
}

/// Reads one response from `stream` (its request already written) into `sink`:
///   bool cancelled() const; void head(const HttpHead&); void data(std::string_view);
/// Informational responses (1xx) are skipped; a 101 is a protocol error (nothing here asks for
/// an upgrade). `buffer` is empty and its max_size() is limits.header_bytes. Returns whether the
/// connection may carry another exchange; throws HttpClientError.
template <class Stream, class Sink>
boost::asio::awaitable<bool> read_response(Stream& stream, boost::beast::flat_buffer& buffer,
                                           const ResponseLimits& limits, Sink& sink) {
  namespace http = boost::beast::http;
  constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
  auto fail = [&](const boost::beast::error_code& ec, std::string_view what) {
    return HttpClientError(read_failure_kind(ec),
                           fmt::format("{}: {}", what, read_failure_message(ec, limits)));
  };

  std::optional<http::response_parser<http::buffer_body>> parser;
  std::size_t header_bytes = 0;
  int status = 0;
  for (;;) {
    parser.emplace();
    parser->body_limit(boost::none);
    parser->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(limits.header_bytes - header_bytes, UINT32_MAX)));
    // async_read_header, counting: Beast parses complete header lines as they arrive and
    // applies header_limit only to what is still unparsed, so lines that come a few at a time
    // would pass any limit.
    while (!parser->is_header_done()) {
      auto [hec, hn] = co_await http::async_read_some(stream, buffer, *parser, tuple);
      if (hec) throw fail(hec, "no response");
      header_bytes += hn;
      if (header_bytes > limits.header_bytes)
        throw HttpClientError(HttpFailure::too_large,
                              fmt::format("no response: header block larger than {} bytes "
                                          "(max_header_bytes)",
                                          limits.header_bytes));
    }
    status = static_cast<int>(parser->get().result_int());
    if (status == 101)
      throw HttpClientError(HttpFailure::protocol,
                            "the peer answered 101 Switching Protocols to a plain request");
    if (status >= 200) break;
    // 1xx: an interim answer (103 Early Hints, 100 Continue); the final one follows. Their
    // header blocks share one budget, so a stream of them cannot run forever.
    if (header_bytes >= limits.header_bytes)
      throw HttpClientError(HttpFailure::too_large,
                            fmt::format("informational (1xx) responses larger than {} bytes "
                                        "(max_header_bytes)",
                                        limits.header_bytes));
  }
  HttpHead head;
  head.status = status;
  for (const auto& field : parser->get())
    head.headers.emplace_back(lower_ascii(field.name_string()), std::string(field.value()));
  if (!sink.cancelled()) sink.head(head);

  // An SSE stream may run for hours (its parser bounds each event); any other body is
  // buffered by the caller, so it is bounded here, while reading.
  const bool event_stream =
      head.header("content-type").find("text/event-stream") != std::string::npos;
  std::size_t body_bytes = 0;
  std::array<char, 16384> chunk{};
  while (!parser->is_done() && !sink.cancelled()) {
    parser->get().body().data = chunk.data();
    parser->get().body().size = chunk.size();
    // read_some: return with whatever arrived (SSE events are small and must not wait for
    // the buffer to fill up).
    auto [bec, bn] = co_await http::async_read_some(stream, buffer, *parser, tuple);
    if (bec == http::error::need_buffer) bec = {};
    const std::size_t got = chunk.size() - parser->get().body().size;
    body_bytes += got;
    if (!event_stream && body_bytes > limits.body_bytes)
      throw HttpClientError(
          HttpFailure::too_large,
          fmt::format("response body larger than {} bytes (max_message_bytes)", limits.body_bytes));
    if (got > 0 && !sink.cancelled()) sink.data(std::string_view(chunk.data(), got));
    if (bec) throw fail(bec, "response broken");
  }
  co_return parser->is_done() && parser->keep_alive() && buffer.size() == 0;
}

}  // namespace mcpclass::net

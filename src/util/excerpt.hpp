// Internal: what of a peer's text goes into an error message — a remote classifier's reply, an
// HTTP error body the transports or the token endpoint answered. It may be as large as the client
// takes (16 MiB), and its message travels into exceptions, JSON-RPC errors, `serve`'s 500 bodies
// and logs: at most its first kExcerptBytes go in, cut on a character boundary, and when the
// excerpt is shorter than the text, "… (N bytes)" says so.
// Thread-safety: pure; reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mcpclass::util {

/// The most bytes of a peer's text an error message quotes (before the "… (N bytes)" suffix).
inline constexpr std::size_t kExcerptBytes = 200;

/// At most `max_bytes` of `text`, valid UTF-8 whatever `text` holds (a byte that is not
/// part of a UTF-8 character becomes U+FFFD, a control character a space, so that neither a JSON
/// body nor a log line is broken by it), then "… (N bytes)" when some of `text` was left out.
std::string excerpt(std::string_view text, std::size_t max_bytes = kExcerptBytes);

}  // namespace mcpclass::util

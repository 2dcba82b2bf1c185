// Internal: what of a remote's reply goes into an error message. A reply may be as large as the
// client takes (16 MiB), and its message travels into exceptions, `serve`'s 500 bodies and logs:
// at most its first kReplyExcerptBytes go in, cut on a character boundary, and when the excerpt is
// shorter than the reply, "… (N bytes)" says so.
// Thread-safety: pure; reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mcpclass::remote::detail {

/// The most bytes of a remote's reply an error message quotes (before the "… (N bytes)" suffix).
inline constexpr std::size_t kReplyExcerptBytes = 200;

/// At most `max_bytes` of `reply`'s text, valid UTF-8 whatever `reply` holds (a byte that is not
/// part of a UTF-8 character becomes U+FFFD, a control character a space, so that neither a JSON
/// body nor a log line is broken by it), then "… (N bytes)" when some of `reply` was left out.
std::string reply_excerpt(std::string_view reply, std::size_t max_bytes = kReplyExcerptBytes);

}  // namespace mcpclass::remote::detail

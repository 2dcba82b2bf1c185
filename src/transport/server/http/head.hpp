// Internal: the bytes of a response head and of a chunk, written directly (as Beast would write
// them): a beast::http::response and an ostringstream cost a dozen allocations per answer.
// Thread-safety: pure functions; reentrant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::transport::server {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

/// One HTTP/1.1 chunk carrying `data`.
std::string chunk(std::string_view data);

/// A response head in three steps: the status line, Server and Content-Type (unless empty), with
/// room for `reserve` more bytes; then fields (framing ones dropped); then Connection: close unless
/// `keep_alive`, and Content-Length, or chunked without one.
std::string begin_head(unsigned status, std::string_view content_type, std::size_t reserve = 0);
void append_fields(std::string& out, const HeaderList& headers);
void end_head(std::string& out, bool keep_alive, std::optional<std::size_t> content_length);

}  // namespace mcpclass::transport::server

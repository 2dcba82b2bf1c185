#include "transport/server/http/head.hpp"

#include <boost/beast/http.hpp>

#include <charconv>

namespace mcpclass::transport::server {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

void append_number(std::string& out, std::size_t n, int base = 10) {
  char digits[20];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n, base).ptr);
}

}  // namespace

std::string chunk(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 24);
  append_number(out, data.size(), 16);
  out.append("\r\n").append(data).append("\r\n");
  return out;
}

std::string begin_head(unsigned status, std::string_view content_type, std::size_t reserve) {
  std::string out;
  out.reserve(160 + reserve);
  out.append("HTTP/1.1 ");
  append_number(out, status);
  out.append(" ")
      .append(http::obsolete_reason(static_cast<http::status>(status)))
      .append("\r\nServer: mcpclass\r\n");
  if (!content_type.empty()) out.append("Content-Type: ").append(content_type).append("\r\n");
  return out;
}

void append_fields(std::string& out, const HeaderList& headers) {
  for (const auto& [name, value] : headers) {
    // Framing is end_head()'s to write (a mounted app may pass its upstream's).
    if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
        beast::iequals(name, "connection"))
      continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
}

void end_head(std::string& out, bool keep_alive, std::optional<std::size_t> content_length) {
  if (!keep_alive) out.append("Connection: close\r\n");
  if (content_length) {
    out.append("Content-Length: ");
    append_number(out, *content_length);
    out.append("\r\n\r\n");
  } else {
    out.append("Transfer-Encoding: chunked\r\n\r\n");
  }
}

}  // namespace mcpclass::transport::server

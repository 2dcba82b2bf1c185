// libFuzzer target: what an MCP server or authorization server sends the OAuth client before
// any token exists: the WWW-Authenticate challenge, and the URLs its metadata names (resource,
// issuer, endpoints), which the client turns into metadata locations and origins. None may crash
// or hang; malformed URLs are exceptions the client reports.
#include "auth/metadata_urls.hpp"
#include "auth/www_authenticate.hpp"

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

using namespace mcpclass::client::auth;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const auto challenge = parse_www_authenticate(text);
      (void)challenge;
      break;
    }
    case 1:
      try {
        for (const auto& url : protected_resource_metadata_urls(text)) (void)origin_of(url);
        (void)canonical_resource(text);
        (void)resource_covers(text, text);
      } catch (const std::exception&) {
      }
      break;
    default:
      try {
        for (const auto& url : authorization_server_metadata_urls(text)) (void)origin_of(url);
        (void)query_param(text, "code");
        (void)with_query(text, {{"state", std::string(text)}});
      } catch (const std::exception&) {
      }
      break;
  }
  return 0;
}

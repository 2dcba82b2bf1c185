// The authorization "browser" of tests and unattended clients: the server must redirect at once.
#include "mcpclass/auth/oauth.hpp"
#include "net/http_client.hpp"

#include <fmt/format.h>

namespace mcpclass::auth {

std::string headless_authorization(const std::string& authorization_url,
                                   std::chrono::milliseconds timeout, const std::string& ca_file) {
  using namespace net;
  HttpUrl url;
  try {
    url = parse_http_url(authorization_url);
  } catch (const std::exception& e) {
    throw AuthorizationError("authorization", 0, "invalid_url", e.what());
  }
  HttpEngine engine(timeout, ca_file);
  HttpRequest req;
  req.method = "GET";
  req.target = url.target;
  req.timeout = timeout;
  const auto r = engine.perform(url, std::move(req));
  engine.stop();
  if (r.error)
    throw AuthorizationError("authorization", r.head.status, "",
                             fmt::format("GET {}: {}", url.origin(), r.error.message));
  const auto location = r.head.header("location");
  if (r.head.status / 100 != 3 || location.empty())
    throw AuthorizationError("authorization", r.head.status, "",
                             "the authorization endpoint did not redirect");
  return location;
}

}  // namespace mcpclass::auth

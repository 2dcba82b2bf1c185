// `server.http.auth.jwt`: read strictly, round-tripped, and turned into the transport's options.
#include "mcpclass/config/config.hpp"
#include "mcpclass/transport/server/http_server_config.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mcpclass;

namespace {

std::string jwt_error(const std::string& jwt_yaml) {
  try {
    config::parse_config("server:\n  http:\n    auth:\n      jwt:\n" + jwt_yaml);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("config: server.http.auth.jwt reads, round-trips and reaches the transport") {
  const auto c = config::parse_config(R"(
server:
  http:
    host: 0.0.0.0
    auth:
      jwt:
        resource: https://mcp.example/mcp
        issuer: https://auth.example
        authorization_servers: [https://auth.example]
        audience: [https://mcp.example/mcp, mcp-api]
        jwks_url: https://auth.example/jwks
        jwks_timeout: 2
        jwks_refetch_interval: 10
        jwks_max_age: 600
        max_jwks_bytes: 65536
        max_jwks_keys: 8
        leeway: 30
        max_token_bytes: 8192
        scopes:
          default: [mcp]
          tools:
            classify_text: [classify]
            list_categories: []
)");
  CHECK(config::parse_config(boost::json::serialize(c.to_json())).to_json() == c.to_json());

  const auto o = transport::server::read_http_server_options(c.server.http);
  CHECK(o.jwt.enabled());
  CHECK(o.jwt.resource == "https://mcp.example/mcp");
  CHECK(o.jwt.issuer == "https://auth.example");
  CHECK(o.jwt.audiences.size() == 2);
  CHECK(o.jwt.jwks_url == "https://auth.example/jwks");
  CHECK(o.jwt.jwks_timeout == std::chrono::seconds(2));
  CHECK(o.jwt.jwks_refetch_interval == std::chrono::seconds(10));
  CHECK(o.jwt.jwks_max_age == std::chrono::seconds(600));
  CHECK(o.jwt.max_jwks_bytes == 65536);
  CHECK(o.jwt.max_jwks_keys == 8);
  CHECK(o.jwt.leeway == std::chrono::seconds(30));
  CHECK(o.jwt.max_token_bytes == 8192);
  CHECK(o.jwt.required_scopes == std::vector<std::string>{"mcp"});
  CHECK(o.jwt.tool_scopes.at("classify_text") == std::vector<std::string>{"classify"});

  // Defaults: audience = resource (empty here), leeway 60 s, 16 KiB tokens.
  const auto d = transport::server::read_http_server_options(
      config::parse_config("server:\n  http:\n    auth:\n      jwt: {resource: "
                           "'https://m.example/mcp', issuer: 'https://a.example', "
                           "jwks_file: keys.json, audience: only-this}\n")
          .server.http);
  CHECK(d.jwt.audiences == std::vector<std::string>{"only-this"});
  CHECK(d.jwt.leeway == std::chrono::seconds(60));
  CHECK(d.jwt.max_token_bytes == 16 * 1024);
  CHECK(d.jwt.jwks_file == "keys.json");
  CHECK_FALSE(transport::server::read_http_server_options(config::default_config().server.http)
                  .jwt.enabled());
}

TEST_CASE("config: server.http.auth.jwt errors name the key") {
  const std::string base =
      "        resource: https://m.example/mcp\n"
      "        issuer: https://a.example\n";
  CHECK(jwt_error(base + "        jwks_file: k.json\n") == "(no error)");
  CHECK(jwt_error("        issuer: https://a.example\n        jwks_file: k.json\n") ==
        "server.http.auth.jwt.resource: is required");
  CHECK(jwt_error("        resource: https://m.example/mcp\n        jwks_file: k.json\n") ==
        "server.http.auth.jwt.issuer: is required");
  CHECK(jwt_error(base) == "server.http.auth.jwt: needs exactly one of jwks_file and jwks_url");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        jwks_url: https://a.example/k\n") ==
        "server.http.auth.jwt: needs exactly one of jwks_file and jwks_url");
  CHECK(jwt_error(base + "        jwks_url: ftp://a.example/k\n") ==
        "server.http.auth.jwt.jwks_url: must be an https:// (or http://) URL");
  CHECK(jwt_error("        resource: mcp\n        issuer: x\n        jwks_file: k\n") ==
        "server.http.auth.jwt.resource: must be an https:// (or http://) URL");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        leway: 5\n") ==
        "server.http.auth.jwt.leway: unknown key");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        max_token_bytes: 10\n") ==
        "server.http.auth.jwt.max_token_bytes: must be within [64, 1048576]");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        leeway: -1\n")
            .starts_with("server.http.auth.jwt.leeway"));
  CHECK(jwt_error(base + "        jwks_file: k.json\n        scopes: {default: ['a b']}\n") ==
        "server.http.auth.jwt.scopes.default: 'a b' is not a scope (no spaces, quotes or "
        "backslashes)");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        scopes: {tools: {classify_text: x}}\n")
            .starts_with("server.http.auth.jwt.scopes.tools.classify_text"));
  CHECK(jwt_error(base + "        jwks_file: k.json\n        scopes: {tool: {}}\n") ==
        "server.http.auth.jwt.scopes.tool: unknown key");
  CHECK(jwt_error(base + "        jwks_file: k.json\n        audience: ['']\n") ==
        "server.http.auth.jwt.audience: must not be empty");
}

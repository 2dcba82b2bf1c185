#include "mcpclass/transport/server/http_server_config.hpp"

#include "transport/server/jwt_auth_config.hpp"
#include "util/config_reader.hpp"
#include "util/env_reference.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>

namespace mcpclass::transport::server {

namespace strict = util::strict;
namespace json = boost::json;

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::vector<std::string> read_tokens_file(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  if (!in) strict::fail(key, "cannot read '" + file + "'");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    line = trim(std::move(line));
    if (!line.empty() && line.front() != '#') tokens.push_back(std::move(line));
  }
  if (tokens.empty()) strict::fail(key, "'" + file + "' holds no token");
  return tokens;
}

void read_auth(const json::value& v, const std::string& path, HttpSecrets secrets,
               HttpServerOptions& o) {
  strict::ObjectReader a(v, path);
  o.allowed_hosts = a.string_list("allowed_hosts").value_or(o.allowed_hosts);
  o.allowed_origins = a.string_list("allowed_origins").value_or(o.allowed_origins);
  const std::string tokens_key = a.path_of("bearer_tokens");
  for (auto& token : a.string_list("bearer_tokens").value_or(std::vector<std::string>{})) {
    if (token.empty()) strict::fail(tokens_key, "a token must not be empty");
    o.bearer_tokens.push_back(secrets == HttpSecrets::resolved
                                  ? util::resolve_env_reference(token, tokens_key)
                                  : std::move(token));
  }
  const auto file = a.string("bearer_tokens_file");
  if (file && !file->empty() && secrets == HttpSecrets::resolved)
    for (auto& token : read_tokens_file(*file, a.path_of("bearer_tokens_file")))
      o.bearer_tokens.push_back(std::move(token));
  o.allow_unauthenticated = a.boolean("allow_unauthenticated").value_or(o.allow_unauthenticated);
  if (const auto* jwt = a.get("jwt")) o.jwt = detail::read_jwt_auth_options(*jwt, a.path_of("jwt"));
  a.finish();
}

void read_limits(strict::ObjectReader& h, HttpServerOptions& o) {
  o.io_threads = h.count("io_threads", 1, 64).value_or(o.io_threads);
  o.max_sessions = h.count("max_sessions", 1).value_or(o.max_sessions);
  o.max_sse_streams = h.count("max_sse_streams", 1).value_or(o.max_sse_streams);
  o.max_sse_streams_per_client =
      h.count("max_sse_streams_per_client", 0).value_or(o.max_sse_streams_per_client);
  o.max_connections = h.count("max_connections", 1).value_or(o.max_connections);
  o.send_buffer_bytes =
      h.count("send_buffer_bytes", 0, 64 * 1024 * 1024).value_or(o.send_buffer_bytes);
  o.max_body_bytes = h.count("max_body_bytes", 1).value_or(o.max_body_bytes);
  o.max_header_bytes = h.count("max_header_bytes", 1).value_or(o.max_header_bytes);
  o.event_store_size = h.count("event_store_size", 0).value_or(o.event_store_size);
  o.event_store_bytes = h.count("event_store_bytes", 0).value_or(o.event_store_bytes);
  o.event_store_session_bytes =
      h.count("event_store_session_bytes", 0).value_or(o.event_store_session_bytes);
  o.event_store_total_bytes =
      h.count("event_store_total_bytes", 0).value_or(o.event_store_total_bytes);
  o.session_idle_timeout =
      h.seconds("session_idle_timeout", false).value_or(o.session_idle_timeout);
  o.read_timeout = h.seconds("read_timeout", false).value_or(o.read_timeout);
  o.idle_timeout = h.seconds("idle_timeout", false).value_or(o.idle_timeout);
  o.write_timeout = h.seconds("write_timeout", false).value_or(o.write_timeout);
  o.sse_heartbeat = h.seconds("sse_heartbeat", true).value_or(o.sse_heartbeat);
  o.shutdown_timeout = h.seconds("shutdown_timeout", true).value_or(o.shutdown_timeout);
  o.drain_grace = h.seconds("drain_grace", true).value_or(o.drain_grace);
  o.session_id_prefix = h.string("session_id_prefix").value_or(o.session_id_prefix);
  if (o.session_id_prefix.size() > 64 ||
      !std::all_of(o.session_id_prefix.begin(), o.session_id_prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      }))
    strict::fail(h.path_of("session_id_prefix"), "must be at most 64 of [A-Za-z0-9._-]");
}

}  // namespace

HttpServerOptions read_http_server_options(const json::object& section, const std::string& path,
                                           HttpSecrets secrets) {
  strict::ObjectReader h(section, path);
  HttpServerOptions o;
  o.port = kConfigHttpPort;
  o.host = h.string("host").value_or(o.host);
  if (o.host.empty()) strict::fail(h.path_of("host"), "must not be empty");
  if (const auto port = h.integer("port")) {
    if (*port < 0 || *port > std::numeric_limits<std::uint16_t>::max())
      strict::fail(h.path_of("port"), "must be within [0, 65535]");
    o.port = static_cast<unsigned short>(*port);
  }
  if (const auto* tls = h.get("tls")) {
    strict::ObjectReader t(*tls, h.path_of("tls"));
    o.tls_cert_file = t.string("cert_file").value_or("");
    o.tls_key_file = t.string("key_file").value_or("");
    t.finish();
    if (o.tls_cert_file.empty() || o.tls_key_file.empty())
      strict::fail(t.path(), "needs both cert_file and key_file");
  }
  if (const auto* auth = h.get("auth")) read_auth(*auth, h.path_of("auth"), secrets, o);
  read_limits(h, o);
  h.finish();
  return o;
}

}  // namespace mcpclass::transport::server

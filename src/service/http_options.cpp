#include "mcpclass/service/http_options.hpp"

#include "util/env_reference.hpp"

#include <fstream>

namespace mcpclass::service {

namespace {

constexpr const char* kTokensKey = "server.http.auth.bearer_tokens";
constexpr const char* kTokensFileKey = "server.http.auth.bearer_tokens_file";

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string resolve_token(const std::string& token) {
  return util::resolve_env_reference(token, kTokensKey);
}

std::vector<std::string> read_tokens_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config::ConfigError(kTokensFileKey, "cannot read '" + path + "'");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    line = trim(std::move(line));
    if (!line.empty() && line.front() != '#') tokens.push_back(std::move(line));
  }
  if (tokens.empty()) throw config::ConfigError(kTokensFileKey, "'" + path + "' holds no token");
  return tokens;
}

}  // namespace

transport::HttpServerOptions http_server_options(const config::HttpSettings& http) {
  transport::HttpServerOptions o;
  o.host = http.host;
  o.port = http.port;
  o.io_threads = http.io_threads.value_or(o.io_threads);
  o.max_sessions = http.max_sessions.value_or(o.max_sessions);
  o.max_sse_streams = http.max_sse_streams.value_or(o.max_sse_streams);
  o.event_store_session_bytes =
      http.event_store_session_bytes.value_or(o.event_store_session_bytes);
  o.max_sse_streams_per_client =
      http.max_sse_streams_per_client.value_or(o.max_sse_streams_per_client);
  o.max_connections = http.max_connections.value_or(o.max_connections);
  o.send_buffer_bytes = http.send_buffer_bytes.value_or(o.send_buffer_bytes);
  o.max_body_bytes = http.max_body_bytes.value_or(o.max_body_bytes);
  o.max_header_bytes = http.max_header_bytes.value_or(o.max_header_bytes);
  o.event_store_size = http.event_store_size.value_or(o.event_store_size);
  o.event_store_bytes = http.event_store_bytes.value_or(o.event_store_bytes);
  o.event_store_total_bytes = http.event_store_total_bytes.value_or(o.event_store_total_bytes);
  o.session_idle_timeout = http.session_idle_timeout.value_or(o.session_idle_timeout);
  o.read_timeout = http.read_timeout.value_or(o.read_timeout);
  o.idle_timeout = http.idle_timeout.value_or(o.idle_timeout);
  o.write_timeout = http.write_timeout.value_or(o.write_timeout);
  o.sse_heartbeat = http.sse_heartbeat.value_or(o.sse_heartbeat);
  o.shutdown_timeout = http.shutdown_timeout.value_or(o.shutdown_timeout);
  o.drain_grace = http.drain_grace.value_or(o.drain_grace);
  o.session_id_prefix = http.session_id_prefix;
  o.tls_cert_file = http.tls_cert_file;
  o.tls_key_file = http.tls_key_file;
  o.allowed_hosts = http.auth.allowed_hosts;
  o.allowed_origins = http.auth.allowed_origins;
  for (const auto& token : http.auth.bearer_tokens) o.bearer_tokens.push_back(resolve_token(token));
  if (!http.auth.bearer_tokens_file.empty())
    for (auto& token : read_tokens_file(http.auth.bearer_tokens_file))
      o.bearer_tokens.push_back(std::move(token));
  o.allow_unauthenticated = http.auth.allow_unauthenticated;
  if (const auto& jwt = http.auth.jwt) {
    auto& j = o.jwt;
    j.resource = jwt->resource;
    j.issuer = jwt->issuer;
    j.authorization_servers = jwt->authorization_servers;
    j.audiences = jwt->audience;
    j.jwks_file = jwt->jwks_file;
    j.jwks_url = jwt->jwks_url;
    j.jwks_ca_file = jwt->jwks_ca_file;
    j.jwks_timeout = jwt->jwks_timeout.value_or(j.jwks_timeout);
    j.jwks_refetch_interval = jwt->jwks_refetch_interval.value_or(j.jwks_refetch_interval);
    j.jwks_max_age = jwt->jwks_max_age.value_or(j.jwks_max_age);
    j.max_jwks_bytes = jwt->max_jwks_bytes.value_or(j.max_jwks_bytes);
    j.max_jwks_keys = jwt->max_jwks_keys.value_or(j.max_jwks_keys);
    if (jwt->leeway) j.leeway = std::chrono::duration_cast<std::chrono::seconds>(*jwt->leeway);
    j.max_token_bytes = jwt->max_token_bytes.value_or(j.max_token_bytes);
    j.required_scopes = jwt->default_scopes;
    j.tool_scopes = jwt->tool_scopes;
  }
  return o;
}

}  // namespace mcpclass::service
